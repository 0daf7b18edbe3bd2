"""What the policy recommends for a decision waiting for an operator (refunds.recommendation).

Pure: built from unsaved rows, as the queue reads them."""

from decimal import Decimal

from refunds.models import RefundCoupon, ReturnPolicyVersion
from refunds.policy_engine import RefundFacts
from refunds.recommendation import decision_recommendation

FACTS = RefundFacts(refund_type="FULL", refunded_share=Decimal("1"), coupon_expired=False,
                    template_kind="AMOUNT_OFF", template_returnable=True, campaign_closed=False,
                    risk_flag=True, days_since_redemption=40, face_value=Decimal("30.00"))
REVIEW = {"label": "Risky", "when": {"risk_flag": True}, "action": "MANUAL_REVIEW"}


def decision(rules, *, action="MANUAL_REVIEW", fired=0):
    return RefundCoupon(action=action, rule_index=fired, rule_label=rules[fired]["label"],
                        facts=FACTS.as_json(), policy_version=ReturnPolicyVersion(rules=rules))


def test_a_manual_review_recommends_the_first_later_rule_that_holds_and_an_operator_may_choose():
    rules = [REVIEW,
             {"label": "Recent", "when": {"days_since_redemption_max": 30}, "action": "RETURN"},
             {"label": "Credit", "when": {"refund_type": "FULL"}, "action": "COMPENSATE"},
             {"label": "Full", "when": {"refund_type": "FULL"}, "action": "VOID"},
             {"label": "Otherwise", "when": {}, "action": "KEEP_USED"}]

    recommended = decision_recommendation(decision(rules))

    # "Recent" does not hold (40 days); COMPENSATE is not a manual review's choice.
    assert (recommended.action, recommended.rule_number, recommended.rule_label) == (
        "VOID", 4, "Full")
    assert recommended.manual_review


def test_a_manual_review_with_no_later_choice_recommends_nothing():
    rules = [REVIEW, {"label": "Otherwise", "when": {}, "action": "MANUAL_REVIEW"}]

    recommended = decision_recommendation(decision(rules))

    assert (recommended.action, recommended.rule_number) == (None, None)


def test_a_rule_that_asks_for_approval_recommends_its_own_action():
    rules = [{"label": "Full", "when": {}, "action": "RETURN", "requires_approval": True}]

    recommended = decision_recommendation(decision(rules, action="RETURN"))

    assert (recommended.action, recommended.rule_number, recommended.manual_review) == (
        "RETURN", 1, False)
