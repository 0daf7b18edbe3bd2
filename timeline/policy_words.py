"""Return policy rules in words, and what changed between two versions of a policy.

Rules are stored as the engine's JSON (refunds.policy_engine); a policy admin reads them as
sentences. `template_names` maps a compensation's template id to its code so a rule says which
coupon it gives, not a number.
"""

from dataclasses import dataclass
from difflib import SequenceMatcher

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext, pgettext, pgettext_lazy

from refunds.rule_labels import rule_words
from timeline.glossary import REFUND_TYPES
from timeline.templatetags.console import money


def _share(value) -> str:
    return f"{float(value) * 100:g}%"


def _yes_no(yes, no):
    return lambda value: str(yes if value else no)


def _refund_type(code) -> str:
    # A sentence is text (no badge): the word alone, a code the glossary lacks as it is.
    return str(REFUND_TYPES[code][0]) if code in REFUND_TYPES else str(code)


def _kinds(kinds) -> str:
    # Kinds are codes (CASH, DISCOUNT ...) and stay English; only the "or" between is words.
    return pgettext("between coupon kinds", " or ").join(kinds)


CONDITION_WORDS = {
    "refund_type": lambda value: _("the refund is %(type)s") % {"type": _refund_type(value)},
    "refunded_share_min": lambda value: _("at least %(share)s of the order is refunded")
    % {"share": _share(value)},
    "refunded_share_max": lambda value: _("at most %(share)s of the order is refunded")
    % {"share": _share(value)},
    "coupon_expired": _yes_no(gettext_lazy("the coupon is past its validity"),
                              gettext_lazy("the coupon is still valid")),
    "template_kind": lambda kinds: _("the coupon is %(kinds)s") % {"kinds": _kinds(kinds)},
    "template_returnable": _yes_no(gettext_lazy("the template is returnable"),
                                   gettext_lazy("the template is not returnable")),
    "campaign_closed": _yes_no(gettext_lazy("the campaign is closed"),
                               gettext_lazy("the campaign still issues coupons")),
    "risk_flag": _yes_no(gettext_lazy("the refund is risk-flagged"),
                         gettext_lazy("the refund is not risk-flagged")),
    "days_since_redemption_min": lambda days: ngettext(
        "redeemed at least %(days)s day ago", "redeemed at least %(days)s days ago",
        _count(days)) % {"days": days},
    "days_since_redemption_max": lambda days: ngettext(
        "redeemed at most %(days)s day ago", "redeemed at most %(days)s days ago",
        _count(days)) % {"days": days},
    "face_value_min": lambda amount: _("face value at least %(amount)s")
    % {"amount": money(amount)},
    "face_value_max": lambda amount: _("face value at most %(amount)s")
    % {"amount": money(amount)},
}

ACTION_WORDS = {
    "RETURN": gettext_lazy("return the coupon (EXPIRED when past its validity)"),
    "KEEP_USED": gettext_lazy("keep the coupon used"),
    "VOID": gettext_lazy("void the coupon"),
    "MANUAL_REVIEW": gettext_lazy("an operator decides what happens to the coupon"),
}


def _count(days) -> int:
    # A stored rule's days are a number; ngettext needs one even if the JSON held text.
    return days if isinstance(days, int) else 2


def conditions_in_words(rule: dict) -> list[str]:
    return [CONDITION_WORDS[name](value) if name in CONDITION_WORDS else f"{name} = {value}"
            for name, value in (rule.get("when") or {}).items()]


def action_in_words(rule: dict, template_names: dict) -> str:
    action = rule.get("action", "")
    if action != "COMPENSATE":
        return str(ACTION_WORDS.get(action, action))
    compensation = rule.get("compensation") or {}
    if "amount" in compensation:
        return _("keep the coupon used and give a credit of %(amount)s") % {
            "amount": money(compensation["amount"])}
    template_id = compensation.get("template_id")
    template = template_names.get(template_id) or _("template #%(id)s") % {"id": template_id}
    return _("keep the coupon used and issue a new %(template)s coupon") % {
        "template": template}


@dataclass(frozen=True)
class RuleInWords:
    number: int  # 1-based, as a policy admin counts them
    label: str
    conditions: list[str]  # empty: the default rule, it matches everything left
    action: str
    # An operator approves before the action runs. A manual review is a person's decision
    # already, so its sentence says so once ("an operator decides ..."), never twice.
    approval_first: bool
    when: dict  # the stored conditions, to say what changed inside a rule
    action_code: str


def rules_in_words(rules: list[dict], template_names: dict) -> list[RuleInWords]:
    return [
        RuleInWords(number=index + 1, label=rule_words(rule),
                    conditions=conditions_in_words(rule),
                    action=action_in_words(rule, template_names),
                    approval_first=bool(rule.get("requires_approval"))
                    and rule.get("action") != "MANUAL_REVIEW",
                    when=dict(rule.get("when") or {}), action_code=rule.get("action", ""))
        for index, rule in enumerate(rules)
    ]


# What a condition is called when its value changes ("days since redemption at most:
# 30 → 2"), and how its value is written.
CONDITION_NAMES = {
    "refund_type": gettext_lazy("refund type"),
    "refunded_share_min": gettext_lazy("refunded share at least"),
    "refunded_share_max": gettext_lazy("refunded share at most"),
    "coupon_expired": gettext_lazy("coupon past its validity"),
    "template_kind": gettext_lazy("coupon kind"),
    "template_returnable": gettext_lazy("template returnable"),
    "campaign_closed": gettext_lazy("campaign closed"),
    "risk_flag": gettext_lazy("risk-flagged"),
    "days_since_redemption_min": gettext_lazy("days since redemption at least"),
    "days_since_redemption_max": gettext_lazy("days since redemption at most"),
    "face_value_min": gettext_lazy("face value at least"),
    "face_value_max": gettext_lazy("face value at most"),
}


def _value(name: str, value) -> str:
    if isinstance(value, bool):
        return str(_("yes") if value else _("no"))
    if name.startswith("refunded_share"):
        return _share(value)
    if name.startswith("face_value"):
        return money(value)
    if name.startswith("days_since"):
        return ngettext("%(days)s day", "%(days)s days", _count(value)) % {"days": value}
    if name == "template_kind":
        return _kinds(value)
    return str(value)


def changes_inside(old: RuleInWords, new: RuleInWords) -> list[str]:
    """What changed in one rule, value by value: "days since redemption at most: 30 days →
    2 days", a condition added or dropped, the action, the approval, the label."""
    changes = []
    if old.label != new.label:
        changes.append(_("label: “%(old)s” → “%(new)s”") % {"old": old.label, "new": new.label})
    for name in [*old.when, *(n for n in new.when if n not in old.when)]:
        words = CONDITION_WORDS.get(name)
        before, after = old.when.get(name), new.when.get(name)
        if name not in new.when:
            changes.append(_("condition dropped: %(condition)s")
                           % {"condition": words(before) if words else name})
        elif name not in old.when:
            changes.append(_("condition added: %(condition)s")
                           % {"condition": words(after) if words else name})
        elif before != after:
            changes.append(_("%(name)s: %(old)s → %(new)s") % {
                "name": CONDITION_NAMES.get(name, name), "old": _value(name, before),
                "new": _value(name, after)})
    if old.action != new.action:
        changes.append(_("action: %(old)s → %(new)s") % {"old": old.action, "new": new.action})
    if old.approval_first != new.approval_first:
        changes.append(_("an operator now approves first") if new.approval_first
                       else _("no longer waits for an operator's approval"))
    return changes


@dataclass(frozen=True)
class DiffRow:
    """One line of the side-by-side diff: a rule of the old version, of the new one, or both."""

    change: str  # "same", "changed", "moved", "removed" or "added"
    old: RuleInWords | None
    new: RuleInWords | None

    @property
    def changes(self) -> list[str]:
        return changes_inside(self.old, self.new) if self.change == "changed" else []

    @property
    def change_label(self) -> str:
        return str(CHANGE_LABELS[self.change])


# `change` stays a code (the row's CSS class); the badge shows these words.
CHANGE_LABELS = {
    "same": pgettext_lazy("policy diff", "same"),
    "changed": pgettext_lazy("policy diff", "changed"),
    "moved": pgettext_lazy("policy diff", "moved"),
    "removed": pgettext_lazy("policy diff", "removed"),
    "added": pgettext_lazy("policy diff", "added"),
}


def _meaning(rule: RuleInWords) -> tuple:
    return rule.conditions, rule.action, rule.approval_first


def rules_diff(old: list[RuleInWords], new: list[RuleInWords]) -> list[DiffRow]:
    """Rules lined up by label: the label is how an admin names a rule across versions, so a
    rule whose conditions changed is "changed", not one removed and another added. Where as
    many rules were replaced as replace them (a rule relabelled and edited in place), they are
    paired by position and shown changed too."""
    rows = []
    old_labels, new_labels = {r.label for r in old}, {r.label for r in new}
    matcher = SequenceMatcher(a=[r.label for r in old], b=[r.label for r in new], autojunk=False)
    for tag, old_from, old_to, new_from, new_to in matcher.get_opcodes():
        if tag == "equal":
            for before, after in zip(old[old_from:old_to], new[new_from:new_to], strict=True):
                same = _meaning(before) == _meaning(after)
                rows.append(DiffRow("same" if same else "changed", before, after))
            continue
        replaced, replacing = old[old_from:old_to], new[new_from:new_to]
        # A label found on the other side is a move (_mark_moves), not an edit in place.
        relabelled = not ({r.label for r in replaced} & new_labels
                          or {r.label for r in replacing} & old_labels)
        if tag == "replace" and len(replaced) == len(replacing) and relabelled:
            rows += [DiffRow("changed", before, after) for before, after
                     in zip(replaced, replacing, strict=True)]
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
