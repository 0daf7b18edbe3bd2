import json

import pytest
from django.core.management import call_command

from coupons.evidence.checkpoint_keys import public_key_text, signing_key
from coupons.evidence.ledger_chain import GENESIS, seal
from coupons.models import CouponOperation
from coupons.services import coupon_redeem
from tests.api.roles import machine
from tests.app_role import past_the_triggers
from tests.conftest import lock


@pytest.fixture
def checkpoint_dir(tmp_path, settings):
    settings.LEDGER_CHECKPOINT_DIR = str(tmp_path / "checkpoints")
    return tmp_path / "checkpoints"


@pytest.fixture
def reader():
    """A service client that may read coupons, and so their proofs."""
    return machine("auditor", capabilities=["read_coupons"])


@pytest.fixture
def public_key():
    return public_key_text(signing_key().public_key())


@pytest.fixture
def redeemed(coupon, ctx):
    """Coupon 'u1': ISSUE, LOCK by order-A, REDEEM with pay-A (v3)."""
    _, proof = lock(coupon, ctx, order_id="order-A")
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="pay-A", ctx=ctx)
    coupon.refresh_from_db()
    return coupon


def checkpoint_file(directory, number: int = 1):
    return directory / f"checkpoint-{number:08d}.json"


def verify(path, *args) -> tuple[int, str]:
    """verify_ledger's exit status and output."""
    from io import StringIO

    out = StringIO()
    try:
        call_command("verify_ledger", "--checkpoint", str(path), *args, stdout=out)
    except SystemExit as exit_:
        return exit_.code, out.getvalue()
    return 0, out.getvalue()


def rewrite_and_rechain(coupon, version: int, **changes) -> None:
    """What an owner who switched the triggers off does: change one row, then re-chain it and
    every later row with the project's own chain function, so the chain check passes."""
    prev_hash = GENESIS
    with past_the_triggers():
        for op in CouponOperation.objects.filter(coupon=coupon).order_by("to_version"):
            if op.to_version == version:
                for name, value in changes.items():
                    setattr(op, name, value)
            seal(op, prev_hash)
            CouponOperation.objects.filter(pk=op.pk).update(
                **(changes if op.to_version == version else {}),
                prev_hash=op.prev_hash, content_hash=op.content_hash)
            prev_hash = op.content_hash


def save_json(path, data) -> str:
    path.write_text(json.dumps(data))
    return str(path)
