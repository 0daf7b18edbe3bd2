"""The check's watermark (coupons/evidence/check_watermark.py): it saves work, never hides a break.

The attacker: the owner's login, triggers off, the project's hash functions, but not the
server's SECRET_KEY, which seals the watermark. Each test lets a check verify the
coupon first, so the next check resumes after a watermark, then changes what that watermark covers,
or the watermark itself, and asks again.
"""

import copy
import io
import uuid

import pytest
from django.core.management import CommandError, call_command

from coupons.evidence.check_watermark import prefix_digest, resume_point, watermark_seal
from coupons.evidence.replay import coupon_check
from coupons.models import CheckWatermark, CommandRejection, CouponLock, CouponOperation
from coupons.services import CommandContext, coupon_release
from tests.app_role import past_the_triggers
from tests.console.history import bulk_history, locked_by, long_history

pytestmark = pytest.mark.django_db
CTX = CommandContext(actor="client:order-service")


def as_owner_with_triggers_off(write):
    with past_the_triggers():
        write()


def journal_problems(api, coupon) -> list[str]:
    body = api.get(f"/api/v1/coupons/{coupon.pk}/check").json()
    assert body["ok"] is False
    return next(item for item in body["invariants"] if item["number"] == 9)["problems"]


def edited(row, column, value) -> str:
    return (f'coupon operation {row.pk}: {column} is "{value}", its journal says '
            f'"{getattr(row, column)}"')


@pytest.fixture
def verified(coupon, clock, api):
    """A coupon with 41 rows (leases, refused late redeems, redeems returned by refunds) that a
    check through the API has verified: a watermark at v41."""
    coupon = long_history(coupon, clock, ledger_rows=41, every=4)
    assert api.get(f"/api/v1/coupons/{coupon.pk}/check").json()["ok"] is True
    assert CheckWatermark.objects.get(coupon=coupon).through_version == 41
    return coupon


def check(api, coupon) -> dict:
    return api.get(f"/api/v1/coupons/{coupon.pk}/check").json()


def test_the_check_resumes_after_the_watermark_and_answers_as_the_full_check(
        verified, clock, api):
    for n in range(3):
        proof = locked_by(verified, f"later-{n}")
        clock.advance(seconds=1)
        if n < 2:
            coupon_release(coupon_id=verified.pk, lease=proof, ctx=CTX, reason="order closed")
    resume = resume_point(verified)
    assert (resume.through_version, [op.to_version for op in resume.operations]) == (
        41, [42, 43, 44, 45, 46])

    answer = check(api, verified)

    verified.refresh_from_db()
    assert answer == {**coupon_check(verified, full=True).as_dict(), "diagnosis": answer[
        "diagnosis"]}
    assert (answer["ok"], answer["replayed_state"], answer["replayed_version"]) == (
        True, "LOCKED", 46)
    assert CheckWatermark.objects.get(coupon=verified).through_version == 46


def test_an_early_row_edited_past_the_triggers_is_still_caught(verified, api,
                                                               broken_on_purpose):
    second = CouponOperation.objects.get(coupon=verified, to_version=2)
    assert resume_point(verified) is not None

    as_owner_with_triggers_off(lambda: CouponOperation.objects.filter(pk=second.pk).update(
        order_id="o-attacker"))
    broken_on_purpose.add(verified.pk)

    assert resume_point(verified) is None  # the database's digest of v1–v41 moved
    assert journal_problems(api, verified) == [edited(second, "order_id", "o-attacker")]


def test_the_watermarks_own_row_edited_past_the_triggers_is_still_caught(verified, api,
                                                                          broken_on_purpose):
    """The row at the watermark's version is verified too: its hash is compared with the
    watermark's, but an edit that leaves the stored hash as it was shows only in the
    database's fingerprint of the rows up to and including that version."""
    head = CouponOperation.objects.get(coupon=verified, to_version=41)

    as_owner_with_triggers_off(lambda: CouponOperation.objects.filter(pk=head.pk).update(
        actor="attacker"))
    broken_on_purpose.add(verified.pk)

    assert journal_problems(api, verified) == [edited(head, "actor", "attacker")]


def test_every_row_rewritten_up_to_the_head_is_still_caught(verified, api, broken_on_purpose):
    """Every row from v2 rewritten, up to the watermark's head: the digest moves."""
    rows = list(CouponOperation.objects.filter(coupon=verified).order_by("to_version"))

    as_owner_with_triggers_off(lambda: CouponOperation.objects.filter(
        coupon=verified, to_version__gte=2).update(actor="attacker"))
    broken_on_purpose.add(verified.pk)

    problems = journal_problems(api, verified)
    assert problems[0] == edited(rows[1], "actor", "attacker") and len(problems) == 40


def test_a_forged_watermark_does_not_make_an_edit_pass(verified, api, settings,
                                                       broken_on_purpose):
    """The attacker edits v2, then rewrites the watermark to the new digest, sealed under a
    guessed secret: the seal fails, the watermark is ignored, the edit is reported."""
    second = CouponOperation.objects.get(coupon=verified, to_version=2)
    real_secret = settings.SECRET_KEY

    def write():
        CouponOperation.objects.filter(pk=second.pk).update(order_id="o-attacker")
        row = CheckWatermark.objects.get(coupon=verified)
        row.prefix_digest = prefix_digest(verified.pk, row.through_version)
        settings.SECRET_KEY = "not-the-real-secret-key-but-as-long-as-it-is-x"
        row.seal = watermark_seal(verified.pk, row.through_version, row.head_hash,
                                  row.prefix_digest, row.snapshot)
        settings.SECRET_KEY = real_secret
        row.save()

    as_owner_with_triggers_off(write)
    broken_on_purpose.add(verified.pk)

    assert resume_point(verified) is None
    assert journal_problems(api, verified) == [edited(second, "order_id", "o-attacker")]


def test_a_watermark_edited_without_the_key_is_ignored_and_rewritten(verified, api):
    """A snapshot that claims another state does not reach the report: the check verifies the
    whole ledger again and stores what it found."""
    row = CheckWatermark.objects.get(coupon=verified)
    snapshot = copy.deepcopy(row.snapshot)
    snapshot["replayed"]["state"] = "VOIDED"
    CheckWatermark.objects.filter(coupon=verified).update(snapshot=snapshot)
    assert resume_point(verified) is None

    answer = check(api, verified)

    assert (answer["ok"], answer["replayed_state"]) == (True, "AVAILABLE")
    assert resume_point(verified) is not None
    assert CheckWatermark.objects.get(coupon=verified).snapshot == row.snapshot


def test_a_lease_inserted_before_the_watermark_sends_the_check_back_to_the_whole_ledger(
        verified, api, broken_on_purpose):
    """A lease with no LOCK row, dated among the verified rows: the count of leases no longer
    matches the LOCK rows, and the full check names the lease."""
    existing = CouponLock.objects.filter(coupon=verified).order_by("locked_at").first()
    forged = copy.copy(existing)
    forged.pk, forged.order_id = None, "o-attacker"
    forged.id = uuid.uuid4()
    as_owner_with_triggers_off(lambda: forged.save(force_insert=True))
    broken_on_purpose.add(verified.pk)

    assert resume_point(verified) is None
    problems = next(item for item in check(api, verified)["invariants"]
                    if item["number"] == 5)["problems"]
    assert problems == [f"lock {forged.id} has no LOCK ledger row"]


def test_coupon_check_full_rereads_evidence_the_watermark_already_covered(
        verified, broken_on_purpose):
    """A refusal edited after the watermark was written: the quick check reads only newer
    refusals, `coupon_check --full` reads them all and names it."""
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


def test_a_bulk_history_verifies(coupon, clock):
    """The 20,000-row builder writes what the services would: the full check holds."""
    coupon = bulk_history(coupon, clock, ledger_rows=201, batch=50)
    report = coupon_check(coupon, full=True)
    assert (report.ok, report.replayed_version) == (True, 201), report.violations
    assert CheckWatermark.objects.get(coupon=coupon).through_version == 201
