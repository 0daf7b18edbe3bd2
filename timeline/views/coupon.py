"""One coupon's page: who holds it now, everything that happened to it, and whether it adds up.

The timeline and the ledger come in pages; each is also its own partial for htmx, which swaps
in the next page without reloading the rest. Without JavaScript the same links load the full
page, so every page of history has a plain URL (and each entry a deep link).
"""

from django.http import Http404, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.timesince import timesince, timeuntil
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from coupons import clock
from coupons.diagnosis import coupon_diagnosis, coupon_facts
from coupons.errors import NotFound
from coupons.evidence.checkpoint_proofs import checkpoint_coverage
from coupons.evidence.replay import coupon_check
from coupons.history import (
    TimelineKey,
    coupon_timeline_page,
    ledger_page,
)
from coupons.identity import can_see_details
from coupons.ledger_reasons import reason_words
from coupons.models import CouponOperation
from coupons.redaction import visible
from coupons.selectors import coupon_get
from refunds.history import SOURCES as AFTER_SALE_SOURCES
from refunds.selectors import coupon_after_sale
from timeline.answers import ConsoleWords
from timeline.capabilities import ConsoleCapability, can_read_notes
from timeline.entry_titles import TITLE_KEYS, entry_title
from timeline.glossary import operation_words, state_words
from timeline.lanes import order_colour, with_lanes
from timeline.note_forms import NoteForm
from timeline.notes import note_source, with_note_lane
from timeline.replies import customer_replies
from timeline.state_diagram import state_diagram
from timeline.views.access import ConsolePage

TIMELINE_PARAMS = ("before", "after", "from")
# Who did it, by the name each kind of entry gives its actor.
ACTOR_KEYS = ("actor", "reviewed_by", "decided_by", "proposed_by", "resolved_by")
# The request's own evidence, shown apart from the entry's facts.
EVIDENCE_KEYS = ("idempotency_key",)
# Which sentence a detail is, for the API's readers: the page shows the sentence itself.
SENTENCE_CODE_KEYS = ("reason_code", "message_code")
# Details whose value is a code with its version ("default v1"), shown as code, not as words.
CODE_DETAIL_KEYS = ("policy",)
# Details that are a moment, shown in the reader's zone like every other time.
MOMENT_DETAIL_KEYS = ("occurred_at",)
# An operation entry's codes, shown in its title as words with badges (console.glossary).
OPERATION_KEYS = ("op_type", "from_state", "to_state", "to_version")
LEDGER_PARAMS = ("ledger_page",)


def _coupon(coupon_id: int):
    try:
        return coupon_get(coupon_id=coupon_id)
    except NotFound as missing:
        raise Http404(f"No coupon {coupon_id}") from missing


def _query(request, replace: tuple[str, ...], **values) -> str:
    """This page's query string with the `replace` parameters set to `values` (others kept),
    so paging the timeline keeps the ledger's page and the other way round."""
    query = QueryDict(mutable=True)
    for name, value in request.GET.items():
        if name not in replace:
            query[name] = value
    for name, value in values.items():
        query[name] = str(value)
    return query.urlencode()


def _links(request, coupon, part: str, replace, **values) -> dict:
    """A pager link: the full page's URL (no JS) and the partial's (htmx)."""
    query = _query(request, replace, **values)
    return {"href": f"{reverse('console:coupon', args=[coupon.pk])}?{query}",
            "part": f"{reverse(f'console:{part}', args=[coupon.pk])}?{query}"}


def _timeline_cursor(request) -> dict:
    return {name: TimelineKey.parse(request.GET.get(name)) for name in TIMELINE_PARAMS}


def _timeline_page(request, coupon, cursor) -> dict:
    """The page of the timeline the request asks for, as the history's selectors take it."""
    return {"coupon": coupon, "can_see_details": can_see_details(request.user),
            "before": cursor["before"], "after": cursor["after"], "start": cursor["from"],
            "extra_sources": (*AFTER_SALE_SOURCES,
                              note_source(can_read=can_read_notes(request.user)))}


def timeline_context(request, coupon, cursor, page) -> dict:
    orders, entries, lane_count = with_lanes(page.entries)
    entries, lane_count = with_note_lane(entries, lane_count)
    for e in entries:
        e["deep_link"] = f"?{_query(request, TIMELINE_PARAMS, **{'from': e['key']})}"
        e["actor"] = next((e["details"][k] for k in ACTOR_KEYS if k in e["details"]), "")
        e["idempotency_key"] = e["details"].get("idempotency_key", "")
        e["more"] = {k: v for k, v in e["details"].items()
                     if k not in ACTOR_KEYS and k not in EVIDENCE_KEYS and k != "order_id"
                     and k not in OPERATION_KEYS and k not in SENTENCE_CODE_KEYS
                     and k not in TITLE_KEYS}
        if e["kind"] != "operation":
            e["title"] = entry_title(e)
        else:
            d = e["details"]
            e["title"] = format_html("{} {}→{} (v{})", operation_words(d["op_type"]),
                                     state_words(d.get("from_state", "")) if d.get("from_state")
                                     else "∅", state_words(d["to_state"]), d["to_version"])
    return {
        "entries": entries, "orders": orders, "lane_count": lane_count,
        "code_details": CODE_DETAIL_KEYS, "moment_details": MOMENT_DETAIL_KEYS,
        "paged": any(cursor.values()),
        "earlier": page.earlier and _links(request, coupon, "coupon_timeline", TIMELINE_PARAMS,
                                           before=page.earlier),
        "later": page.later and _links(request, coupon, "coupon_timeline", TIMELINE_PARAMS,
                                       after=page.later),
        "latest": _links(request, coupon, "coupon_timeline", TIMELINE_PARAMS),
    }


def ledger_context(request, coupon, page) -> dict:
    details = can_see_details(request.user)
    rows = [{"op": op, "colour": order_colour(op.order_id) if op.order_id else "",
             **visible(CouponOperation, {"reason": reason_words(op)}, can_see_details=details,
                       op_type=op.op_type)}
            for op in page]

    def link(number):
        return _links(request, coupon, "coupon_ledger", LEDGER_PARAMS, ledger_page=number)

    return {
        "ledger": page, "ledger_rows": rows,
        "ledger_label": ngettext("page %(number)s of %(pages)s, %(count)s row",
                                 "page %(number)s of %(pages)s, %(count)s rows",
                                 page.paginator.count)
        % {"number": page.number, "pages": page.paginator.num_pages,
           "count": page.paginator.count},
        "ledger_earlier": link(page.previous_page_number()) if page.has_previous() else None,
        "ledger_later": link(page.next_page_number()) if page.has_next() else None,
    }


def lease_context(coupon, now) -> dict:
    if not coupon.lock_expires_at:
        return {}
    if coupon.lock_expires_at > now:
        return {"lease_left": _("%(time)s left") % {"time": timeuntil(coupon.lock_expires_at,
                                                                       now)}}
    return {"lease_left": _("ended %(time)s ago") % {"time": timesince(coupon.lock_expires_at,
                                                                        now)},
            "lease_over": True}


class CouponPage(ConsolePage):
    audit_page = "coupon"

    def get(self, request, coupon_id: int):
        coupon = _coupon(coupon_id)
        now = clock.now()
        # The check resumes after what an earlier check verified
        # (coupons/evidence/check_watermark.py).
        check = coupon_check(coupon)
        # Each read below costs the same whatever the history's length: a page of keys and
        # one query for each kind of row on it, one range of the ledger, a few rows each.
        cursor = _timeline_cursor(request)
        timeline = coupon_timeline_page(**_timeline_page(request, coupon, cursor))
        ledger = ledger_page(coupon=coupon, number=request.GET.get("ledger_page"))
        after_sale, facts = coupon_after_sale(coupon), coupon_facts(coupon)
        return render(request, "timeline/coupon.html", {
            "coupon": coupon,
            "template": coupon.template_version.template,
            **lease_context(coupon, now),
            **timeline_context(request, coupon, cursor, timeline),
            **ledger_context(request, coupon, ledger),
            "check": check.as_dict(),
            "diagnosis": coupon_diagnosis(coupon, now, ConsoleWords(),
                                          waiting=after_sale.waiting, facts=facts,
                                          refund_decision=after_sale.latest_decision),
            "customer_replies": customer_replies(coupon, now, after_sale, facts),
            "coverage": checkpoint_coverage(coupon=coupon, check=check),
            "diagram": state_diagram(current=coupon.status,
                                     taken=check.steps_taken),
            "note_form": NoteForm() if request.user.has_perm(
                ConsoleCapability.ADD_NOTES.perm) else None,
        })


class CouponTimelinePart(ConsolePage):
    """One page of the timeline for htmx; a plain visit goes to the full page at that page."""

    audit_page = "coupon-timeline"

    def get(self, request, coupon_id: int):
        coupon = _coupon(coupon_id)
        if not request.htmx:
            return redirect(f"{reverse('console:coupon', args=[coupon.pk])}?"
                            f"{request.GET.urlencode()}")
        cursor = _timeline_cursor(request)
        page = coupon_timeline_page(**_timeline_page(request, coupon, cursor))
        return render(request, "timeline/coupon_timeline.html",
                      {"coupon": coupon, **timeline_context(request, coupon, cursor, page)})


class CouponLedgerPart(ConsolePage):
    """One page of the ledger table for htmx; a plain visit goes to the full page."""

    audit_page = "coupon-ledger"

    def get(self, request, coupon_id: int):
        coupon = _coupon(coupon_id)
        if not request.htmx:
            return redirect(f"{reverse('console:coupon', args=[coupon.pk])}?"
                            f"{request.GET.urlencode()}")
        page = ledger_page(coupon=coupon, number=request.GET.get("ledger_page"))
        return render(request, "timeline/coupon_ledger.html",
                      {"coupon": coupon, **ledger_context(request, coupon, page)})
