"""Template helpers the console pages share: times in the viewer's zone, money, badges."""

import re
from datetime import UTC, datetime
from decimal import Decimal

from django import template
from django.conf import settings
from django.utils import formats, timezone
from django.utils.html import format_html
from django.utils.translation import pgettext

from common.auth_backend import group_names as read_group_names
from operations.reconcile.summaries import summary_words
from refunds.rule_labels import decided_rule, label_words, rule_words
from timeline import glossary
from timeline.answers import ACTIONS, RECOMMENDATIONS, worded
from timeline.time_zones import moment_text, offset_label, utc_text

register = template.Library()


@register.filter
def when(moment):
    """A <time> in the reader's zone with its offset (`2026-12-05 05:49 UTC+8`,
    console.time_zones); the zone's name and the UTC instant on hover."""
    if moment is None or moment == "":
        return "—"
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    zone = timezone.get_current_timezone_name()
    return format_html('<time datetime="{}" title="{} · {}">{}</time>',
                       timezone.localtime(moment, UTC).isoformat(), zone, utc_text(moment),
                       moment_text(moment))


@register.simple_tag(takes_context=True)
def reader_zone(context) -> dict:
    """The zone this page is written in: its name, its offset now, and where it came from
    (chosen, browser, default: console.js rewrites a page written before it knew)."""
    zone = timezone.get_current_timezone()
    request = context.get("request")
    return {"name": timezone.get_current_timezone_name(),
            "offset": offset_label(timezone.localtime(timezone.now(), zone)),
            "source": getattr(request, "console_zone_source", "default")}


@register.filter
def group_names(user) -> list[str]:
    """The header's groups, from the query that read the user's permissions."""
    return read_group_names(user)


@register.filter
def money(amount):
    """The console's currency (CONSOLE_CURRENCY_SYMBOL) and always two places, the digits
    grouped and separated as the current language writes them: `¥1,234.50` in English,
    `¥1234.50` in Chinese (Django's zh_Hans formats group by nothing)."""
    if amount in (None, ""):
        return "—"
    value = Decimal(amount).quantize(Decimal("0.01"))
    sign = "-" if value < 0 else ""
    digits = formats.number_format(abs(value), decimal_pos=2, use_l10n=True, force_grouping=True)
    return f"{sign}{settings.CONSOLE_CURRENCY_SYMBOL}{digits}"


@register.filter
def status_badge(status):
    return format_html('<span class="badge badge-{}">{}</span>', str(status).lower(), status)


@register.filter
def evidence_value(value):
    """A finding's evidence value as a person reads it: lists and mappings spelled out."""
    if value is None or value == "":
        return "—"
    if isinstance(value, dict):
        return "; ".join(f"{key}: {evidence_value(item)}" for key, item in value.items())
    if isinstance(value, list | tuple):
        return "; ".join(str(evidence_value(item)) for item in value)
    return value


@register.filter
def recommendation_words(code):
    """A case's recommendation in plain words, its code in a badge (console.answers)."""
    return worded(code, RECOMMENDATIONS)


@register.filter
def action_words(code):
    """A refund decision's action in plain words, its code in a badge (console.answers)."""
    return worded(code, ACTIONS)


CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@register.filter
def stored_text(value):
    """Text stored as it was written (a reason a person typed, a row from before the message
    codes): English ones marked `lang="en"` so a screen reader of a Chinese page reads them as
    English, and `class="stored"` so the English-words check of the browser tests still sees
    them (tests/browser/chinese_words.py); anything holding Chinese, or no words at all, as it
    is."""
    text = "" if value is None else str(value)
    if CJK.search(text) or not re.search(r"[A-Za-z]{2}", text):
        return value
    return format_html('<span lang="en" class="stored">{}</span>', text)


@register.filter
def invariant_words(number):
    """An invariant in support's words where its own sentence is engineering text, else ""."""
    return glossary.INVARIANT_WORDS.get(number, "")


@register.filter
def rule_label(label):
    """A return policy rule's label: a shipped one in the reader's words (refunds.rule_labels)."""
    return label_words(label or "")


@register.filter
def decision_rule(decision):
    """The rule a refund decision names, in the reader's language: its version's label pair,
    or the label it stored (refunds.rule_labels)."""
    return rule_words(decided_rule(decision))


@register.filter
def finding_summary(finding):
    """A reconciliation finding's summary in the reader's words (operations.reconcile)."""
    return summary_words(finding)


@register.filter
def in_language(text, code):
    """A word in another language than the page's (a language's own name), marked as such."""
    return format_html('<span lang="{}">{}</span>', code, text)


@register.filter
def as_code(value):
    """A code or a stored value inside a translated sentence, marked as one."""
    return format_html("<code>{}</code>", value)


@register.filter
def role_word(code):
    """A group's name as the reader's word (a group the glossary does not know, as it is)."""
    return glossary.ROLES.get(code, code)


@register.filter
def state_words(code):
    """A coupon state in the reader's words, its code in a badge (console.glossary)."""
    return glossary.state_words(code) if code else "∅"


@register.filter
def state_badge(code):
    return glossary.state_badge(code)


@register.filter
def scope_words(terms):
    return glossary.scope_words(terms)


@register.filter
def op_words(code):
    """A ledger operation type in the reader's words, its code in a badge."""
    return glossary.operation_words(code)


@register.inclusion_tag("timeline/_error_summary.html")
def error_summary(form, row_word="", whole_errors=(), whole_word="", rows=None):
    """A form's errors (or a formset's, each field named with its row: "Rule 3, Label: ...")
    gathered in one box at the top, each linking to its field, for the script to move focus
    to: a person who pressed the button learns at once what to fix and goes there in one step.
    `whole_errors`: problems of the whole set, named `whole_word`; `rows`: the formset's forms
    in the order the page shows them."""
    forms = getattr(form, "forms", None)
    if forms is None:
        entries = summary_entries(form)
    else:
        entries = [(None, message) for message in form.non_form_errors()] if form.is_bound else []
        for number, row in enumerate(forms if rows is None else rows, start=1):
            entries += summary_entries(row, f"{row_word} {number}")
    entries += [(None, pgettext("error summary", "%(field)s: %(message)s")
                 % {"field": whole_word, "message": message}) for message in whole_errors]
    return {"entries": entries}


def summary_entries(form, within: str = "") -> list[tuple[str | None, str]]:
    """(the field's id or None, the sentence) for each of a form's errors."""
    if not form.is_bound:
        return []
    entries = [(None, message) for message in form.non_field_errors()]
    for field in form:
        name = (pgettext("error summary", "%(row)s, %(field)s")
                % {"row": within, "field": field.label}) if within else field.label
        for message in field.errors:
            entries.append((None if field.is_hidden else field.auto_id,
                            pgettext("error summary", "%(field)s: %(message)s")
                            % {"field": name, "message": message}))
    return entries


@register.filter
def key_words(key):
    """A stored detail's or evidence's key as the reader's word, the key on hover."""
    return glossary.key_words(key)


@register.filter
def detail_value(value):
    """A stored value: a flag as yes or no, a known code as its word and badge, prose as it was
    stored (`stored_text`), anything else (an id, a number) as code."""
    worded = glossary.value_words(value)
    if worded is not value:
        return worded
    if isinstance(value, str) and " " in value.strip():
        return stored_text(value)
    return format_html("<code>{}</code>", value)


@register.filter
def fact_words(code):
    """An order fact's name (PaymentSucceeded) as the reader's word, its code in a badge."""
    return worded(code, glossary.FACTS)


@register.filter
def refund_type_words(code):
    return worded(code, glossary.REFUND_TYPES)


@register.filter
def compensation_kind_words(code):
    return worded(code, glossary.COMPENSATION_KINDS)
