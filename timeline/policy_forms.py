"""The draft editor's form: one form per rule, in a formset that orders and removes rules.

The forms only carry what was typed into the engine's rule JSON; whether a rule is valid is
decided by refunds.policy_engine.clean_rules (through the service), and its field errors are
put back beside the inputs here. So a share of "1.5" or a default rule with a condition is
refused by the same words the API answers, and the editor cannot drift from the engine.
"""

from django import forms
from django.forms import formset_factory
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from refunds.policy_engine import CONDITIONS, Action, RefundType
from refunds.reply_words import reply_words
from refunds.rule_labels import shipped_pair
from timeline import glossary
from timeline.policy_words import ACTION_WORDS

ANY = [("", _("any"))]
YES_NO = ANY + [("yes", _("yes")), ("no", _("no"))]
FLAGS = ("coupon_expired", "template_returnable", "campaign_closed", "risk_flag")
# Typed as text and sent as typed: the engine says what is wrong with "abc" or "-1".
NUMBERS = ("refunded_share_min", "refunded_share_max", "face_value_min", "face_value_max")
DAYS = ("days_since_redemption_min", "days_since_redemption_max")


class RuleForm(forms.Form):
    # Both labels are the rule's name, each read in its own language (refunds.rule_labels).
    label = forms.CharField(required=False, strip=False, label=_("Label in English"),
                            widget=forms.TextInput(attrs={"lang": "en"}))
    label_zh = forms.CharField(required=False, strip=False, label=_("Label in Chinese"),
                               widget=forms.TextInput(attrs={"lang": "zh-Hans"}))
    refund_type = forms.ChoiceField(choices=ANY + [(t, t) for t in RefundType.ALL],
                                    required=False, label=_("Refund type"))
    refunded_share_min = forms.CharField(required=False, label=_("Refunded share at least (0–1)"))
    refunded_share_max = forms.CharField(required=False, label=_("Refunded share at most (0–1)"))
    coupon_expired = forms.ChoiceField(choices=YES_NO, required=False, label=_("Past validity"))
    template_kind = forms.MultipleChoiceField(
        choices=glossary.choices(glossary.KINDS), required=False,
        widget=forms.CheckboxSelectMultiple,
        label=_("Coupon kind is one of"))
    template_returnable = forms.ChoiceField(choices=YES_NO, required=False,
                                            label=_("Template returnable"))
    campaign_closed = forms.ChoiceField(choices=YES_NO, required=False, label=_("Campaign closed"))
    risk_flag = forms.ChoiceField(choices=YES_NO, required=False, label=_("Risk flag"))
    days_since_redemption_min = forms.CharField(required=False,
                                                label=_("Days since redemption at least"))
    days_since_redemption_max = forms.CharField(required=False,
                                                label=_("Days since redemption at most"))
    face_value_min = forms.CharField(required=False, label=_("Face value at least"))
    face_value_max = forms.CharField(required=False, label=_("Face value at most"))
    action = forms.ChoiceField(choices=[
        (action, format_lazy("{}: {}", action, ACTION_WORDS.get(
            action, _("keep it used, give a coupon or credit"))))
        for action in Action.ALL], label=_("Action"))
    compensation_template = forms.ChoiceField(required=False, label=_("Compensate with template"))
    compensation_amount = forms.CharField(required=False, label=_("or a credit of"))
    requires_approval = forms.BooleanField(required=False, label=_("An operator approves first"))
    # Not part of the rule: which condition "Add condition" shows next (the page offers only
    # the ones the rule does not use yet).
    add_condition = forms.ChoiceField(required=False, label=_("Add a condition"))

    def __init__(self, *args, templates=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["compensation_template"].choices = [("", "—")] + [
            (str(template.pk), template.code) for template in templates]
        self.fields["add_condition"].choices = [("", "")] + [(name, name) for name in CONDITIONS]

    def condition_fields(self):
        return [self[name] for name in CONDITIONS]

    @property
    def shown_conditions(self) -> set[str]:
        """The conditions this rule uses (a value or an error), and the one just added: the
        editor shows these and keeps the others hidden until "Add condition"."""
        added = self.initial.get("shown_condition")
        return {name for name in CONDITIONS
                if self[name].value() not in ("", None, []) or self.has_error(name)
                or name == added}

    @property
    def addable_conditions(self) -> list[tuple[str, str]]:
        """The "Add a condition" menu: the conditions not shown yet, by their labels."""
        shown = self.shown_conditions
        return [(name, self.fields[name].label) for name in CONDITIONS if name not in shown]

    @property
    def compensates(self) -> bool:
        """Show the compensation inputs: a COMPENSATE rule, or what was typed into them."""
        return (self["action"].value() == Action.COMPENSATE
                or any(self[name].value() or self.has_error(name)
                       for name in ("compensation_template", "compensation_amount")))

    def to_rule(self) -> dict:
        """The rule as the engine reads it, from what was typed (never validated here)."""
        data = self.cleaned_data
        when = {}
        for name in CONDITIONS:
            value = data.get(name)
            if value in ("", None, []):
                continue
            if name in FLAGS:
                value = value == "yes"
            elif name in DAYS:
                value = int(value) if value.strip().isdecimal() else value
            elif name in NUMBERS:
                value = value.strip()
            when[name] = value
        compensation = {}
        if data.get("compensation_template"):
            compensation["template_id"] = int(data["compensation_template"])
        if data.get("compensation_amount", "").strip():
            compensation["amount"] = data["compensation_amount"].strip()
        return {"label": data.get("label", ""),
                "labels": {"en": data.get("label", ""), "zh-hans": data.get("label_zh", "")},
                "when": when, "action": data.get("action"),
                "requires_approval": bool(data.get("requires_approval")),
                "compensation": compensation}

    def add_engine_errors(self, problems: dict) -> None:
        """One rule's `details.rules[n]` from clean_rules, each message beside its input."""
        for key, messages in problems.items():
            if key == "when" and isinstance(messages, dict):
                for condition, condition_messages in messages.items():
                    field = condition if condition in self.fields else None
                    self.add_error(field, condition_messages)
            elif key == "compensation" and isinstance(messages, dict):
                for part, part_messages in messages.items():
                    field = "compensation_template" if part == "template_id" \
                        else "compensation_amount"
                    self.add_error(field, part_messages)
            elif key == "compensation":
                self.add_error("compensation_template", messages)
            elif key == "labels" and isinstance(messages, dict):
                for language, label_messages in messages.items():
                    self.add_error("label_zh" if language == "zh-hans" else "label",
                                   label_messages)
            elif key == "when":
                self.add_error(None, [_("Conditions: %(problem)s") % {"problem": message}
                                       for message in messages])
            elif key in self.fields:
                self.add_error(key, messages)
            else:
                self.add_error(None, messages)


# Rules are moved and removed by the editor's buttons (rows_after); ORDER is the position each
# row was shown at, sent back hidden.
RuleFormSet = formset_factory(RuleForm, extra=0, can_order=True)


def rule_to_row(rule: dict) -> dict:
    """A stored rule as the form's initial values (the inverse of RuleForm.to_rule)."""
    # A rule written before label pairs shows its one label in both inputs, a shipped one in
    # each language's words: saving it makes it a pair.
    labels = rule.get("labels") or shipped_pair(rule.get("label", ""))
    row = {"label": labels["en"], "label_zh": labels["zh-hans"], "action": rule.get("action"),
           "requires_approval": bool(rule.get("requires_approval"))}
    for name, value in (rule.get("when") or {}).items():
        row[name] = ("yes" if value else "no") if name in FLAGS else value
    compensation = rule.get("compensation") or {}
    if "template_id" in compensation:
        row["compensation_template"] = str(compensation["template_id"])
    if "amount" in compensation:
        row["compensation_amount"] = compensation["amount"]
    return row


def blank_rule_formset(rows: list[dict], templates) -> RuleFormSet:
    """An unbound formset showing `rows` in this order (ORDER renumbered 1..n)."""
    initial = [{**row, "ORDER": position} for position, row in enumerate(rows, start=1)]
    return RuleFormSet(initial=initial, form_kwargs={"templates": templates})


def posted_rows(formset: RuleFormSet) -> list[dict]:
    """What the person typed, row by row in the order shown (by ORDER, then position), kept
    as typed so moving or adding a row loses nothing and validates nothing."""
    rows = []
    for position, form in enumerate(formset.forms):
        row = {name: form[name].value() for name in form.fields if name != "ORDER"}
        try:
            order = int(form["ORDER"].value())
        except (TypeError, ValueError):
            order = len(formset.forms) + position
        rows.append((order, position, row))
    return [row for _, _, row in sorted(rows, key=lambda item: item[:2])]


def rows_after(rows: list[dict], op: str) -> list[dict]:
    """`add`, `remove-N`, `up-N`, `down-N` or `condition-N` (N the 0-based position shown)
    applied to rows. An added rule goes before the last one, which stays the default;
    `condition-N` shows rule N's chosen "Add a condition" (the page without JavaScript)."""
    rows = list(rows)
    verb, _, index = op.partition("-")
    if verb == "add":
        rows.insert(max(len(rows) - 1, 0), {"action": Action.KEEP_USED})
        return rows
    if not index.isdecimal() or int(index) >= len(rows):
        return rows
    index = int(index)
    if verb == "remove":
        del rows[index]
    elif verb == "up" and index > 0:
        rows[index - 1], rows[index] = rows[index], rows[index - 1]
    elif verb == "condition":
        rows[index] = {**rows[index], "shown_condition": rows[index].get("add_condition")}
    elif verb == "down" and index < len(rows) - 1:
        rows[index + 1], rows[index] = rows[index], rows[index + 1]
    return rows


def posted_rules_in_order(formset: RuleFormSet) -> tuple[list[RuleForm], list[dict]]:
    """A valid formset's kept forms by ORDER, and their rules: position n of the rules is
    form n, so the engine's `details.rules["n"]` lands on the form that was typed into."""
    kept = formset.ordered_forms
    return kept, [form.to_rule() for form in kept]


def shown_forms(formset: RuleFormSet, kept: list[RuleForm]) -> list[RuleForm]:
    """Every posted form in its order, so the management form's count still matches what is
    sent back."""
    return kept + [form for form in formset.forms if form not in kept]


REPLY_FIELDS = {"greeting_en": ("greeting", "en"), "greeting_zh": ("greeting", "zh-hans"),
                "closing_en": ("closing", "en"), "closing_zh": ("closing", "zh-hans")}


class RepliesForm(forms.Form):
    """The customer replies' greeting and closing in each language: the default policy's
    draft carries them (refunds.reply_words), so they are published and frozen as its rules."""

    greeting_en = forms.CharField(required=False, label=_("Greeting in English"),
                                  widget=forms.TextInput(attrs={"lang": "en"}))
    greeting_zh = forms.CharField(required=False, label=_("Greeting in Chinese"),
                                  widget=forms.TextInput(attrs={"lang": "zh-Hans"}))
    closing_en = forms.CharField(required=False, label=_("Closing in English"),
                                 widget=forms.TextInput(attrs={"lang": "en"}))
    closing_zh = forms.CharField(required=False, label=_("Closing in Chinese"),
                                 widget=forms.TextInput(attrs={"lang": "zh-Hans"}))

    prefix = "replies"

    @classmethod
    def of(cls, replies: dict) -> "RepliesForm":
        """Unbound, showing a version's words (the catalogue's where it has none)."""
        return cls(initial={name: reply_words(replies, part, language)
                            for name, (part, language) in REPLY_FIELDS.items()})

    def to_replies(self) -> dict:
        replies = {"greeting": {}, "closing": {}}
        for name, (part, language) in REPLY_FIELDS.items():
            replies[part][language] = self.cleaned_data.get(name, "")
        return replies

    def add_service_errors(self, problems) -> None:
        """`details.replies` from the service, each message beside its input."""
        if not isinstance(problems, dict):
            self.add_error(None, problems)
            return
        for name, (part, language) in REPLY_FIELDS.items():
            messages = (problems.get(part) or {}).get(language)
            if messages:
                self.add_error(name, messages)
