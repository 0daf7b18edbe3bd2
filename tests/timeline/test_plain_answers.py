"""The check panel answers in plain sentences that stay true: no enum code
in running text (codes sit in a badge), every case, order, decision and compensation a link,
and what waits for a person now, also after a case is resolved."""

import re

import pytest
from django.urls import reverse

from coupons.services import CommandContext
from coupons.services.cases import case_resolve
from tests.timeline.queue_objects import (
    fresh_coupon,
    late_payment_case,
    pending_decision,
    proposal,
)

pytestmark = pytest.mark.django_db

CODE = re.compile(r"\b[A-Z]{2,}(?:_[A-Z]+)+\b|\b(?:AVAILABLE|LOCKED|USED|EXPIRED|VOID)\b")


@pytest.fixture
def support(signed_in):
    return signed_in("support")


def panel(client, coupon) -> str:
    page = client.get(reverse("console:coupon", args=[coupon.pk])).content.decode()
    check = page.split('aria-labelledby="check-title"')[1]
    return check.split('<p class="replay">')[0]


def running_text(html: str) -> str:
    """What a person reads, without the code badges."""
    without_badges = re.sub(r'<span class="code-badge">.*?</span>', "", html)
    return re.sub(r"<[^>]+>", "", without_badges)


def test_the_running_text_check_finds_a_code():
    # The check below must be able to fail: a code in the sentence is caught ...
    assert CODE.search(running_text("Recommended: ORDER_DISCOUNT_REFUND."))
    assert CODE.search(running_text("It will show EXPIRED soon."))
    # ... and one inside its badge is not.
    assert not CODE.search(running_text(
        'refund it <span class="code-badge"><abbr title="x">ORDER_DISCOUNT_REFUND</abbr></span>'))


def test_an_open_case_is_a_link_and_its_recommendation_plain_words(support, template):
    coupon = fresh_coupon(template)
    case = late_payment_case(coupon)

    check = panel(support, coupon)

    assert f'<a href="/cases/?status=open#case-{case.pk}">#{case.pk}</a>' in check
    assert '<a href="/search/?q=order-A">order-A</a>' in check
    assert ("use the coupon for the paid order now <span class=\"code-badge\"><abbr title="
            in check)
    assert ">COMPENSATING_REDEEM</abbr></span>" in check
    assert not CODE.search(running_text(check)), running_text(check)


def test_a_refund_decision_waiting_for_approval_is_shown_and_linked(support, template):
    coupon = fresh_coupon(template)
    decision = pending_decision(coupon)

    check = panel(support, coupon)

    assert "Waiting for a person now:" in check
    assert (f'Refund decision <a href="/approvals/?status=pending#decision-{decision.pk}">'
            f'#{decision.pk}</a> for order <a href="/search/?q=order-R">order-R</a> waits for '
            "an operator&#x27;s approval (the policy says: a person decides") in check
    assert not CODE.search(running_text(check)), running_text(check)


def test_after_the_case_is_resolved_the_compensation_still_waiting_is_shown(support, template):
    coupon = fresh_coupon(template)
    case = late_payment_case(coupon)
    compensation = proposal(coupon, proposer="user:alice")
    case_resolve(case_id=case.pk, action="DISMISS", note="customer agreed",
                 ctx=CommandContext(actor="user:olga"))

    check = panel(support, coupon)

    assert "is open for order" not in check  # the case is no longer the answer ...
    assert (f'Compensation <a href="/compensations/?status=proposed#compensation-'
            f'{compensation.pk}">#{compensation.pk}</a> for order ') in check  # ... this is
    assert "was proposed by user:alice and waits for a second operator" in check
    assert not CODE.search(running_text(check)), running_text(check)


def test_times_in_the_answer_carry_their_zone(support, coupon):
    support.cookies["console_browser_tz"] = "Asia/Shanghai"

    check = panel(support, coupon)

    # The template's 30 days from the frozen 2026-06-01 12:00 UTC, in Shanghai.
    assert re.search(r"Usable now until <time datetime=\"[^\"]+\" title=\"[^\"]+\">"
                     r"2026-07-01 20:00 UTC\+8</time>\.", check), check
