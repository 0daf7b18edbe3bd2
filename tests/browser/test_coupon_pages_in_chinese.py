"""A coupon page in every state the services reach, read in Chinese in a real browser: no
English word outside codes, ids and badges (tests/browser/chinese_words.py), text the services
stored in English included, since it is read from its message code (docs/i18n.md). Each page
passes axe-core too. Whatever the test typed (reasons, notes) is Chinese, as the floor's are.
"""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from coupons.errors import CouponError
from coupons.evidence.tips import journal_tip
from coupons.ledger_reasons import reason
from coupons.services import (
    CommandContext,
    coupon_expire,
    coupon_lock,
    coupon_release,
    coupon_renew,
    coupon_void,
    template_create,
)
from coupons.write.context import LeaseProof
from refunds.models import Compensation
from refunds.services import refund_receive
from refunds.services.compensation_decide import compensation_approve
from refunds.services.compensation_propose import compensation_propose
from tests.browser.accessibility import axe_violations
from tests.browser.chinese_words import english_words
from tests.browser.conftest import sign_in
from tests.browser.test_chinese import switch_to_chinese
from tests.conftest import lock
from tests.refunds.conftest import default_policy  # noqa: F401 (a transactional test's flush drops it)
from tests.timeline.queue_objects import fresh_coupon, pending_decision, redeemed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SYSTEM = CommandContext(actor="test")
SCANNER = CommandContext(actor="system:lease-scanner")
# What the test typed, and its people's logins and the fixtures' actor id.
TYPED = ["活动提前结束", "误核销", "同意", "olga", "test"]


@pytest.fixture
def template(clock):
    return template_create(code="off30", name="满200减30", kind="AMOUNT_OFF",
                           face_value=Decimal("30.00"), min_order_amount=Decimal("200.00"),
                           valid_days=30)


def available(coupon, clock):
    return coupon


def locked(coupon, clock):
    lock(coupon, SYSTEM, order_id="order-L", lease_seconds=600)
    return coupon


def renewed(coupon, clock):
    _, proof = lock(coupon, SYSTEM, order_id="order-L", lease_seconds=600)
    coupon_renew(coupon_id=coupon.pk, lease=proof, lease_seconds=900, ctx=SYSTEM)
    return coupon


def used(coupon, clock):
    redeemed(coupon, "order-U")
    return coupon


def released_then_available(coupon, clock):
    result, _ = lock(coupon, SYSTEM, order_id="order-L", lease_seconds=60)
    clock.advance(minutes=5)
    coupon_release(coupon_id=coupon.pk, ctx=SCANNER, reason=reason("lease_expired"),
                   lease=LeaseProof.from_lock(result.lock, expected_version=2))
    return coupon


def expired(coupon, clock):
    clock.advance(days=31)
    coupon_expire(coupon_id=coupon.pk, expected_version=1, ctx=SYSTEM)
    return coupon


def voided(coupon, clock):
    coupon_void(coupon_id=coupon.pk, expected_version=1, reason="活动提前结束",
                ctx=CommandContext(actor="user:olga"))
    return coupon


def returned(coupon, clock):
    redeemed(coupon, "order-R")
    refund_receive(refund_id="refund-R", order_id="order-R", payment_id="pay-order-R",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=SYSTEM)
    return coupon


def with_a_decision_to_review(coupon, clock):
    pending_decision(coupon, "order-D")
    return coupon


def with_a_compensation(coupon, clock):
    operation = redeemed(coupon, "order-C")
    proposed = compensation_propose(coupon_id=coupon.pk, operation_id=operation.pk,
                                    reason="误核销", ctx=CommandContext(actor="user:alice"))
    compensation_approve(compensation_id=proposed.pk, note="同意",
                         seen_entry=journal_tip(Compensation, proposed.pk),
                         ctx=CommandContext(actor="user:olga"))
    return coupon


def with_refusals(coupon, clock):
    """A lock below the threshold, a renew of no lease, then a lock by a second order."""
    for refused in (
        lambda: coupon_lock(coupon_id=coupon.pk, order_id="order-small", user_id=coupon.user_id,
                            order_amount=Decimal("120.00"), ctx=SYSTEM),
        lambda: coupon_renew(coupon_id=coupon.pk, lease_seconds=60, ctx=SYSTEM,
                             lease=LeaseProof.from_token(order_id="order-X", lock_token="x",
                                                         expected_version=1)),
    ):
        with pytest.raises(CouponError):
            refused()
    lock(coupon, SYSTEM, order_id="order-L")
    with pytest.raises(CouponError):
        lock(coupon, SYSTEM, order_id="order-M")
    return coupon


STATES = [available, locked, renewed, used, released_then_available, expired, voided, returned,
          with_a_decision_to_review, with_a_compensation, with_refusals]


@pytest.mark.parametrize("state", STATES, ids=[state.__name__ for state in STATES])
def test_the_coupon_page_in_chinese_says_no_english_word(
        page, person, template, clock, default_policy, state):  # noqa: F811
    coupon = state(fresh_coupon(template, "user_demo_1"), clock)
    person("operator", "olga")
    sign_in(page, "olga", f"/coupons/{coupon.pk}/")
    switch_to_chinese(page)

    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    found = english_words(page, TYPED)
    assert found == [], f"{state.__name__}: {found}"
    assert axe_violations(page) == []


def test_the_refund_questions_reply_is_chinese_first_and_english_beside_it(
        page, person, template, clock, default_policy):  # noqa: F811
    coupon = returned(fresh_coupon(template, "user_demo_1"), clock)
    person("operator", "olga")
    sign_in(page, "olga", f"/coupons/{coupon.pk}/")
    switch_to_chinese(page)

    chinese = page.locator("#reply-refund-zh-hans").inner_text()
    english = page.locator("#reply-refund-en").inner_text()
    assert "order-R" in chinese and "退" in chinese
    assert english.startswith("Hello! After the refund of order order-R your coupon was "
                              "returned")
    found = english_words(page, TYPED)
    assert found == [], found


def test_stored_english_is_reported_though_marked_as_english(page, person, template, clock):
    """The check's own proof: a ledger reason stored without its code (a row from before the
    codes) shows in English, marked lang="en", and the check names its words."""
    coupon = fresh_coupon(template, "user_demo_1")
    coupon_void(coupon_id=coupon.pk, expected_version=1, reason="campaign over",
                ctx=CommandContext(actor="user:olga"))
    person("operator", "olga")
    sign_in(page, "olga", f"/coupons/{coupon.pk}/")
    switch_to_chinese(page)

    found = english_words(page, TYPED)
    assert "campaign (span.stored)" in found and "over (span.stored)" in found
