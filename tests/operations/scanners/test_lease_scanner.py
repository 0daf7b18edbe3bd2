"""The lease scanner: expired leases end through ordinary commands, once, and only if still due."""

import itertools
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from coupons.models import (
    CommandRejection,
    CouponLock,
    CouponOperation,
    Redemption,
    UserCoupon,
)
from coupons.services import (
    coupon_issue,
    coupon_redeem,
    coupon_renew,
    template_create,
)
from operations import scanners
from tests.command_checks import ledger
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db

LEASE = 60  # seconds: every lease in these tests ends one minute after its LOCK
VALID_UNTIL = START + timedelta(days=30)  # the `template` fixture's 30-day validity
_message_ids = itertools.count(1)


def scan_leases(*args) -> str:
    out = StringIO()
    call_command("scan_leases", *args, stdout=out)
    return out.getvalue()


def issue(template, ctx, n, user_id="u1") -> list[UserCoupon]:
    return [coupon_issue(template_id=template.pk, user_id=user_id, ctx=ctx).coupon
            for _ in range(n)]


def lock_all(coupons, ctx, lease_seconds=LEASE) -> dict[int, object]:
    """Lock each coupon for its own order; answers each holder's LeaseProof by coupon id."""
    return {
        coupon.pk: lock(coupon, ctx, order_id=f"order-{coupon.pk}",
                        lease_seconds=lease_seconds)[1]
        for coupon in coupons
    }


def statuses(coupons) -> list[str]:
    by_id = UserCoupon.objects.in_bulk([coupon.pk for coupon in coupons])
    return [by_id[coupon.pk].status for coupon in coupons]


def released_ids() -> set[int]:
    return set(CouponOperation.objects.filter(op_type="RELEASE").values_list("coupon_id",
                                                                             flat=True))


def pay(api, clock, order_id, payment_id):
    """The payment service reports a successful payment through the inbox."""
    response = api.post("/api/v1/events", {
        "message_id": f"scan-m-{next(_message_ids)}", "type": "PaymentSucceeded",
        "occurred_at": clock.now().isoformat(),
        "payload": {"order_id": order_id, "payment_id": payment_id},
    }, format="json")
    assert response.status_code == 202, response.json()
    return response.json()


# --- what a due lease becomes -------------------------------------------------------------


def test_expired_lease_is_released_to_available_by_the_scanner(coupon, ctx, clock):
    result, _ = lock(coupon, ctx, lease_seconds=LEASE)
    clock.advance(seconds=LEASE + 1)

    scan_leases()

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version, coupon.current_lock_id) == ("AVAILABLE", 3, None)
    assert ledger(coupon) == [
        ("ISSUE", "", "AVAILABLE", 0, 1), ("LOCK", "AVAILABLE", "LOCKED", 1, 2),
        ("RELEASE", "LOCKED", "AVAILABLE", 2, 3),
    ]
    release = CouponOperation.objects.get(coupon=coupon, op_type="RELEASE")
    assert (release.actor, release.reason, release.lock_id, release.order_id) == (
        "system:lease-scanner", "lease expired", result.lock.pk, "order-A",
    )
    assert CouponLock.objects.get(pk=result.lock.pk).status == "RELEASED"


def test_lease_ending_exactly_now_is_due(coupon, ctx, clock):
    lock(coupon, ctx, lease_seconds=LEASE)
    clock.advance(seconds=LEASE)

    scan_leases()

    coupon.refresh_from_db()
    assert coupon.status == "AVAILABLE"


def test_expired_lease_past_valid_until_is_released_to_expired(coupon, ctx, clock):
    clock.set(VALID_UNTIL - timedelta(seconds=30))
    lock(coupon, ctx, lease_seconds=LEASE)
    clock.advance(seconds=LEASE + 1)

    scan_leases()

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("EXPIRED", 3)
    assert ledger(coupon)[-1] == ("RELEASE", "LOCKED", "EXPIRED", 2, 3)


def test_unexpired_leases_are_left_alone(template, ctx, clock):
    due, not_due = issue(template, ctx, 2)
    lock(due, ctx, order_id="order-due", lease_seconds=LEASE)
    lock(not_due, ctx, order_id="order-later", lease_seconds=LEASE * 10)
    clock.advance(seconds=LEASE + 1)

    scan_leases()

    due.refresh_from_db()
    not_due.refresh_from_db()
    assert due.status == "AVAILABLE"
    assert (not_due.status, not_due.state_version, not_due.locked_order_id) == (
        "LOCKED", 2, "order-later",
    )


def test_coupons_without_a_lease_are_not_touched(template, ctx, clock):
    available, used = issue(template, ctx, 2)
    _, proof = lock(used, ctx, lease_seconds=LEASE)
    coupon_redeem(coupon_id=used.pk, lease=proof, payment_id="P-1", ctx=ctx)
    clock.advance(days=60)
    before = CouponOperation.objects.count()

    output = scan_leases()

    assert CouponOperation.objects.count() == before
    assert statuses([available, used]) == ["AVAILABLE", "USED"]
    assert "0 due in 0 batches: none" in output


# --- a paid order keeps its coupon ---------------------------------------------------------


def test_paid_order_with_an_expired_lease_gets_a_compensating_redeem(coupon, ctx, clock, api):
    # The payment fact overtook the LOCK (at-least-once delivery, any order): when it arrived
    # the order had no coupon, so nothing redeemed. The lease then runs out unpaid-looking.
    assert pay(api, clock, "order-A", "P-A")["outcome"]["action"] == "NO_COUPON"
    result, _ = lock(coupon, ctx, order_id="order-A", lease_seconds=LEASE)
    clock.advance(seconds=LEASE + 1)

    output = scan_leases()

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("USED", 3)
    assert ledger(coupon)[-1] == ("REDEEM", "LOCKED", "USED", 2, 3)
    redeem = CouponOperation.objects.get(coupon=coupon, op_type="REDEEM")
    assert (redeem.actor, redeem.payment_id, redeem.lock_id) == (
        "system:lease-scanner", "P-A", result.lock.pk,
    )
    redemption = Redemption.objects.get(coupon=coupon)
    assert (redemption.order_id, redemption.payment_id) == ("order-A", "P-A")
    assert redemption.discount_amount == Decimal("30.00")
    assert not CouponOperation.objects.filter(op_type="RELEASE").exists()
    assert "redeemed 1" in output


def test_payment_of_another_order_does_not_redeem_the_lease(coupon, ctx, clock, api):
    pay(api, clock, "order-B", "P-B")
    lock(coupon, ctx, order_id="order-A", lease_seconds=LEASE)
    clock.advance(seconds=LEASE + 1)

    scan_leases()

    coupon.refresh_from_db()
    assert coupon.status == "AVAILABLE"
    assert not Redemption.objects.exists()


def test_paid_strict_coupon_past_valid_until_is_released_to_expired(ctx, clock, api):
    strict = template_create(
        code="strict30", name="30 off, strict", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
        min_order_amount=Decimal("0.00"), valid_days=30, expiry_during_lock="STRICT",
    )
    (coupon,) = issue(strict, ctx, 1)
    pay(api, clock, "order-A", "P-A")
    clock.set(VALID_UNTIL - timedelta(seconds=30))
    lock(coupon, ctx, order_id="order-A", lease_seconds=LEASE)
    clock.advance(seconds=LEASE + 1)

    output = scan_leases()

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("EXPIRED", 3)
    assert ledger(coupon)[-1] == ("RELEASE", "LOCKED", "EXPIRED", 2, 3)
    release = CouponOperation.objects.get(coupon=coupon, op_type="RELEASE")
    assert (release.actor, release.reason) == ("system:lease-scanner",
                                               "expired before redeem (STRICT)")
    assert not Redemption.objects.exists()
    assert "released 1" in output


# --- once, and only if still due ------------------------------------------------------------


def test_running_the_scanner_twice_changes_nothing_more(template, ctx, clock):
    coupons = issue(template, ctx, 5)
    lock_all(coupons, ctx)
    clock.advance(seconds=LEASE + 1)
    first = scan_leases()
    ledger_rows = CouponOperation.objects.count()
    rejections = CommandRejection.objects.count()

    second = scan_leases()

    assert "released 5" in first
    assert "0 due in 0 batches: none" in second
    assert CouponOperation.objects.count() == ledger_rows
    assert CommandRejection.objects.count() == rejections
    assert statuses(coupons) == ["AVAILABLE"] * 5


def test_lease_renewed_after_the_scanner_read_it_is_not_released(
    coupon, ctx, clock, monkeypatch,
):
    result, proof = lock(coupon, ctx, lease_seconds=LEASE)
    clock.advance(seconds=LEASE + 1)
    release_batch = scanners.coupons_release_expired

    def holder_renews_first(*, coupons, **kwargs):
        # The scanner has read the row (at version 2); the holder renews before its command.
        coupon_renew(coupon_id=coupons[0].pk, lease=proof, ctx=ctx, lease_seconds=600)
        return release_batch(coupons=coupons, **kwargs)

    monkeypatch.setattr(scanners, "coupons_release_expired", holder_renews_first)

    report = scanners.scan_leases()

    assert report.counts == {"skipped": 1}
    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version, coupon.current_lock_id) == (
        "LOCKED", 3, result.lock.pk,
    )
    assert coupon.lock_expires_at == clock.now() + timedelta(seconds=600)
    assert [op for op, *_ in ledger(coupon)] == ["ISSUE", "LOCK", "RENEW"]
    assert CouponLock.objects.get(pk=result.lock.pk).status == "ACTIVE"
    refusal = CommandRejection.objects.get()
    assert (refusal.op_type, refusal.error_code, refusal.actor) == (
        "RELEASE", "VERSION_CONFLICT", "system:lease-scanner",
    )
    assert refusal.details["current_version"] == 3


def test_paid_lease_renewed_after_the_scanner_read_it_is_not_redeemed_by_the_scanner(
    coupon, ctx, clock, api, monkeypatch,
):
    """The redeem branch proves ownership with the version the scanner read too: a lease its
    holder renewed since is the holder's to redeem, even though its order has been paid."""
    # The payment overtook the LOCK, as in the compensating-redeem test above.
    assert pay(api, clock, "order-A", "P-A")["outcome"]["action"] == "NO_COUPON"
    result, proof = lock(coupon, ctx, order_id="order-A", lease_seconds=LEASE)
    clock.advance(seconds=LEASE + 1)
    settle = scanners.settle_expired_lease

    def holder_renews_first(row):
        # The scanner has read the row (at version 2); the holder renews before its command.
        coupon_renew(coupon_id=row.pk, lease=proof, ctx=ctx, lease_seconds=600)
        return settle(row)

    monkeypatch.setattr(scanners, "settle_expired_lease", holder_renews_first)

    report = scanners.scan_leases()

    assert report.counts == {"skipped": 1}
    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version, coupon.current_lock_id) == (
        "LOCKED", 3, result.lock.pk)
    assert not Redemption.objects.exists()
    refusal = CommandRejection.objects.get(op_type="REDEEM", actor="system:lease-scanner")
    assert (refusal.error_code, refusal.details["expected_version"]) == ("VERSION_CONFLICT", 2)


def test_lease_redeemed_by_its_holder_after_the_scanner_read_it_stays_redeemed(
    coupon, ctx, clock, monkeypatch,
):
    _, proof = lock(coupon, ctx, lease_seconds=LEASE)
    clock.advance(seconds=LEASE + 1)
    release_batch = scanners.coupons_release_expired

    def holder_redeems_first(*, coupons, **kwargs):
        coupon_redeem(coupon_id=coupons[0].pk, lease=proof, payment_id="P-late", ctx=ctx)
        return release_batch(coupons=coupons, **kwargs)

    monkeypatch.setattr(scanners, "coupons_release_expired", holder_redeems_first)

    assert scanners.scan_leases().counts == {"skipped": 1}
    coupon.refresh_from_db()
    assert coupon.status == "USED"
    assert [op for op, *_ in ledger(coupon)] == ["ISSUE", "LOCK", "REDEEM"]
    assert CommandRejection.objects.get().error_code == "INVALID_STATE"


# --- shards, batches, limits, pacing -------------------------------------------------------


def test_shards_partition_the_due_leases(template, ctx, clock):
    coupons = issue(template, ctx, 30)
    lock_all(coupons, ctx)
    clock.advance(seconds=LEASE + 1)

    handled_by_shard = []
    for shard in range(3):
        before = released_ids()
        scan_leases("--shards", "3", "--shard", str(shard), "--quiet")
        handled_by_shard.append(released_ids() - before)

    everyone = {coupon.pk for coupon in coupons}
    for shard, handled in enumerate(handled_by_shard):
        assert handled == {pk for pk in everyone if pk % 3 == shard}
    assert sum(len(handled) for handled in handled_by_shard) == 30
    assert set().union(*handled_by_shard) == everyone
    assert CouponOperation.objects.filter(op_type="RELEASE").count() == 30


def test_batch_sets_how_many_leases_each_transaction_handles(template, ctx, clock):
    coupons = issue(template, ctx, 7)
    lock_all(coupons, ctx)
    clock.advance(seconds=LEASE + 1)

    output = scan_leases("--batch", "3")

    progress = [line for line in output.splitlines() if line.startswith("batch ")]
    assert [line.split(":")[0] for line in progress] == ["batch 1", "batch 2", "batch 3"]
    assert progress[0].startswith("batch 1: 3 due in 1 batches: released 3")
    assert progress[2].startswith("batch 3: 7 due in 3 batches: released 7")
    assert statuses(coupons) == ["AVAILABLE"] * 7


def test_batches_go_in_lease_end_order(template, ctx, clock):
    coupons = issue(template, ctx, 4)
    for seconds, coupon in zip([40, 10, 30, 20], coupons, strict=True):
        lock(coupon, ctx, order_id=f"order-{coupon.pk}", lease_seconds=seconds)
    clock.advance(seconds=LEASE)

    scanners.scan_leases(batch=1)

    order = CouponOperation.objects.filter(op_type="RELEASE").order_by("id")
    assert list(order.values_list("coupon_id", flat=True)) == [
        coupons[1].pk, coupons[3].pk, coupons[2].pk, coupons[0].pk,
    ]


@pytest.mark.parametrize("batch", ["2", "100"])
def test_limit_stops_after_that_many_leases(template, ctx, clock, batch):
    coupons = issue(template, ctx, 7)
    lock_all(coupons, ctx)
    clock.advance(seconds=LEASE + 1)

    output = scan_leases("--limit", "5", "--batch", batch)

    assert len(released_ids()) == 5
    assert statuses(coupons).count("LOCKED") == 2
    assert "5 due in" in output.splitlines()[-1]
    scan_leases()
    assert statuses(coupons) == ["AVAILABLE"] * 7


def test_rate_paces_the_commands(template, ctx, clock):
    coupons = issue(template, ctx, 4)
    lock_all(coupons, ctx)
    clock.advance(seconds=LEASE + 1)

    report = scanners.scan_leases(rate=20)  # one command every 50 ms

    assert report.counts == {"released": 4}
    assert report.seconds >= 3 * 0.05 * 0.9


@pytest.mark.parametrize("options", [
    ["--batch", "0"],
    ["--batch", "-5"],
    ["--shards", "0"],
    ["--shard", "3", "--shards", "3"],
    ["--shard", "-1", "--shards", "3"],
    ["--shard", "1"],
    ["--rate", "0"],
    ["--rate", "-2"],
    ["--limit", "0"],
    ["--limit", "-1"],
    ["--batch", "many"],
])
def test_bad_options_are_refused_before_any_work(template, ctx, clock, options):
    coupons = issue(template, ctx, 2)
    lock_all(coupons, ctx)
    clock.advance(seconds=LEASE + 1)

    with pytest.raises(CommandError):
        scan_leases(*options)

    assert statuses(coupons) == ["LOCKED", "LOCKED"]


# --- output ------------------------------------------------------------------------------


def test_output_has_a_progress_line_per_batch_and_a_summary(template, ctx, clock, api):
    coupons = issue(template, ctx, 3)
    pay(api, clock, f"order-{coupons[0].pk}", "P-0")
    lock_all(coupons, ctx)
    clock.advance(seconds=LEASE + 1)

    lines = scan_leases("--batch", "2").splitlines()

    assert len(lines) == 3
    assert lines[0].startswith("batch 1: 2 due in 1 batches: ")
    assert lines[1].startswith("batch 2: 3 due in 2 batches: ")
    assert lines[2].startswith("Lease scan done: 3 due in 2 batches: redeemed 1, released 2 (")
    assert lines[2].endswith(" commands/s)")


def test_quiet_prints_only_the_summary(template, ctx, clock):
    lock_all(issue(template, ctx, 3), ctx)
    clock.advance(seconds=LEASE + 1)

    lines = scan_leases("--batch", "1", "--quiet").splitlines()

    assert len(lines) == 1
    assert lines[0].startswith("Lease scan done: 3 due in 3 batches: released 3 (")
