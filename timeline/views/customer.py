"""One customer's page: who they are (as the user service told us), every coupon they hold and
what holds it, what waits for a person, the coupon page's answer per coupon, and one timeline
merged across their coupons.

Besides the profile and the coupon list, the timeline's page is one query of keys (each source
reads all the coupons' rows; the database merges and cuts them) and one by primary key for each
kind of row on it, and the coupons' answers read what they are made of for all the coupons at
once (what waits for a person, the cases, the settlements, the redemptions and last
operations): none of it grows with the histories or the number of coupons.
"""

from django.http import Http404, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html

from coupons import clock
from coupons.diagnosis import coupon_diagnosis, coupons_facts
from coupons.history import TimelineKey, coupons_timeline_page
from coupons.identity import can_see_details
from coupons.selectors import CUSTOMER_COUPON_LIMIT, customer_coupons, customer_profile
from refunds.history import SOURCES as AFTER_SALE_SOURCES
from refunds.selectors import waiting_on_people_of
from timeline.answers import ConsoleWords
from timeline.capabilities import can_read_notes
from timeline.glossary import operation_words, state_words
from timeline.notes import note_source
from timeline.views.access import ConsolePage
from timeline.views.coupon import ACTOR_KEYS

PAGE_SIZE = 50
TIMELINE_PARAMS = ("before", "after")


def _link(request, user_id: str, **cursor) -> str:
    query = QueryDict(mutable=True)
    for name, value in cursor.items():
        query[name] = str(value)
    return f"{reverse('console:customer', args=[user_id])}?{query.urlencode()}"


def timeline_page(request, coupons, cursor):
    return coupons_timeline_page(
        coupons=coupons, can_see_details=can_see_details(request.user), size=PAGE_SIZE,
        after=cursor["after"], before=cursor["before"],
        extra_sources=(*AFTER_SALE_SOURCES, note_source(can_read=can_read_notes(request.user))))


def _worded(entry: dict) -> None:
    """An entry as the coupon page writes it: an operation's codes in words, who did it."""
    details = entry["details"]
    entry["actor"] = next((details[k] for k in ACTOR_KEYS if k in details), "")
    entry["order_id"] = details.get("order_id", "")
    if entry["kind"] == "operation":
        entry["title"] = format_html(
            "{} {}→{} (v{})", operation_words(details["op_type"]),
            state_words(details["from_state"]) if details.get("from_state") else "∅",
            state_words(details["to_state"]), details["to_version"])


class CustomerPage(ConsolePage):
    audit_page = "customer"

    def get(self, request, user_id: str):
        profile = customer_profile(user_id=user_id)
        coupons = customer_coupons(user_id=user_id)
        if profile is None and not coupons:
            raise Http404(f"No customer {user_id}")
        more_coupons = len(coupons) > CUSTOMER_COUPON_LIMIT
        coupons = coupons[:CUSTOMER_COUPON_LIMIT]
        cursor = {name: TimelineKey.parse(request.GET.get(name)) for name in TIMELINE_PARAMS}
        page = timeline_page(request, coupons, cursor) if coupons else None
        waiting, facts = waiting_on_people_of(coupons), coupons_facts(coupons)
        now, words = clock.now(), ConsoleWords()
        rows = [{"coupon": coupon, "diagnosis": coupon_diagnosis(
            coupon, now, words, waiting=waiting[coupon.pk], facts=facts[coupon.pk])}
            for coupon in coupons]
        for entry in page.entries if page else []:
            _worded(entry)
        return render(request, "timeline/customer.html", {
            "user_id": user_id, "profile": profile, "rows": rows, "more_coupons": more_coupons,
            "coupon_limit": CUSTOMER_COUPON_LIMIT,
            "waiting": [row for row in rows
                        if row["diagnosis"]["pending"] or row["diagnosis"]["open_case_ids"]],
            "entries": page.entries if page else [],
            "earlier": page and page.earlier and _link(request, user_id, before=page.earlier),
            "later": page and page.later and _link(request, user_id, after=page.later),
            "latest": _link(request, user_id),
            "paged": any(cursor.values()),
        })
