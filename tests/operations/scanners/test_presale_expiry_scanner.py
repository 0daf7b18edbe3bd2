"""The presale expiry scanner (docs/events.md): one CouponExpiresBeforeFinalPayment per
STRICT or SUBSTITUTE lease whose coupon expires before the final-payment deadline."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from coupons.models import ExpiryWarning, OutboxEvent
from coupons.write.payloads import iso
from operations.scanners import scan_presale_expiry
from tests.command_checks import ledger
from tests.conftest import lock
from tests.coupons.events.test_presale import (
    DEADLINE,
    VALID_UNTIL,
    deposit,
    issue,
    presale_template,
)
from tests.coupons.safety.test_history_protection import REFUSED, refused_raw

pytestmark = pytest.mark.django_db

EVENT = "CouponExpiresBeforeFinalPayment"


def warnings_of(coupon) -> list[dict]:
    return [e.payload for e in OutboxEvent.objects.filter(coupon=coupon, event_type=EVENT)]


@pytest.mark.parametrize("strategy", ["STRICT", "SUBSTITUTE"])
def test_a_lease_whose_coupon_expires_before_the_deadline_is_warned_once(
    clock, send, strategy
):
    coupon = issue(presale_template("presale", strategy))
    lock_id = deposit(send, coupon)["outcome"]["lock_id"]
    before = ledger(coupon)

    report = scan_presale_expiry()

    assert report.counts == {"warned": 1}
    coupon.refresh_from_db()
    [warning] = warnings_of(coupon)
    assert warning == {
        "coupon_id": coupon.pk, "user_id": "u1",
        "warning_id": ExpiryWarning.objects.get(coupon=coupon).pk,
        "state_version": coupon.state_version, "order_id": "PS-1", "lock_id": lock_id,
        "strategy": strategy, "valid_until": iso(VALID_UNTIL),
        "final_payment_deadline": iso(DEADLINE), "discount_amount": "50.00",
        "occurred_at": iso(clock.now()),
    }
    # A warning is no state change: no ledger row, no version, the coupon still LOCKED.
    assert ledger(coupon) == before
    assert coupon.status == "LOCKED"

    clock.advance(days=1)
    assert scan_presale_expiry().counts == {}
    assert len(warnings_of(coupon)) == 1


def test_leases_that_are_fine_or_not_strict_are_never_warned(clock, send, ctx):
    honours = issue(presale_template("honours", "LOCK_HONORS"), user_id="u1")
    deposit(send, honours, order_id="PS-1")
    early_deadline = issue(presale_template("early", "STRICT"), user_id="u2")
    deposit(send, early_deadline, order_id="PS-2", deadline=VALID_UNTIL - timedelta(days=1))
    in_the_grace = issue(presale_template("grace", "STRICT"), user_id="u3")
    deposit(send, in_the_grace, order_id="PS-3", deadline=VALID_UNTIL - timedelta(hours=1))
    no_deposit = issue(presale_template("checkout", "STRICT"), user_id="u4")
    lock(no_deposit, ctx, order_id="O-4", amount="1000.00",
         lease_until=VALID_UNTIL + timedelta(days=5))

    report = scan_presale_expiry()

    assert report.counts == {"fine": 1}  # the grace one is read, compared and left alone
    assert not OutboxEvent.objects.filter(event_type=EVENT).exists()
    assert not ExpiryWarning.objects.exists()


def test_a_new_lease_of_the_same_coupon_is_warned_again(clock, send):
    coupon = issue(presale_template("presale", "STRICT"))
    deposit(send, coupon, order_id="PS-1")
    scan_presale_expiry()
    send("OrderClosed", order_id="PS-1")
    deposit(send, coupon, order_id="PS-2")

    scan_presale_expiry()

    assert [w["order_id"] for w in warnings_of(coupon)] == ["PS-1", "PS-2"]


def test_a_released_lease_is_not_warned(clock, send):
    coupon = issue(presale_template("presale", "STRICT"))
    deposit(send, coupon)
    send("OrderClosed", order_id="PS-1")

    assert scan_presale_expiry().counts == {}
    assert warnings_of(coupon) == []


def test_the_command_reports_what_it_did(clock, send):
    coupon = issue(presale_template("presale", "SUBSTITUTE"))
    deposit(send, coupon)
    out = StringIO()

    call_command("scan_presale_expiry", "--quiet", stdout=out)

    assert out.getvalue().startswith("Presale expiry scan done: 1 due in 1 batches: warned 1")
    assert len(warnings_of(coupon)) == 1


def test_warning_rows_are_append_only(clock, send):
    coupon = issue(presale_template("presale", "STRICT"))
    deposit(send, coupon)
    scan_presale_expiry()
    warning = ExpiryWarning.objects.get()

    with pytest.raises(TypeError, match="append-only"):
        warning.save()


@pytest.mark.owner_role  # the triggers hold against the owner; the app role has no grant at all
@pytest.mark.parametrize("sql", [
    "UPDATE coupons_expirywarning SET order_id = 'forged' WHERE id = %s",
    "DELETE FROM coupons_expirywarning WHERE id = %s",
])
def test_the_database_refuses_to_rewrite_or_forget_a_warning(clock, send, sql):
    coupon = issue(presale_template("presale", "STRICT"))
    deposit(send, coupon)
    scan_presale_expiry()
    warning = ExpiryWarning.objects.get()

    assert REFUSED in refused_raw(sql, [warning.pk])
    assert ExpiryWarning.objects.get().order_id == "PS-1"


def test_a_batch_read_before_another_scanner_warned_skips_the_warned_lease(clock, send):
    """A second scanner's batch can be read before the first commits its warning; once its
    rows are locked, the handler reads again and leaves the lease alone."""
    from operations.scanners import presale_leases_expiring_early, warn_expiring_presale_leases

    coupon = issue(presale_template("presale", "STRICT"))
    deposit(send, coupon)
    read_early = list(presale_leases_expiring_early())
    assert scan_presale_expiry().counts == {"warned": 1}

    assert warn_expiring_presale_leases(read_early) == {"skipped": 1}
    assert len(warnings_of(coupon)) == 1
    assert ExpiryWarning.objects.count() == 1
