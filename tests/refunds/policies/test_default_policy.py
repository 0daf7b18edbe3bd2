"""The shipped default policy, on real coupons of each kind: full refund within 30 days returns
the coupon (RETURN even past validity: the executor lands it in EXPIRED), exchange coupons never
return, partial refunds keep the coupon used."""

from datetime import timedelta
from decimal import Decimal

import pytest

from coupons.services import coupon_issue, template_create
from refunds.policy_engine import RefundFacts, RefundType, decide, policy_version_for

pytestmark = pytest.mark.django_db

KINDS = {
    "AMOUNT_OFF": {"face_value": Decimal("30.00")},
    "PERCENT_OFF": {"percent_off": Decimal("10"), "max_discount": Decimal("50.00")},
    "EXCHANGE": {"face_value": Decimal("25.00")},
}


@pytest.fixture
def coupon_of(clock, ctx):
    def make(kind, **terms):
        template = template_create(code=f"t-{kind.lower()}", name=kind, kind=kind, valid_days=10,
                                   **KINDS[kind], **terms)
        return coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    return make


def decision_for(coupon, *, refund_type, days_after_issue, risk_flag=False):
    """The default policy's decision for a refund `days_after_issue` after issue (redeemed
    at issue), with facts built from the coupon as the refund flow builds them."""
    at = coupon.issued_at + timedelta(days=days_after_issue)
    terms = coupon.template_version
    facts = RefundFacts(
        refund_type=refund_type,
        refunded_share=Decimal("1") if refund_type == RefundType.FULL else Decimal("0.4"),
        coupon_expired=at > coupon.valid_until,
        template_kind=terms.kind, template_returnable=terms.returnable,
        campaign_closed=not coupon.template.issuable, risk_flag=risk_flag,
        days_since_redemption=days_after_issue, face_value=terms.face_value,
    )
    version = policy_version_for(terms, at)
    assert (version.policy.code, version.number) == ("default", 1)
    return facts, decide(version, facts)


@pytest.mark.parametrize("kind", ["AMOUNT_OFF", "PERCENT_OFF"])
@pytest.mark.parametrize("days", [1, 20])  # before and after the 10-day validity
def test_full_refund_within_30_days_returns_the_coupon(coupon_of, kind, days):
    facts, decision = decision_for(coupon_of(kind), refund_type="FULL", days_after_issue=days)

    assert facts.coupon_expired is (days == 20)
    assert decision.action == "RETURN"
    assert decision.rule_label == "Full refund within 30 days of redemption returns the coupon"
    assert decision.requires_approval is False


@pytest.mark.parametrize("kind", ["AMOUNT_OFF", "PERCENT_OFF"])
@pytest.mark.parametrize("days", [1, 20])
def test_partial_refund_keeps_the_coupon_used(coupon_of, kind, days):
    _, decision = decision_for(coupon_of(kind), refund_type="PARTIAL", days_after_issue=days)

    assert (decision.action, decision.rule_label) == (
        "KEEP_USED", "Partial refunds keep the coupon used")


@pytest.mark.parametrize("refund_type", ["FULL", "PARTIAL"])
@pytest.mark.parametrize("days", [1, 20])
def test_exchange_coupons_never_return(coupon_of, refund_type, days):
    _, decision = decision_for(coupon_of("EXCHANGE"), refund_type=refund_type,
                               days_after_issue=days)

    assert (decision.action, decision.rule_index) == ("KEEP_USED", 0)


def test_full_refund_after_30_days_keeps_the_coupon_used(coupon_of):
    coupon = coupon_of("AMOUNT_OFF")

    assert decision_for(coupon, refund_type="FULL", days_after_issue=30)[1].action == "RETURN"
    late = decision_for(coupon, refund_type="FULL", days_after_issue=31)[1]
    assert (late.action, late.rule_label) == ("KEEP_USED", "Otherwise the coupon stays used")


def test_non_returnable_template_keeps_the_coupon_used(coupon_of):
    _, decision = decision_for(coupon_of("AMOUNT_OFF", returnable=False), refund_type="FULL",
                               days_after_issue=1)

    assert decision.action == "KEEP_USED"


def test_risk_flagged_full_refund_waits_for_an_operator(coupon_of):
    _, decision = decision_for(coupon_of("AMOUNT_OFF"), refund_type="FULL",
                               days_after_issue=1, risk_flag=True)

    assert (decision.action, decision.requires_approval) == ("MANUAL_REVIEW", True)
