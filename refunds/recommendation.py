"""What the return policy recommends for a refund decision waiting for an operator.

A rule that decides an action and asks for approval first recommends that action. A
MANUAL_REVIEW rule decides nothing, so its recommendation is what the same version's later
rules decide from the facts stored with the decision (skipping rules whose action an operator
cannot choose for a manual review): the operator sees what the policy would have done, and
still chooses. Pure: reads only the decision, its stored facts and its version's rules.

That recommendation is evidence and never changes. A decision waits while its coupon may
move (a reversal, a void): `decision_now` reads it again against the coupon as it is, beside
the stored one, so the page offers only what the coupon's current state allows and says why
the stored recommendation no longer fits.
"""

from dataclasses import dataclass

from refunds.models import RefundCoupon
from refunds.policy_engine import RefundFacts, rule_matches
from refunds.rule_labels import decided_rule, rule_words
from refunds.services.refund_review import MANUAL_CHOICES, actions_allowed


@dataclass(frozen=True)
class Recommendation:
    action: str | None  # None: nothing to recommend, the operator decides from the facts
    rule_number: int | None  # 1-based, as a policy admin counts rules
    rule_label: str  # in the reader's language (a rule's label pair), read with the page
    manual_review: bool  # the decision's own rule sent it to a person


def decision_recommendation(decision: RefundCoupon) -> Recommendation:
    if decision.action != RefundCoupon.Action.MANUAL_REVIEW:
        number = None if decision.rule_index is None else decision.rule_index + 1
        return Recommendation(decision.action, number, rule_words(decided_rule(decision)),
                              False)
    version, fired = decision.policy_version, decision.rule_index
    if version is None or fired is None or not decision.facts:
        return Recommendation(None, None, "", True)
    facts = RefundFacts.from_json(decision.facts)
    for index in range(fired + 1, len(version.rules)):
        rule = version.rules[index]
        if rule.get("action") in MANUAL_CHOICES and rule_matches(rule, facts):
            return Recommendation(rule["action"], index + 1, rule_words(rule), True)
    return Recommendation(None, None, "", True)


@dataclass(frozen=True)
class DecisionNow:
    """A waiting decision read against its coupon as it is now."""

    stored: Recommendation  # what the policy recommended from the stored facts
    options: tuple[str, ...]  # what approving may carry out now
    action: str | None  # the stored recommendation while it still fits, else None
    coupon_state: str
    coupon_version: int
    moved: bool  # the coupon's state no longer allows the stored recommendation (or choices)


def decision_now(decision: RefundCoupon, coupon) -> DecisionNow:
    stored = decision_recommendation(decision)
    options = actions_allowed(decision, coupon)
    wanted = MANUAL_CHOICES if decision.action == RefundCoupon.Action.MANUAL_REVIEW \
        else (decision.action,)
    fits = stored.action is None or stored.action in options
    return DecisionNow(stored=stored, options=options, action=stored.action if fits else None,
                       coupon_state=coupon.status, coupon_version=coupon.state_version,
                       moved=not fits or len(options) < len(wanted))
