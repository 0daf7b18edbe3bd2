"""The expiry scanner: AVAILABLE coupons past valid_until become EXPIRED, nothing else moves."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from coupons.models import CommandRejection, CouponOperation, OutboxEvent, UserCoupon
from coupons.services import coupon_issue, coupon_redeem, coupon_void
from operations import scanners
from tests.command_checks import ledger
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db

VALID_UNTIL = START + timedelta(days=30)  # the `template` fixture's 30-day validity


def expire_coupons(*args) -> str:
    out = StringIO()
    call_command("expire_coupons", *args, stdout=out)
    return out.getvalue()


def issue(template, ctx, n) -> list[UserCoupon]:
    return [coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
            for _ in range(n)]


def statuses(coupons) -> list[str]:
    by_id = UserCoupon.objects.in_bulk([coupon.pk for coupon in coupons])
    return [by_id[coupon.pk].status for coupon in coupons]


def expired_ids() -> set[int]:
    return set(CouponOperation.objects.filter(op_type="EXPIRE").values_list("coupon_id",
                                                                            flat=True))


def test_available_coupon_past_valid_until_becomes_expired(coupon, clock):
    clock.set(VALID_UNTIL + timedelta(seconds=1))

    output = expire_coupons()

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("EXPIRED", 2)
    assert ledger(coupon) == [
        ("ISSUE", "", "AVAILABLE", 0, 1), ("EXPIRE", "AVAILABLE", "EXPIRED", 1, 2),
    ]
    operation = CouponOperation.objects.get(coupon=coupon, op_type="EXPIRE")
    assert (operation.actor, operation.created_at) == ("system:expiry-scanner", clock.now())
    assert OutboxEvent.objects.filter(operation=operation, event_type="CouponExpired").exists()
    assert output.splitlines()[-1].startswith("Expiry scan done: 1 due in 1 batches: expired 1")


def test_coupon_expires_at_exactly_valid_until(coupon, clock):
    clock.set(VALID_UNTIL)

    expire_coupons()

    coupon.refresh_from_db()
    assert coupon.status == "EXPIRED"


def test_coupon_still_valid_is_untouched(coupon, clock):
    clock.set(VALID_UNTIL - timedelta(seconds=1))

    output = expire_coupons()

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("AVAILABLE", 1)
    assert "0 due in 0 batches: none" in output


def test_locked_used_and_void_coupons_are_untouched(template, ctx, clock):
    locked, used, void, available = issue(template, ctx, 4)
    clock.set(VALID_UNTIL - timedelta(days=1))
    lock(locked, ctx, order_id="order-L", lease_seconds=7 * 24 * 3600)  # runs past valid_until
    _, proof = lock(used, ctx, order_id="order-U")
    coupon_redeem(coupon_id=used.pk, lease=proof, payment_id="P-U", ctx=ctx)
    coupon_void(coupon_id=void.pk, expected_version=1, ctx=ctx, reason="campaign closed")
    clock.set(VALID_UNTIL + timedelta(days=1))
    before = {c.pk: list(CouponOperation.objects.filter(coupon=c)) for c in (locked, used, void)}

    expire_coupons()

    assert statuses([locked, used, void, available]) == ["LOCKED", "USED", "VOID", "EXPIRED"]
    assert expired_ids() == {available.pk}
    for coupon in (locked, used, void):
        assert list(CouponOperation.objects.filter(coupon=coupon)) == before[coupon.pk]


def test_running_the_expiry_scanner_twice_changes_nothing_more(template, ctx, clock):
    coupons = issue(template, ctx, 4)
    clock.set(VALID_UNTIL + timedelta(days=1))
    expire_coupons()
    ledger_rows = CouponOperation.objects.count()

    second = expire_coupons()

    assert CouponOperation.objects.count() == ledger_rows
    assert statuses(coupons) == ["EXPIRED"] * 4
    assert "0 due in 0 batches: none" in second


def test_coupon_voided_after_the_scanner_read_it_is_skipped(coupon, ctx, clock, monkeypatch):
    clock.set(VALID_UNTIL + timedelta(days=1))
    expire_batch = scanners.coupons_expire

    def voided_first(*, coupons, **kwargs):
        row = coupons[0]
        coupon_void(coupon_id=row.pk, expected_version=row.state_version, ctx=ctx,
                    reason="risk")
        return expire_batch(coupons=coupons, **kwargs)

    monkeypatch.setattr(scanners, "coupons_expire", voided_first)

    assert scanners.expire_coupons().counts == {"skipped": 1}
    coupon.refresh_from_db()
    assert coupon.status == "VOID"
    assert (CommandRejection.objects.get().op_type,
            CommandRejection.objects.get().error_code) == ("EXPIRE", "INVALID_STATE")


def test_expiry_shards_partition_the_due_coupons(template, ctx, clock):
    coupons = issue(template, ctx, 12)
    clock.set(VALID_UNTIL + timedelta(days=1))

    handled = []
    for shard in range(4):
        before = expired_ids()
        expire_coupons("--shards", "4", "--shard", str(shard), "--batch", "2", "--quiet")
        handled.append(expired_ids() - before)

    for shard, ids in enumerate(handled):
        assert ids == {c.pk for c in coupons if c.pk % 4 == shard}
    assert set().union(*handled) == {c.pk for c in coupons}


def test_expiry_batch_and_limit_are_respected(template, ctx, clock):
    coupons = issue(template, ctx, 5)
    clock.set(VALID_UNTIL + timedelta(days=1))

    output = expire_coupons("--batch", "2", "--limit", "3")

    progress = [line for line in output.splitlines() if line.startswith("batch ")]
    assert len(progress) == 2
    assert len(expired_ids()) == 3
    assert statuses(coupons).count("AVAILABLE") == 2


@pytest.mark.parametrize("options", [
    ["--batch", "0"], ["--shards", "2", "--shard", "2"], ["--rate", "0"], ["--limit", "0"],
])
def test_expiry_bad_options_are_refused(coupon, clock, options):
    clock.set(VALID_UNTIL + timedelta(days=1))

    with pytest.raises(CommandError):
        expire_coupons(*options)

    coupon.refresh_from_db()
    assert coupon.status == "AVAILABLE"
