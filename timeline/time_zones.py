"""One way to write a moment in the console, in the reader's zone, with that zone shown.

`2026-12-05 05:49 UTC+8`: every page, every sentence (the check panel's included) writes a
moment this way, so one instant never shows in two formats on one page. The zone is
the one the person chose in the console (saved on their ConsolePreference), else their
browser's: console.js reads it from `Intl` (a script file, so the CSP holds) and keeps it in a
cookie; until that cookie exists the page is written in UTC and console.js rewrites its times
the same way in the browser's zone.

The choice is read from the database at sign-in and kept in the session, as the language is:
a page costs no query for it.
"""

import zoneinfo
from datetime import UTC, datetime, timedelta
from functools import cache

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.utils import timezone

from coupons.clock import now
from timeline.models import ConsolePreference

SESSION_KEY = "console_time_zone"
BROWSER_COOKIE = "console_browser_tz"
# Where the zone of a page came from: the person's choice, their browser, or neither yet.
CHOSEN, BROWSER, DEFAULT = "chosen", "browser", "default"


@cache
def zone_names() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones()) | {"UTC"}


def zone_or_none(name: str | None) -> zoneinfo.ZoneInfo | None:
    return zoneinfo.ZoneInfo(name) if name in zone_names() else None


def request_zone(request) -> tuple[zoneinfo.ZoneInfo, str]:
    """The zone this request's pages are written in, and where it came from."""
    chosen = zone_or_none(request.session.get(SESSION_KEY)) if hasattr(request, "session") \
        else None
    if chosen is not None:
        return chosen, CHOSEN
    browser = zone_or_none(request.COOKIES.get(BROWSER_COOKIE))
    if browser is not None:
        return browser, BROWSER
    return zoneinfo.ZoneInfo("UTC"), DEFAULT


def offset_label(local: datetime) -> str:
    """`UTC`, `UTC+8`, `UTC+5:30`, `UTC-3`: the offset of a moment in its zone."""
    offset = local.utcoffset() or timedelta(0)
    if not offset:
        return "UTC"
    sign = "+" if offset > timedelta(0) else "-"
    hours, rest = divmod(abs(offset), timedelta(hours=1))
    minutes = rest // timedelta(minutes=1)
    return f"UTC{sign}{hours}" + (f":{minutes:02d}" if minutes else "")


def moment_text(moment: datetime | str | None) -> str:
    """A moment in the current zone (timezone.override / activate), with its offset."""
    if moment is None or moment == "":
        return "—"
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    local = timezone.localtime(moment)
    return f"{local:%Y-%m-%d %H:%M} {offset_label(local)}"


def utc_text(moment: datetime) -> str:
    return f"{timezone.localtime(moment, UTC):%Y-%m-%d %H:%M:%S} UTC"


def console_time_zone(*, user) -> str:
    """The zone `user` chose ("" for their browser's)."""
    return (ConsolePreference.objects.filter(user=user)
            .values_list("time_zone", flat=True).first()) or ""


def console_time_zone_set(*, request, zone: str) -> None:
    """Remembers the signed-in user's zone ("": follow the browser) and uses it from now on."""
    if zone and zone_or_none(zone) is None:
        raise ValueError(f"not a time zone: {zone!r}")
    ConsolePreference.objects.update_or_create(
        user=request.user, defaults={"time_zone": zone, "updated_at": now()})
    request.session[SESSION_KEY] = zone


@receiver(user_logged_in, dispatch_uid="timeline.time_zones.on_sign_in")
def on_sign_in(sender, request, user, **kwargs):
    if request is not None and getattr(request, "session", None) is not None:
        request.session[SESSION_KEY] = console_time_zone(user=user)
