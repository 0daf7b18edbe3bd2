"""The coupon page's check panel says whether a signed checkpoint covers the coupon."""

import json
from datetime import datetime

import pytest
from django.core.management import call_command
from django.test import Client

from coupons.evidence.checkpoint_keys import key_id, signing_key
from coupons.models import LedgerCheckpoint
from coupons.services import coupon_issue, coupon_void
from coupons.write.declared import declare
from operations.checkpoint import ledger_checkpoint
from tests.api.roles import machine, person
from tests.coupons.checkpoints.test_journal_log import sequence

pytestmark = pytest.mark.django_db


@pytest.fixture
def page():
    client = Client()
    client.force_login(person("sam", group="support"))
    return lambda coupon: client.get(f"/coupons/{coupon.pk}/").content.decode()


def test_before_any_checkpoint_no_verified_checkpoint_covers_the_coupon(redeemed, page):
    assert "No verified checkpoint: no checkpoint whose signature holds covers this coupon " \
        "yet." in page(redeemed)


def test_a_coupon_issued_after_the_checkpoint_is_newer_than_it(
        redeemed, page, template, ctx, checkpoint_dir):
    sequence()
    ledger_checkpoint()
    later = coupon_issue(template_id=template.pk, user_id="u2", ctx=ctx).coupon

    assert "Newer than the last checkpoint: no signed checkpoint covers this coupon yet." in \
        page(later)


def forged_rows() -> list[int]:
    """What any login that may INSERT can write: checkpoint rows nobody signed, one numbered
    2147483647 and one dated 2030, under the real key's id (the app role cannot choose their
    row ids: setup_db_roles grants INSERT without the id column). Answers their ids."""
    real_key_id = key_id(signing_key().public_key())
    forged = []
    declare(actor="user:mallory")  # its login declares what it likes; the signature is what counts
    for number, when in ((2147483647, "2026-06-01T12:00:00+00:00"),
                         (50, "2030-01-01T00:00:00+00:00")):
        body = {"number": number, "journal_size": 1, "journal_root": "0" * 64, "time": when}
        forged.append(LedgerCheckpoint.objects.create(
            number=number, signed_at=datetime.fromisoformat(when), key_id=real_key_id,
            body=json.dumps(body), signature="AAAA").pk)
    return sorted(forged)


def test_forged_checkpoint_rows_never_reach_the_page_the_proof_or_the_signer(
        redeemed, page, checkpoint_dir, capsys):
    reader = machine("auditor", capabilities=["read_coupons"])
    forged = forged_rows()

    assert "No verified checkpoint" in page(redeemed)
    assert reader.get(f"/api/v1/coupons/{redeemed.pk}/proof").json()["checkpoint"] is None

    sequence()
    with pytest.raises(SystemExit) as exit_:
        call_command("ledger_checkpoint")

    assert exit_.value.code == 3  # signed, with findings
    err = capsys.readouterr().err
    for pk in forged:
        assert f"FINDING: checkpoint row {pk} numbered " in err, err
    text = page(redeemed)
    assert "Covered by checkpoint 1 signed at <time datetime=\"2026-06-01T12:00:00+00:00\"" in text
    assert "2030" not in text
    proof = reader.get(f"/api/v1/coupons/{redeemed.pk}/proof")
    assert proof.status_code == 200
    assert json.loads(proof.json()["checkpoint"]["signed"])["number"] == 1
    assert sorted(checkpoint_dir.glob("checkpoint-*")) == [checkpoint_dir /
                                                             "checkpoint-00000001.json"]
    with pytest.raises(SystemExit):  # the signer goes on: its own chain, its own numbers
        call_command("ledger_checkpoint")
    assert LedgerCheckpoint.objects.filter(number=2).exists()


def test_a_checkpointed_coupon_is_covered_by_it(redeemed, page, checkpoint_dir):
    sequence()
    ledger_checkpoint()

    assert "Covered by checkpoint 1 signed at <time datetime=\"2026-06-01T12:00:00+00:00\"" in \
        page(redeemed)


def test_a_change_after_the_checkpoint_is_newer_than_it(redeemed, page, ctx, checkpoint_dir):
    sequence()
    ledger_checkpoint()
    coupon_void(coupon_id=redeemed.pk, expected_version=3, reason="fraud", ctx=ctx)

    text = page(redeemed)
    assert "Versions up to v3 are covered by checkpoint 1 signed at" in text
    assert "the changes since are newer than the last checkpoint." in text
