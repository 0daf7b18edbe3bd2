"""Return policy rules (docs/after-sale.md): what they may say, and the first-match decision.

A policy version is an ordered list of rules; the first rule whose conditions all hold decides,
and the last rule has no conditions, so every set of facts gets exactly one decision. `decide`
is pure (no queries) so a decision can be replayed from the facts stored with it, and a draft
can be tried against past refunds before it is published.
"""

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from coupons.errors import NotFound, ValidationFailed
from coupons.models import CouponKind, CouponTemplate
from refunds.models import ReturnPolicy, ReturnPolicyVersion
from refunds.rule_labels import LABEL_LANGUAGES


class RefundType:
    FULL = "FULL"
    PARTIAL = "PARTIAL"
    ALL = (FULL, PARTIAL)


class Action:
    RETURN = "RETURN"  # the coupon comes back (EXPIRED instead when past valid_until)
    KEEP_USED = "KEEP_USED"  # the coupon stays USED
    VOID = "VOID"  # the coupon is voided
    COMPENSATE = "COMPENSATE"  # the coupon stays USED; a new coupon or a credit is given
    MANUAL_REVIEW = "MANUAL_REVIEW"  # an operator decides
    ALL = (RETURN, KEEP_USED, VOID, COMPENSATE, MANUAL_REVIEW)


@dataclass(frozen=True)
class RefundFacts:
    """What a decision looks at; stored as JSON with each decision so it can be replayed."""

    refund_type: str
    refunded_share: Decimal
    coupon_expired: bool
    template_kind: str
    template_returnable: bool
    campaign_closed: bool
    risk_flag: bool
    days_since_redemption: int
    face_value: Decimal | None

    def as_json(self) -> dict:
        data = asdict(self)
        data["refunded_share"] = str(self.refunded_share)
        data["face_value"] = None if self.face_value is None else str(self.face_value)
        return data

    @classmethod
    def from_json(cls, data) -> "RefundFacts":
        face_value = data.get("face_value")
        return cls(
            refund_type=data["refund_type"],
            refunded_share=Decimal(str(data["refunded_share"])),
            coupon_expired=bool(data["coupon_expired"]),
            template_kind=data["template_kind"],
            template_returnable=bool(data["template_returnable"]),
            campaign_closed=bool(data["campaign_closed"]),
            risk_flag=bool(data["risk_flag"]),
            days_since_redemption=int(data["days_since_redemption"]),
            face_value=None if face_value is None else Decimal(str(face_value)),
        )


@dataclass(frozen=True)
class PolicyDecision:
    action: str
    rule_index: int  # 0-based position of the rule that matched
    rule_label: str
    requires_approval: bool
    # COMPENSATE only: {"template_id": int} or {"amount": "12.00"}; otherwise {}.
    compensation: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        return asdict(self)


# --- conditions ---------------------------------------------------------------------------

class Invalid(Exception):
    """One field's problem, as the message shown beside it."""


def _decimal(value) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise Invalid(_("must be a number"))
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise Invalid(_("must be a number")) from None
    if not number.is_finite():
        raise Invalid(_("must be a number"))
    return number


def _flag(value) -> bool:
    if not isinstance(value, bool):
        raise Invalid(_("must be true or false"))
    return value


def _share(value) -> str:
    share = _decimal(value)
    if not 0 <= share <= 1:
        raise Invalid(_("must be between 0 and 1"))
    return str(share)


def _money_bound(value) -> str:
    amount = _decimal(value)
    if amount < 0:
        raise Invalid(_("must be zero or more"))
    return str(amount)


def _days(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 36500:
        raise Invalid(_("must be a whole number of days between 0 and 36500"))
    return value


def _refund_type(value) -> str:
    if value not in RefundType.ALL:
        raise Invalid(_("must be one of %(choices)s") % {"choices": ", ".join(RefundType.ALL)})
    return value


def _kinds(value) -> list:
    if not isinstance(value, list) or not value:
        raise Invalid(_("must be a non-empty list of coupon kinds"))
    unknown = [kind for kind in value if kind not in CouponKind.values]
    if unknown:
        raise Invalid(_("unknown kinds %(unknown)s; use %(choices)s")
                      % {"unknown": unknown, "choices": ", ".join(CouponKind.values)})
    return sorted(set(value))


@dataclass(frozen=True)
class Condition:
    parse: Callable  # raw JSON value -> stored value, or raises Invalid
    holds: Callable  # (facts, stored value) -> bool
    help: str


def _at_least(attribute):
    def holds(facts, bound):
        value = getattr(facts, attribute)
        return value is not None and value >= Decimal(str(bound))

    return holds


def _at_most(attribute):
    def holds(facts, bound):
        value = getattr(facts, attribute)
        return value is not None and value <= Decimal(str(bound))

    return holds


def _equals(attribute):
    return lambda facts, expected: getattr(facts, attribute) == expected


CONDITIONS: dict[str, Condition] = {
    "refund_type": Condition(
        _refund_type, _equals("refund_type"),
        gettext_lazy("FULL or PARTIAL: whether the order's refunds so far add up to its paid "
                     "amount")),
    "refunded_share_min": Condition(
        _share, _at_least("refunded_share"),
        gettext_lazy("refunded / paid amount is at least this (0..1)")),
    "refunded_share_max": Condition(
        _share, _at_most("refunded_share"),
        gettext_lazy("refunded / paid amount is at most this (0..1)")),
    "coupon_expired": Condition(
        _flag, _equals("coupon_expired"),
        gettext_lazy("the coupon is past valid_until at decision time")),
    "template_kind": Condition(
        _kinds, lambda facts, kinds: facts.template_kind in kinds,
        gettext_lazy("the coupon's kind is one of these (AMOUNT_OFF, PERCENT_OFF, EXCHANGE)")),
    "template_returnable": Condition(
        _flag, _equals("template_returnable"), gettext_lazy("the template's returnable flag")),
    "campaign_closed": Condition(
        _flag, _equals("campaign_closed"), gettext_lazy("the template no longer issues coupons")),
    "risk_flag": Condition(
        _flag, _equals("risk_flag"), gettext_lazy("the refund fact carries a risk flag")),
    "days_since_redemption_min": Condition(
        _days, lambda facts, days: facts.days_since_redemption >= days,
        gettext_lazy("whole days from redemption to the refund are at least this")),
    "days_since_redemption_max": Condition(
        _days, lambda facts, days: facts.days_since_redemption <= days,
        gettext_lazy("whole days from redemption to the refund are at most this")),
    "face_value_min": Condition(
        _money_bound, _at_least("face_value"),
        gettext_lazy("the coupon's face value is at least this (never holds without a face "
                     "value)")),
    "face_value_max": Condition(
        _money_bound, _at_most("face_value"),
        gettext_lazy("the coupon's face value is at most this (never holds without a face "
                     "value)")),
}

RANGES = [
    ("refunded_share_min", "refunded_share_max"),
    ("days_since_redemption_min", "days_since_redemption_max"),
    ("face_value_min", "face_value_max"),
]

RULE_KEYS = {"label", "labels", "when", "action", "requires_approval", "compensation"}
MAX_RULES = 100
MAX_LABEL = 200


def rule_matches(rule: dict, facts: RefundFacts) -> bool:
    return all(CONDITIONS[name].holds(facts, value)
               for name, value in rule.get("when", {}).items())


def decide(version: ReturnPolicyVersion, facts: RefundFacts) -> PolicyDecision:
    """The first rule whose conditions all hold decides. Pure: reads only `version.rules`."""
    for index, rule in enumerate(version.rules):
        if rule_matches(rule, facts):
            action = rule["action"]
            return PolicyDecision(
                action=action, rule_index=index, rule_label=rule["label"],
                # A manual review is a person's decision by definition.
                requires_approval=bool(rule.get("requires_approval"))
                or action == Action.MANUAL_REVIEW,
                compensation=dict(rule.get("compensation") or {}),
            )
    # validate_rules makes the last rule match everything; reaching here is a bug.
    raise LookupError(f"policy version {version.pk} has no rule for {facts}")


# --- validation ---------------------------------------------------------------------------

def _clean_when(when) -> tuple[dict, dict]:
    if not isinstance(when, dict):
        return {}, [_("must be an object of conditions")]
    cleaned, problems = {}, {}
    for name, value in when.items():
        condition = CONDITIONS.get(name)
        if condition is None:
            problems[name] = [_("unknown condition; use %(choices)s")
                              % {"choices": ", ".join(CONDITIONS)}]
            continue
        try:
            cleaned[name] = condition.parse(value)
        except Invalid as invalid:
            problems[name] = [str(invalid)]
    for low, high in RANGES:
        if low in cleaned and high in cleaned and Decimal(str(cleaned[low])) > Decimal(
            str(cleaned[high])
        ):
            problems[low] = [_("must not exceed %(high)s") % {"high": high}]
    return cleaned, problems


def _clean_compensation(compensation, action) -> tuple[dict, object]:
    if action != Action.COMPENSATE:
        if compensation not in (None, {}):
            return {}, [_("only a COMPENSATE rule gives a compensation")]
        return {}, None
    if not isinstance(compensation, dict) or len(compensation) != 1 or not (
        compensation.keys() <= {"template_id", "amount"}
    ):
        return {}, [_('give exactly one of {"template_id": id} or {"amount": "12.00"}')]
    if "template_id" in compensation:
        template_id = compensation["template_id"]
        if (isinstance(template_id, bool) or not isinstance(template_id, int)
                or not CouponTemplate.objects.filter(pk=template_id).exists()):
            return {}, {"template_id": [_("no such coupon template")]}
        return {"template_id": template_id}, None
    amount = compensation["amount"]
    try:
        if not isinstance(amount, str):
            raise Invalid
        value = _decimal(amount)
    except Invalid:
        return {}, {"amount": [_('must be a decimal string such as "12.00"')]}
    if value <= 0 or value != value.quantize(Decimal("0.01")) or value >= Decimal("1e10"):
        return {}, {"amount": [_("must be above zero, with at most two decimal places")]}
    return {"amount": str(value.quantize(Decimal("0.01")))}, None


def _is_label(label) -> bool:
    return (isinstance(label, str) and bool(label.strip()) and len(label) <= MAX_LABEL
            and "\x00" not in label)  # PostgreSQL stores no NUL in jsonb


def _clean_labels(labels) -> tuple[dict, object]:
    """A rule's label pair, {"en": ..., "zh-hans": ...}, both written; absent on rules written
    before pairs (their single `label` reads as stored in either language)."""
    if labels is None:
        return {}, None
    if not isinstance(labels, dict) or set(labels) != set(LABEL_LANGUAGES):
        return {}, [_("give a label for each of %(languages)s")
                    % {"languages": ", ".join(LABEL_LANGUAGES)}]
    problems = {language: [_("required, 1 to %(max)s characters") % {"max": MAX_LABEL}]
                for language, label in labels.items() if not _is_label(label)}
    if problems:
        return {}, problems
    return {language: labels[language].strip() for language in LABEL_LANGUAGES}, None


# "within 30 days", "30 天内", "30日": a number of days a label promises.
DAYS_IN_LABEL = re.compile(r"(\d+)\s*-?\s*(?:days?\b|天|日)", re.IGNORECASE)


def _label_contradiction(label: str, when: dict) -> str:
    """What a label says about days that the rule's own limits do not: a label is what people
    read, so "within 30 days" on a rule whose limit is 0 days would tell them the wrong rule.
    The editor refuses it rather than rewriting what an admin wrote."""
    limits = {when[name] for name in ("days_since_redemption_min", "days_since_redemption_max")
              if name in when}
    for days in DAYS_IN_LABEL.findall(label):
        if int(days) in limits:
            continue
        if not limits:
            return _("the label says %(days)s days, but the rule has no days-since-redemption "
                     "condition") % {"days": days}
        return _("the label says %(days)s days, but the rule's days-since-redemption limit is "
                 "%(limits)s") % {"days": days, "limits": ", ".join(map(str, sorted(limits)))}
    return ""


def _clean_rule(rule) -> tuple[dict, dict]:
    if not isinstance(rule, dict):
        return {}, {"non_field_errors": [_("must be an object")]}
    problems = {key: [_("unknown key")] for key in rule if key not in RULE_KEYS}
    labels, label_problems = _clean_labels(rule.get("labels"))
    if label_problems:
        problems["labels"] = label_problems
    # A pair's English label is the rule's label: what a decision stores as its rule_label.
    label = labels.get("en") or rule.get("label")
    if "labels" not in problems and not _is_label(label):
        problems["label"] = [_("required, 1 to %(max)s characters") % {"max": MAX_LABEL}]
    action = rule.get("action")
    if action not in Action.ALL:
        problems["action"] = [_("must be one of %(choices)s") % {"choices": ", ".join(Action.ALL)}]
    requires_approval = rule.get("requires_approval", False)
    if not isinstance(requires_approval, bool):
        problems["requires_approval"] = [_("must be true or false")]
    when, when_problems = _clean_when(rule.get("when", {}))
    if when_problems:
        problems["when"] = when_problems
    compensation, compensation_problems = _clean_compensation(rule.get("compensation"), action)
    if compensation_problems:
        problems["compensation"] = compensation_problems
    if not problems.keys() & {"label", "labels", "when"}:
        for language, text in (labels or {None: label}).items():
            contradiction = _label_contradiction(text, when)
            if contradiction and language is None:
                problems["label"] = [contradiction]
            elif contradiction:
                problems.setdefault("labels", {})[language] = [contradiction]
    cleaned = {
        "label": label.strip() if isinstance(label, str) else label,
        **({"labels": labels} if labels else {}),
        "when": when,
        "action": action,
        "requires_approval": requires_approval,
        "compensation": compensation,
    }
    return cleaned, problems


def clean_rules(rules) -> list[dict]:
    """The rules in their stored form (every key present, numbers as decimal strings).

    Raises ValidationFailed with `details.rules` keyed by rule position, then field, e.g.
    `{"rules": {"2": {"when": {"refunded_share_min": ["must be between 0 and 1"]}}}}`.
    """
    if not isinstance(rules, list) or not rules:
        raise ValidationFailed(
            _("The policy rules are not valid."),
            rules=[_("must be a non-empty list of rules, the last one the default")],
        )
    if len(rules) > MAX_RULES:
        raise ValidationFailed(_("The policy rules are not valid."),
                               rules=[_("at most %(max)s rules") % {"max": MAX_RULES}])
    cleaned, problems = [], {}
    for index, rule in enumerate(rules):
        rule_cleaned, rule_problems = _clean_rule(rule)
        cleaned.append(rule_cleaned)
        is_last = index == len(rules) - 1
        if rule_cleaned.get("when") and is_last:
            rule_problems.setdefault("when", [_("the last rule is the default: no conditions")])
        elif isinstance(rule, dict) and not rule_cleaned.get("when") and not is_last \
                and "when" not in rule_problems:
            rule_problems["when"] = [_("only the last rule may have no conditions: "
                                       "the rules after this one could never match")]
        if rule_problems:
            problems[str(index)] = rule_problems
    if problems:
        raise ValidationFailed(_("The policy rules are not valid."), rules=problems)
    return cleaned


def validate_rules(rules: list) -> None:
    clean_rules(rules)


# --- which version applies ----------------------------------------------------------------

def _published_by(policy_id, at: datetime) -> ReturnPolicyVersion | None:
    return (ReturnPolicyVersion.objects.select_related("policy")
            .filter(policy_id=policy_id, status=ReturnPolicyVersion.Status.PUBLISHED,
                    published_at__lte=at)
            .order_by("-number").first())


def policy_version_for(template_version, at: datetime) -> ReturnPolicyVersion:
    """The version of the coupon's policy that was in force at `at` (the refund's time).

    The policy is the one the coupon's frozen template version names, or the default. A policy
    with nothing published by then falls back to the default policy, whose first version is
    dated before any coupon existed.
    """
    version = None
    if template_version.return_policy_id is not None:
        version = _published_by(template_version.return_policy_id, at)
    if version is None:
        default = ReturnPolicy.objects.filter(code=ReturnPolicy.DEFAULT_CODE).first()
        version = _published_by(default.pk, at) if default is not None else None
    if version is None:
        raise NotFound(_("No return policy version was published by then."), at=at.isoformat())
    return version
