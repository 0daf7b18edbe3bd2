"""Return policy rules in words, and what changed between two versions of a policy.

Rules are stored as the engine's JSON (refunds.policy_engine); a policy admin reads them as
sentences. `template_names` maps a compensation's template id to its code so a rule says which
coupon it gives, not a number.
"""

from dataclasses import dataclass
from difflib import SequenceMatcher

from timeline.templatetags.console import money


def _share(value) -> str:
    return f"{float(value) * 100:g}%"


def _yes_no(yes: str, no: str):
    return lambda value: yes if value else no


CONDITION_WORDS = {
    "refund_type": lambda value: f"the refund is {value}",
    "refunded_share_min": lambda value: f"at least {_share(value)} of the order is refunded",
    "refunded_share_max": lambda value: f"at most {_share(value)} of the order is refunded",
    "coupon_expired": _yes_no("the coupon is past its validity", "the coupon is still valid"),
    "template_kind": lambda kinds: f"the coupon is {' or '.join(kinds)}",
    "template_returnable": _yes_no("the template is returnable", "the template is not returnable"),
    "campaign_closed": _yes_no("the campaign is closed", "the campaign still issues coupons"),
    "risk_flag": _yes_no("the refund is risk-flagged", "the refund is not risk-flagged"),
    "days_since_redemption_min": lambda days: f"redeemed at least {days} days ago",
    "days_since_redemption_max": lambda days: f"redeemed at most {days} days ago",
    "face_value_min": lambda amount: f"face value at least {money(amount)}",
    "face_value_max": lambda amount: f"face value at most {money(amount)}",
}

ACTION_WORDS = {
    "RETURN": "return the coupon (EXPIRED when past its validity)",
    "KEEP_USED": "keep the coupon used",
    "VOID": "void the coupon",
    "MANUAL_REVIEW": "an operator decides",
}


def conditions_in_words(rule: dict) -> list[str]:
    return [CONDITION_WORDS[name](value) if name in CONDITION_WORDS else f"{name} = {value}"
            for name, value in (rule.get("when") or {}).items()]


def action_in_words(rule: dict, template_names: dict) -> str:
    action = rule.get("action", "")
    if action != "COMPENSATE":
        return ACTION_WORDS.get(action, action)
    compensation = rule.get("compensation") or {}
    if "amount" in compensation:
        return f"keep the coupon used and give a credit of {money(compensation['amount'])}"
    template_id = compensation.get("template_id")
    return ("keep the coupon used and issue a new "
            f"{template_names.get(template_id, f'template #{template_id}')} coupon")


@dataclass(frozen=True)
class RuleInWords:
    number: int  # 1-based, as a policy admin counts them
    label: str
    conditions: list[str]  # empty: the default rule, it matches everything left
    action: str
    requires_approval: bool


def rules_in_words(rules: list[dict], template_names: dict) -> list[RuleInWords]:
    return [
        RuleInWords(number=index + 1, label=rule.get("label", ""),
                    conditions=conditions_in_words(rule),
                    action=action_in_words(rule, template_names),
                    requires_approval=bool(rule.get("requires_approval"))
                    or rule.get("action") == "MANUAL_REVIEW")
        for index, rule in enumerate(rules)
    ]


@dataclass(frozen=True)
class DiffRow:
    """One line of the side-by-side diff: a rule of the old version, of the new one, or both."""

    change: str  # "same", "changed", "moved", "removed" or "added"
    old: RuleInWords | None
    new: RuleInWords | None


def _meaning(rule: RuleInWords) -> tuple:
    return rule.conditions, rule.action, rule.requires_approval


def rules_diff(old: list[RuleInWords], new: list[RuleInWords]) -> list[DiffRow]:
    """Rules lined up by label: the label is how an admin names a rule across versions, so a
    rule whose conditions changed is "changed", not one removed and another added."""
    rows = []
    matcher = SequenceMatcher(a=[r.label for r in old], b=[r.label for r in new], autojunk=False)
    for tag, old_from, old_to, new_from, new_to in matcher.get_opcodes():
        if tag == "equal":
            for before, after in zip(old[old_from:old_to], new[new_from:new_to], strict=True):
                same = _meaning(before) == _meaning(after)
                rows.append(DiffRow("same" if same else "changed", before, after))
            continue
        rows += [DiffRow("removed", rule, None) for rule in old[old_from:old_to]]
        rows += [DiffRow("added", None, rule) for rule in new[new_from:new_to]]
    return _mark_moves(rows)


def _mark_moves(rows: list[DiffRow]) -> list[DiffRow]:
    # A rule dragged to another place shows as removed here and added there; when its meaning
    # is the same it was only moved, and first-match order makes that worth saying.
    removed = {row.old.label: row.old for row in rows if row.change == "removed"}
    added = {row.new.label: row.new for row in rows if row.change == "added"}
    moved = {label for label in removed.keys() & added.keys()
             if _meaning(removed[label]) == _meaning(added[label])}
    return [DiffRow("moved", row.old, row.new) if row.change in ("removed", "added")
            and (row.old or row.new).label in moved else row for row in rows]
