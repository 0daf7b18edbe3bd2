"""The check's watermark (coupons/evidence/check_watermark.py): it saves work, never hides a break
the check is there to find.

The attacker is the owner's login with the triggers off, who knows every hash function but holds
neither SECRET_KEY nor the signing key. Each test lets cron sign a head and a check verify the
coupon, so the next check resumes after a watermark resting on that head, then changes rows
above or below the head, the head, or the watermark itself, and asks again. Below the newest
verified signed head, a rewrite is the signer's and `verify_ledger`'s to name; above it, and
wherever no head verifies, the check reads and names it.
"""

import copy
import io
import json
import re
import uuid

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import CommandError, call_command
from django.db import connection

from coupons import clock as coupons_clock
from coupons.evidence.check_watermark import resume_point, stored, watermark_seal
from coupons.evidence.checkpoint_keys import key_id, public_key_text, signing_key
from coupons.evidence.replay import coupon_check
from coupons.models import (
    CheckWatermark,
    CommandRejection,
    CouponLock,
    CouponOperation,
    LedgerCheckpoint,
)
from coupons.services import CommandContext, coupon_release
from coupons.write.declared import declare
from tests.app_role import past_the_triggers
from tests.coupons.checkpoints.conftest import checkpoint_file, verify
from tests.signed_head import sequence, sign_head
from tests.timeline.history import bulk_history, locked_by, long_history, refused

pytestmark = pytest.mark.django_db
CTX = CommandContext(actor="client:order-service")


@pytest.fixture
def heads(tmp_path):
    """Signs a head over everything written so far; the journal size it signed."""
    return lambda: sign_head(tmp_path / "checkpoints")


@pytest.fixture
def verified(coupon, clock, api, heads):
    """A coupon with 41 rows (leases, refused late redeems, redeems returned by refunds), a
    signed head over them, and a check through the API that verified them: a watermark at v41
    resting on that head."""
    coupon = long_history(coupon, clock, ledger_rows=41, every=4)
    signed = heads()
    assert check(api, coupon)["ok"] is True
    watermark = CheckWatermark.objects.get(coupon=coupon)
    assert (watermark.through_version, watermark.signed_size) == (41, signed)
    return coupon


def check(api, coupon) -> dict:
    return api.get(f"/api/v1/coupons/{coupon.pk}/check").json()


def resume_at(coupon):
    """Where the next check resumes, resting on the head the watermark rests on."""
    row = stored(coupon, signing_key().public_key())
    return resume_point(coupon, row, row.signed_size)


def journal_problems(api, coupon) -> list[str]:
    body = check(api, coupon)
    assert body["ok"] is False
    return next(item for item in body["invariants"] if item["number"] == 9)["problems"]


def later_rows(coupon, clock, count: int) -> None:
    """`count` more rows through the services: leases, all released but the last."""
    for n in range(count):
        proof = locked_by(coupon, f"later-{n}")
        clock.advance(seconds=1)
        if n < count - 1:
            coupon_release(coupon_id=coupon.pk, lease=proof, ctx=CTX, reason="order closed")
    coupon.refresh_from_db()


def edit_row(coupon, version: int) -> CouponOperation:
    """The row at `version` rewritten past the triggers, its journal left as it was."""
    row = CouponOperation.objects.get(coupon=coupon, to_version=version)
    with past_the_triggers():
        CouponOperation.objects.filter(pk=row.pk).update(actor="attacker")
    return row


def names_the_edit(row) -> str:
    return (f'coupon operation {row.pk}: actor is "attacker", its journal says '
            f'"{row.actor}"')


def test_the_check_resumes_after_the_watermark_and_answers_as_the_full_check(
        verified, clock, api, heads):
    """Rows after the head are read, and read again on the next check, until a head covers
    them: only then does the watermark move over them."""
    later_rows(verified, clock, 3)  # v42–v46
    resume = resume_at(verified)
    assert (resume.through_version, [op.to_version for op in resume.operations]) == (
        41, [42, 43, 44, 45, 46])

    answer = check(api, verified)

    assert answer == {**coupon_check(verified, full=True).as_dict(), "diagnosis": answer[
        "diagnosis"]}
    assert (answer["ok"], answer["replayed_state"], answer["replayed_version"]) == (
        True, "LOCKED", 46)
    assert CheckWatermark.objects.get(coupon=verified).through_version == 41

    heads()
    assert check(api, verified)["ok"] is True
    assert CheckWatermark.objects.get(coupon=verified).through_version == 46


def test_a_row_above_the_newest_signed_head_is_read_on_every_check(
        verified, clock, api, broken_on_purpose):
    """A check already held over v42–v46, which have log positions but no head signs them
    yet: a rewrite of v44 past the triggers is named by the next check."""
    later_rows(verified, clock, 3)
    sequence()
    assert check(api, verified)["ok"] is True

    row = edit_row(verified, 44)
    broken_on_purpose.add(verified.pk)

    assert names_the_edit(row) in journal_problems(api, verified)


@pytest.mark.parametrize("version", [2, 41], ids=["an-early-row", "the-watermarks-own-row"])
def test_a_row_below_the_signed_head_rewritten_is_named_by_verify_ledger(
        verified, api, tmp_path, broken_on_purpose, version):
    """Below the head the check trusts the head: the rewrite is the auditor's to name, by
    the row's journal, and `coupon_check --full` names it too."""
    row = edit_row(verified, version)
    broken_on_purpose.add(verified.pk)

    assert check(api, verified)["ok"] is True  # what the watermark trusts: the signed head
    status, out = verify(checkpoint_file(tmp_path / "checkpoints"), "--public-key",
                         public_key_text(signing_key().public_key()))
    assert status == 1
    assert (f'BROKEN coupon {verified.pk}: coupons.couponoperation {row.pk}: actor is '
            f'"attacker", its journal says "{row.actor}"') in out
    assert names_the_edit(row) in coupon_check(verified, full=True).violations[9]


def test_a_row_below_the_signed_head_deleted_is_named_by_verify_ledger(
        verified, api, tmp_path, broken_on_purpose):
    """The row and its outbox event gone, its journal entry left: the signed entry has no row."""
    row = CouponOperation.objects.get(coupon=verified, to_version=2)
    with past_the_triggers(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM coupons_outboxevent WHERE operation_id = %s", [row.pk])
        cursor.execute("DELETE FROM coupons_couponoperation WHERE id = %s", [row.pk])
    broken_on_purpose.add(verified.pk)

    status, out = verify(checkpoint_file(tmp_path / "checkpoints"), "--public-key",
                         public_key_text(signing_key().public_key()))
    assert status == 1
    assert f"coupons.couponoperation {row.pk}: has journal entries but no row" in out
    assert "the ledger has a gap" in " ".join(coupon_check(verified, full=True).violations[4])


def test_without_a_verified_head_every_check_reads_every_row(coupon, clock, api,
                                                            broken_on_purpose):
    coupon = long_history(coupon, clock, ledger_rows=41, every=4)
    sequence()  # log positions, but no head signs them
    assert check(api, coupon)["ok"] is True
    assert not CheckWatermark.objects.filter(coupon=coupon).exists()

    row = edit_row(coupon, 2)
    broken_on_purpose.add(coupon.pk)

    assert names_the_edit(row) in journal_problems(api, coupon)


def test_a_forged_checkpoint_row_gives_the_watermark_no_trust(coupon, clock, api,
                                                             broken_on_purpose):
    """What any login that may INSERT can write: a checkpoint under the real key's id that
    claims to sign a journal of a billion entries, with a signature nobody made."""
    coupon = long_history(coupon, clock, ledger_rows=41, every=4)
    body = {"number": 7, "time": "2026-06-01T12:00:00+00:00", "journal_size": 10**9,
            "journal_root": "0" * 64}
    declare(actor="user:mallory")
    LedgerCheckpoint.objects.create(
        number=7, signed_at=coupons_clock.now(), key_id=key_id(signing_key().public_key()),
        body=json.dumps(body), signature="AAAA")
    sequence()
    assert check(api, coupon)["ok"] is True
    assert not CheckWatermark.objects.filter(coupon=coupon).exists()

    row = edit_row(coupon, 2)
    broken_on_purpose.add(coupon.pk)

    assert names_the_edit(row) in journal_problems(api, coupon)


def test_a_head_that_no_longer_verifies_gives_the_watermark_no_trust(
        verified, api, settings, broken_on_purpose):
    """The verifying key is another one now (LEDGER_PUBLIC_KEY): the head the watermark rests
    on does not verify under it, so the check reads every row again."""
    settings.LEDGER_PUBLIC_KEY = public_key_text(Ed25519PrivateKey.generate().public_key())
    row = edit_row(verified, 2)
    broken_on_purpose.add(verified.pk)

    assert names_the_edit(row) in journal_problems(api, verified)


def test_a_watermark_sealed_without_the_servers_secret_is_ignored(
        verified, api, settings, broken_on_purpose):
    """The owner moves the coupon row to VOIDED and writes a watermark whose snapshot says the
    ledger replays to VOIDED, sealed under a guessed SECRET_KEY: the seal fails, the check
    reads the whole ledger and names the row."""
    row = CheckWatermark.objects.get(coupon=verified)
    snapshot = copy.deepcopy(row.snapshot)
    snapshot["replayed"]["state"] = "VOIDED"
    real_secret = settings.SECRET_KEY
    settings.SECRET_KEY = "a-guess-at-the-servers-secret-key"
    seal = watermark_seal(verified.pk, row.through_version, row.head_hash, row.signed_size,
                          snapshot)
    settings.SECRET_KEY = real_secret
    with past_the_triggers(), connection.cursor() as cursor:
        cursor.execute("UPDATE coupons_usercoupon SET status = 'VOIDED' WHERE id = %s",
                       [verified.pk])
        CheckWatermark.objects.filter(coupon=verified).update(snapshot=snapshot, seal=seal)
    broken_on_purpose.add(verified.pk)

    body = check(api, verified)
    problems = next(item for item in body["invariants"] if item["number"] == 7)["problems"]
    assert "ledger replays to AVAILABLE v41, row says VOIDED v41" in problems


def test_a_watermark_edited_without_the_key_is_ignored_and_rewritten(verified, api):
    """A snapshot that claims another state does not reach the report: the check verifies the
    whole ledger again and stores what it found."""
    row = CheckWatermark.objects.get(coupon=verified)
    snapshot = copy.deepcopy(row.snapshot)
    snapshot["replayed"]["state"] = "VOIDED"
    CheckWatermark.objects.filter(coupon=verified).update(snapshot=snapshot)
    assert resume_at(verified) is None

    answer = check(api, verified)

    assert (answer["ok"], answer["replayed_state"]) == (True, "AVAILABLE")
    assert resume_at(verified) is not None
    assert CheckWatermark.objects.get(coupon=verified).snapshot == row.snapshot


def test_a_lease_inserted_before_the_watermark_sends_the_check_back_to_the_whole_ledger(
        verified, api, broken_on_purpose):
    """A lease with no LOCK row, dated among the verified rows: the count of leases no longer
    matches the LOCK rows, and the full check names the lease."""
    existing = CouponLock.objects.filter(coupon=verified).order_by("locked_at").first()
    forged = copy.copy(existing)
    forged.pk, forged.order_id = None, "o-attacker"
    forged.id = uuid.uuid4()
    with past_the_triggers():
        forged.save(force_insert=True)
    broken_on_purpose.add(verified.pk)

    assert resume_at(verified) is None
    problems = next(item for item in check(api, verified)["invariants"]
                    if item["number"] == 5)["problems"]
    assert problems == [f"lock {forged.id} has no LOCK ledger row"]


def test_a_refusal_above_the_newest_signed_head_is_read_on_every_check(
        verified, clock, api, broken_on_purpose):
    """The marks of the write-once tables follow the same rule: a refusal written after the
    head, which a check already folded, is folded again, and its rewrite named."""
    stale = locked_by(verified, "stale-order")
    coupon_release(coupon_id=verified.pk, lease=stale, ctx=CTX, reason="order closed")
    refused(verified, stale)
    sequence()
    assert check(api, verified)["ok"] is True
    refusal = CommandRejection.objects.filter(coupon_id_ref=verified.pk).order_by("pk").last()
    with past_the_triggers():
        CommandRejection.objects.filter(pk=refusal.pk).update(order_id="o-attacker")
    broken_on_purpose.add(verified.pk)

    assert any(re.fullmatch(rf'command rejection {refusal.pk}: order_id is "o-attacker", its '
                            r'journal says ".+"', problem)
               for problem in journal_problems(api, verified))


def test_coupon_check_full_rereads_evidence_the_watermark_already_covered(
        verified, broken_on_purpose):
    """A refusal the head covers, edited after the watermark was written: the quick check
    trusts the head, `coupon_check --full` reads every row and names it."""
    refusal = CommandRejection.objects.filter(coupon_id_ref=verified.pk).order_by("pk").first()
    with past_the_triggers():
        CommandRejection.objects.filter(pk=refusal.pk).update(order_id="o-attacker")
    broken_on_purpose.add(verified.pk)

    out = io.StringIO()
    call_command("coupon_check", verified.pk, stdout=out)
    assert "every invariant holds" in out.getvalue()
    with pytest.raises(CommandError, match="1 problem"):
        call_command("coupon_check", verified.pk, "--full", stdout=out)
    assert (f'invariant 9: command rejection {refusal.pk}: order_id is "o-attacker", its journal '
            'says "order-3"' in out.getvalue())


def test_a_bulk_history_verifies(coupon, clock, heads):
    """The 20,000-row builder writes what the services would: the full check holds."""
    coupon = bulk_history(coupon, clock, ledger_rows=201, batch=50)
    heads()
    report = coupon_check(coupon, full=True)
    assert (report.ok, report.replayed_version) == (True, 201), report.violations
    assert CheckWatermark.objects.get(coupon=coupon).through_version == 201
