"""Safe operator forms in a real browser, each page checked by axe-core.

Nothing is pre-selected on an approval, the policy's recommendation is said in a sentence,
approve and reject are two sections; a proposer is told why there is no Approve button; a
compensation is proposed from the ledger row's own button; queues open on what needs work.
"""

import pytest
from playwright.sync_api import expect

from refunds.models import Compensation
from tests.browser.accessibility import axe_violations
from tests.browser.conftest import sign_in
from tests.refunds.conftest import default_policy  # noqa: F401 (a transactional test's flush drops it)
from tests.timeline.queue_objects import fresh_coupon, late_payment_case, pending_decision, redeemed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_approval_preselects_nothing_and_says_what_the_policy_recommends(
        page, person, template, default_policy):  # noqa: F811
    decision = pending_decision(fresh_coupon(template))
    person("operator", "olga")
    sign_in(page, "olga", "/approvals/")
    item = page.locator(f"#decision-{decision.pk}")

    choice = item.get_by_label("What happens to the coupon")
    expect(choice).to_have_value("")  # "Choose…", never RETURN by default
    expect(item.locator(".recommendation")).to_contain_text(
        "RETURN This refund was sent to a person; without that review the policy's rule 5")
    approve = item.locator("section.decide-approve")
    reject = item.locator("section.decide-reject")
    expect(approve.get_by_role("heading", name="Approve")).to_be_visible()
    expect(reject.get_by_role("heading", name="Reject")).to_be_visible()
    expect(approve.get_by_label("Reason")).to_have_count(0)  # the reason belongs to reject
    expect(reject.get_by_label("Note")).to_have_count(0)
    assert axe_violations(page) == []

    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.accept()))
    approve.get_by_role("button", name="Approve").click()

    # The browser itself stops an approval with nothing chosen (the server would too).
    assert choice.evaluate("select => select.validity.valueMissing") is True
    assert dialogs == []
    decision.refresh_from_db()
    assert decision.status == "PENDING_APPROVAL"


def test_a_proposer_sees_why_there_is_no_approve_button_and_another_operator_approves(
        page, person, template):
    coupon = fresh_coupon(template)
    redeem = redeemed(coupon)
    person("operator", "olga")
    person("operator", "otto")
    sign_in(page, "olga", f"/coupons/{coupon.pk}/")

    # The ledger row's own button: the row is carried by the link, nothing to type but why.
    page.locator(f"a[href='/compensations/propose?operation={redeem.pk}']").click()
    page.wait_for_url(f"**/compensations/propose?operation={redeem.pk}")
    expect(page.get_by_label("reversing this operation")).to_be_checked()
    expect(page.get_by_label("Coupon", exact=True)).to_have_count(0)
    assert axe_violations(page) == []
    page.get_by_label("Reason").fill("redeemed by mistake")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Propose").click()

    made = page.locator(".queue-item .badge", has_text="PROPOSED")
    expect(made).to_be_visible()
    compensation = Compensation.objects.get()
    assert (compensation.operation_id, compensation.kind, compensation.created_by) == (
        redeem.pk, "REVERSE_OPERATION", "user:olga")

    page.goto("/compensations/")
    own = page.locator(f"#compensation-{compensation.pk}")
    expect(own).to_contain_text("You proposed this compensation. Under the four-eyes rule")
    expect(own.get_by_role("button")).to_have_count(0)
    assert axe_violations(page) == []

    page.get_by_role("button", name="Sign out").click()
    sign_in(page, "otto", "/compensations/")
    other = page.locator(f"#compensation-{compensation.pk}")
    expect(other.get_by_role("button", name="Approve")).to_be_visible()
    expect(other.get_by_role("button", name="Reject")).to_be_visible()


def test_a_link_to_no_ledger_row_shows_only_the_not_found_box(page, person):
    person("operator", "olga")
    sign_in(page, "olga", "/compensations/propose?operation=999999")

    expect(page.locator(".outcome.error")).to_contain_text("NOT_FOUND")
    expect(page.locator(".errorlist")).to_have_count(0)
    expect(page.locator("main form")).to_have_count(0)  # nothing to fill in
    assert axe_violations(page) == []


def test_the_queues_open_on_what_needs_work(page, person, template):
    open_case = late_payment_case(fresh_coupon(template, "u1"), order_id="order-open")
    person("operator", "olga")
    sign_in(page, "olga", "/cases/")

    expect(page.locator("nav.filters [aria-current]")).to_have_text("Open")
    expect(page.locator(f"#case-{open_case.pk}")).to_be_visible()
    expect(page.locator(f"#case-{open_case.pk}").get_by_label("Action")).to_have_value("")
    assert axe_violations(page) == []
    page.goto("/compensations/")
    expect(page.locator("nav.filters [aria-current]")).to_have_text("Proposed")
    page.goto("/approvals/")
    expect(page.locator("nav.filters [aria-current]")).to_have_text("Pending")
