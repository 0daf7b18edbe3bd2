"""The operator's header fits one row at a laptop's 1366 px in Chinese, and after an htmx
action the keyboard goes on from the next thing to act on, not from the page's start."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from coupons.services import coupon_issue, template_create
from tests.browser.accessibility import axe_violations
from tests.browser.conftest import sign_in
from tests.browser.test_chinese import switch_to_chinese
from tests.refunds.conftest import default_policy  # noqa: F401 (a transactional test's flush drops it)
from tests.timeline.queue_objects import SYSTEM, pending_decision

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def one_row(page) -> bool:
    """Every item of the header shares the first item's row (same top, within a pixel or so)."""
    tops = page.evaluate("""() => [...document.querySelectorAll(
        'header.bar > .brand, header.bar nav a, header.bar form.search, header.bar .who > *')]
        .map((item) => item.getBoundingClientRect().top)""")
    return max(tops) - min(tops) < 12


def test_the_operators_chinese_header_is_one_row_at_1366_px(page, person):
    person("operator", "olga")
    page.set_viewport_size({"width": 1366, "height": 800})
    sign_in(page, "olga")
    switch_to_chinese(page)

    header = page.locator("header.bar")
    expect(header.get_by_role("link", name="审批")).to_be_visible()
    height = header.bounding_box()["height"]
    link = header.locator("nav a").first.bounding_box()["height"]
    assert one_row(page) and height < 2 * link + 8, height
    assert axe_violations(page) == []


def test_after_an_approval_focus_is_on_its_result_and_the_next_approve_is_near(
        page, person, clock, default_policy):  # noqa: F811
    template = template_create(
        code="off30", name="30 off 200", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
        min_order_amount=Decimal("200.00"), valid_days=30)
    first, second = (
        pending_decision(coupon_issue(template_id=template.pk, user_id=user, ctx=SYSTEM).coupon,
                         order_id=f"order-{user}")
        for user in ("u1", "u2"))
    person("operator", "olga")
    sign_in(page, "olga", "/approvals/")
    switch_to_chinese(page)
    page.on("dialog", lambda dialog: dialog.accept())

    item = page.locator(f"#decision-{first.pk}")
    item.get_by_label("券如何处理").select_option("RETURN")
    item.get_by_role("button", name="批准").focus()
    page.keyboard.press("Enter")
    page.locator(f"#decision-{first.pk} [role='status']").wait_for()

    expect(page.locator(f"#decision-{first.pk} [role='status']")).to_be_focused()
    next_approve = page.locator(f"#decision-{second.pk}").get_by_role("button", name="批准")
    tabs = 0
    target = next_approve.element_handle()
    while not page.evaluate("(button) => document.activeElement === button", target) \
            and tabs < 30:
        page.keyboard.press("Tab")
        tabs += 1
    print(f"Tabs from the result to the next 批准: {tabs}")
    assert tabs <= 8
    assert axe_violations(page) == []
