"""Template helpers the console pages share: times in the viewer's zone, money, badges."""

from datetime import UTC, datetime
from decimal import Decimal

from django import template
from django.conf import settings
from django.utils import formats, timezone
from django.utils.html import format_html

from common.auth_backend import group_names as read_group_names
from console import glossary
from console.answers import ACTIONS, RECOMMENDATIONS, worded
from console.time_zones import moment_text, offset_label, utc_text

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


@register.filter
def state_words(code):
    """A coupon state in the reader's words, its code in a badge (console.glossary)."""
    return glossary.state_words(code) if code else "∅"


@register.filter
def state_badge(code):
    return glossary.state_badge(code)


@register.filter
def op_words(code):
    """A ledger operation type in the reader's words, its code in a badge."""
    return glossary.operation_words(code)
