"""What a queue button says it will write is what it then writes: the panel's sentence comes
from the plan the service executes, and each test presses the button and reads the rows."""

from decimal import Decimal

import pytest

from coupons.effects import Step
from coupons.models import CouponOperation
from coupons.services import coupon_redeem, coupon_release
from coupons.services.cases import case_open
from refunds.models import Compensation, RefundCoupon
from tests.conftest import lock
from tests.timeline.queue_helpers import new_key, press, text
from tests.timeline.queue_objects import (
    SYSTEM,
    fresh_coupon,
    late_payment_case,
    pending_decision,
    proposal,
)
from timeline.effects import step_sentence

pytestmark = pytest.mark.django_db


def panel(page: str, anchor: str) -> str:
    return page.split(f'id="{anchor}"', 1)[1].split("</article>", 1)[0]


def approve_section(page: str, anchor: str) -> str:
    item = panel(page, anchor)
    return item[item.index('class="decide-approve"'):item.index('class="decide-reject"')]


def said(op: CouponOperation) -> str:
    """The sentence a panel shows for the row `op` (the console's wording of one step)."""
    return str(step_sentence(Step.row(op.op_type, op.from_state, op.to_state,
                                      op.amount if op.from_state == op.to_state else None)))


def written(coupon_id, key):
    return list(CouponOperation.objects.filter(coupon_id=coupon_id, idempotency_key=key)
                .order_by("to_version"))


def test_approving_a_reversal_says_and_writes_one_reverse_row(signed_in, coupon):
    compensation = proposal(coupon)
    client = signed_in("operator", "bob")
    before = approve_section(text(client.get("/compensations/")),
                             f"compensation-{compensation.pk}")
    key = new_key()

    press(client, "compensation_approve", key, compensation_id=compensation.pk)

    [row] = written(coupon.pk, key)
    assert (row.op_type, row.from_state, row.to_state) == ("REVERSE", "USED", "AVAILABLE")
    assert said(row) in before


def test_approving_money_says_compensate_and_the_coupon_stays_as_it_is(signed_in, coupon):
    compensation = proposal(coupon, amount=Decimal("20.00"))
    client = signed_in("operator", "bob")
    before = approve_section(text(client.get("/compensations/")),
                             f"compensation-{compensation.pk}")
    key = new_key()

    press(client, "compensation_approve", key, compensation_id=compensation.pk)

    [row] = written(coupon.pk, key)
    assert (row.op_type, row.from_state, row.to_state, row.amount) == (
        "COMPENSATE", "USED", "USED", Decimal("20.00"))
    assert said(row) in before
    assert "¥20.00" in before and "REVERSE" not in before


def discount_refund_case(template):
    """Order A's payment arrived after order B took the coupon: refund A's discount."""
    coupon = fresh_coupon(template)
    _, first = lock(coupon, SYSTEM, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=first, reason="order closed", ctx=SYSTEM)
    _, proof = lock(coupon, SYSTEM, order_id="order-B")
    coupon.refresh_from_db()
    case = case_open(coupon=coupon, order_id="order-A", fact_type="PaymentSucceeded",
                     payment_id="pay-order-A", evidence={"coupon_state": coupon.status})
    assert case.recommendation == "ORDER_DISCOUNT_REFUND"
    return coupon, case, proof


def test_a_resolution_that_opens_a_compensation_says_so_before_and_after(signed_in, template):
    coupon, case, proof = discount_refund_case(template)
    client = signed_in("operator", "olga")
    before = panel(text(client.get("/cases/")), f"case-{case.pk}")
    assert "Opens a compensation of" in before and "second operator" in before
    key = new_key()

    after = text(press(client, "case_resolve", key, case_id=case.pk, action="APPLY",
                       note="B holds it"))

    opened = Compensation.objects.get(coupon=coupon, kind="ORDER_DISCOUNT_REFUND")
    assert written(coupon.pk, key) == []  # no ledger row until a second operator approves
    assert str(step_sentence(Step(Step.RECORD, record_kind=opened.kind,
                                  amount=opened.amount))) in before
    assert f"Compensation #{opened.pk}" in after and "second operator" in after

    # Approving it now would be refused (B holds the lease), and the panel says so ...
    bob = signed_in("operator", "bob")
    waiting = approve_section(text(bob.get("/compensations/")), f"compensation-{opened.pk}")
    assert "Refused now:" in waiting and "INVALID_STATE" in waiting
    # ... once B has paid, it says the COMPENSATE row it then writes, not a reversal.
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="pay-order-B", ctx=SYSTEM)
    before = approve_section(text(bob.get("/compensations/")), f"compensation-{opened.pk}")
    key = new_key()

    press(bob, "compensation_approve", key, compensation_id=opened.pk)

    [row] = written(coupon.pk, key)
    assert (row.op_type, row.to_state) == ("COMPENSATE", "USED")
    assert said(row) in before and "REVERSE" not in before


@pytest.mark.parametrize("choice, op_type, to_state", [
    ("RETURN", "RETURN", "AVAILABLE"), ("VOID", "VOID", "VOID"), ("KEEP_USED", None, "USED")])
def test_each_choice_of_a_manual_review_says_what_approving_it_writes(
        signed_in, template, choice, op_type, to_state):
    decision = pending_decision(fresh_coupon(template))
    client = signed_in("operator")
    before = approve_section(text(client.get("/approvals/")), f"decision-{decision.pk}")
    key = new_key()

    press(client, "decision_approve", key, decision_id=decision.pk, action=choice, note="ok")

    rows = written(decision.coupon_id, key)
    option = before[before.index(f">{choice}</abbr></span>:"):].split("</li>", 1)[0]
    if op_type is None:
        assert rows == [] and "Nothing is written to the ledger" in option
    else:
        [row] = rows
        assert (row.op_type, row.to_state) == (op_type, to_state)
        assert said(row) in option
    assert RefundCoupon.objects.get(pk=decision.pk).executed_action == choice


def test_applying_a_compensating_redeem_says_both_rows_it_writes(signed_in, coupon):
    case = late_payment_case(coupon)
    client = signed_in("operator")
    before = panel(text(client.get("/cases/")), f"case-{case.pk}")
    key = new_key()

    press(client, "case_resolve", key, case_id=case.pk, action="APPLY", note="paid")

    rows = written(coupon.pk, key)
    assert [(r.op_type, r.to_state) for r in rows] == [("LOCK", "LOCKED"), ("REDEEM", "USED")]
    for row in rows:
        assert said(row) in before


@pytest.mark.parametrize("action", ["DISMISS", "RESOLVE"])
def test_resolving_by_hand_or_dismissing_says_and_writes_nothing(signed_in, coupon, action):
    case = late_payment_case(coupon)
    client = signed_in("operator")
    before = panel(text(client.get("/cases/")), f"case-{case.pk}")
    key = new_key()

    press(client, "case_resolve", key, case_id=case.pk, action=action, note="bank refunded")

    assert written(coupon.pk, key) == []
    assert before.count("Nothing is written to the ledger") == 2  # by hand, and dismiss


def test_rejecting_says_and_writes_nothing(signed_in, coupon):
    compensation = proposal(coupon)
    client = signed_in("operator", "bob")
    item = panel(text(client.get("/compensations/")), f"compensation-{compensation.pk}")
    reject = item[item.index('class="decide-reject"'):]
    key = new_key()

    press(client, "compensation_reject", key, compensation_id=compensation.pk, note="no")

    assert written(coupon.pk, key) == [] and "Nothing is written to the ledger" in reject
