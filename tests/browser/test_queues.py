"""The approvals queue in a real browser: an operator approves, support only reads."""

import pytest

from coupons.models import CouponOperation
from coupons.services import coupon_issue, template_create
from tests.browser.conftest import sign_in
from tests.refunds.conftest import default_policy  # noqa: F401 (a transactional test's flush drops it)
from tests.timeline.queue_objects import SYSTEM, pending_decision

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def decision(clock, default_policy):  # noqa: F811
    from decimal import Decimal

    template = template_create(
        code="off30", name="30 off 200", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
        min_order_amount=Decimal("200.00"), valid_days=30,
    )
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=SYSTEM).coupon
    return pending_decision(coupon)


def test_an_operator_approves_a_refund_decision_and_sees_the_return_row(page, person, decision):
    person("operator", "olga")
    sign_in(page, "olga", "/approvals/")
    item = page.locator(f"#decision-{decision.pk}")
    item.get_by_label("What happens to the coupon").select_option("RETURN")
    item.get_by_label("Note").fill("customer sent the goods back")
    dialogs = []
    page.once("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.accept()))

    item.get_by_role("button", name="Approve").click()

    new_rows = page.locator(f"#decision-{decision.pk} table.ledger-new")
    new_rows.wait_for()
    assert dialogs == [f"Approve refund decision #{decision.pk}?"]
    returned = CouponOperation.objects.get(coupon_id=decision.coupon_id, op_type="RETURN")
    row = page.locator(f"#op-{returned.pk}")
    assert row.is_visible()
    assert "return RETURN" in row.inner_text()
    assert "used USED → available AVAILABLE" in row.inner_text()  # words, codes in badges
    assert page.url.endswith("/approvals/")  # answered in place, no page load
    assert page.locator(f"#decision-{decision.pk} .badge").inner_text() == "EXECUTED"


def test_support_opens_the_approvals_queue_and_sees_no_action_buttons(page, person, decision):
    person("support", "sam")
    sign_in(page, "sam", "/approvals/")

    item = page.locator(f"#decision-{decision.pk}")
    assert item.is_visible()
    assert "Risk-flagged refunds are reviewed by an operator" in item.inner_text()
    assert item.get_by_role("button").count() == 0
    assert page.get_by_role("button", name="Approve").count() == 0
    assert page.get_by_role("link", name="Approvals").count() == 0
