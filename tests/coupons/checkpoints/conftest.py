import json

import pytest
from django.core.management import call_command

from coupons.evidence.checkpoint_keys import public_key_text, signing_key
from coupons.evidence.journal import content_hash, content_text, row_facts
from coupons.models import CouponOperation, JournalEntry
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


def rewrite(coupon, version: int, **changes) -> None:
    """What an owner who switched the triggers off does: change one ledger row and its journal
    entry (whose hash anyone can compute) to agree, so the row folds from its entry."""
    op = CouponOperation.objects.get(coupon=coupon, to_version=version)
    for name, value in changes.items():
        setattr(op, name, value)
    with past_the_triggers():
        CouponOperation.objects.filter(pk=op.pk).update(**changes)
        rewrite_entry(op)


def rewrite_entry(row) -> None:
    """The row's first journal entry made to say what the row says now (triggers off)."""
    entry = JournalEntry.objects.get(subject=row._meta.label_lower, subject_id=row.pk,
                                     parent_hash__isnull=True)
    body = json.loads(entry.content)
    del body["id"]
    body["row"] = row_facts(row)
    text = content_text(row.pk, body)
    JournalEntry.objects.filter(pk=entry.pk).update(content=text,
                                                    content_hash=content_hash(text))


def save_json(path, data) -> str:
    path.write_text(json.dumps(data))
    return str(path)
