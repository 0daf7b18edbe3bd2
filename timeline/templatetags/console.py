"""Template helpers the console pages share: times in the viewer's zone, money, badges."""

from datetime import UTC
from decimal import Decimal

from django import template
from django.conf import settings
from django.utils import formats, timezone
from django.utils.html import format_html

register = template.Library()


@register.filter
def when(moment):
    """A <time> the browser rewrites into the viewer's zone (console.js); UTC on hover."""
    if moment is None:
        return "—"
    utc = timezone.localtime(moment, UTC)
    return format_html(
        '<time datetime="{}" title="{} UTC">{} UTC</time>',
        utc.isoformat(), utc.strftime("%Y-%m-%d %H:%M:%S"), utc.strftime("%Y-%m-%d %H:%M"),
    )


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
