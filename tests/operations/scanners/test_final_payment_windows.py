"""The final-payment window scanner (docs/events.md): one FinalPaymentWindowOpened per presale
order once its window opens, with the coupon and its saving, valid against its schema."""

from datetime import timedelta

import pytest

from coupons.models import FinalPaymentReminder, OutboxEvent
from coupons.write.payloads import iso
from operations.relay import message_body
from operations.scanners import scan_final_payment_windows
from tests.command_checks import ledger
from tests.contract.test_event_schemas import problems
from tests.coupons.events.test_presale import DEADLINE, deposit, issue, presale_template
from tests.coupons.safety.test_history_protection import REFUSED, refused_raw

pytestmark = pytest.mark.django_db

EVENT = "FinalPaymentWindowOpened"


def reminders_of(coupon) -> list[dict]:
    return [e.payload for e in OutboxEvent.objects.filter(coupon=coupon, event_type=EVENT)]


def test_an_order_is_reminded_once_when_its_window_opens(clock, send):
    coupon = issue(presale_template("presale"))
    opens_at = clock.now() + timedelta(days=3)
    lock_id = deposit(send, coupon, final_payment_opens_at=opens_at.isoformat())[
        "outcome"]["lock_id"]
    before = ledger(coupon)

    assert scan_final_payment_windows().counts == {"not_yet": 1}
    clock.set(opens_at)
    assert scan_final_payment_windows().counts == {"reminded": 1}

    coupon.refresh_from_db()
    [reminder] = reminders_of(coupon)
    assert reminder == {
        "coupon_id": coupon.pk, "user_id": "u1",
        "reminder_id": FinalPaymentReminder.objects.get(order_id="PS-1").pk,
        "state_version": coupon.state_version, "order_id": "PS-1", "lock_id": lock_id,
        "discount_amount": "50.00", "strategy": "LOCK_HONORS",
        "valid_until": iso(coupon.valid_until), "final_payment_opens_at": iso(opens_at),
        "final_payment_deadline": iso(DEADLINE), "occurred_at": iso(clock.now()),
    }
    [event] = OutboxEvent.objects.filter(coupon=coupon, event_type=EVENT)
    assert problems(EVENT, message_body(event)) == []  # the body the relay publishes
    assert ledger(coupon) == before  # a reminder is no state change

    clock.advance(days=1)
    assert scan_final_payment_windows().counts == {}
    assert len(reminders_of(coupon)) == 1


def test_without_an_opening_time_the_window_opened_with_the_deposit(clock, send):
    coupon = issue(presale_template("presale"))
    deposit(send, coupon)

    assert scan_final_payment_windows().counts == {"reminded": 1}
    assert reminders_of(coupon)[0]["final_payment_opens_at"] == iso(clock.now())


def test_an_order_past_its_deadline_is_not_reminded(clock, send):
    deposit(send, issue(presale_template("presale")))
    clock.set(DEADLINE)

    assert scan_final_payment_windows().counts == {"closed": 1}
    assert not FinalPaymentReminder.objects.exists()


def test_a_window_opening_after_its_deadline_is_a_400(send, clock):
    coupon = issue(presale_template("presale"))

    answer = deposit(send, coupon, final_payment_opens_at=(DEADLINE + timedelta(days=1))
                     .isoformat(), expect=400)

    assert "final_payment_opens_at" in answer["error"]["details"]["payload"]


@pytest.mark.owner_role  # the triggers hold against the owner; the app role has no grant at all
@pytest.mark.parametrize("statement", [
    "UPDATE coupons_finalpaymentreminder SET order_id = 'forged' WHERE id = %s",
    "DELETE FROM coupons_finalpaymentreminder WHERE id = %s",
])
def test_a_reminder_cannot_be_rewritten_or_removed(clock, send, statement):
    deposit(send, issue(presale_template("presale")))
    scan_final_payment_windows()
    reminder = FinalPaymentReminder.objects.get()

    assert REFUSED in refused_raw(statement, [reminder.pk])
    assert FinalPaymentReminder.objects.get().order_id == "PS-1"


def test_a_batch_read_before_another_scanner_reminded_skips_the_order(clock, send):
    """As for expiry warnings: a batch read before a concurrent reminder committed is read
    again once locked, and the order is not reminded twice."""
    from operations.scanners import presale_leases_not_reminded, remind_open_windows

    coupon = issue(presale_template("presale"))
    deposit(send, coupon)
    read_early = list(presale_leases_not_reminded())
    assert scan_final_payment_windows().counts == {"reminded": 1}

    assert remind_open_windows(read_early) == {"skipped": 1}
    assert len(reminders_of(coupon)) == 1
