"""The Activity page's reads: what people viewed, did and were refused, newest first.

Three kinds merged into one list: views (the console's view log, exports and the return
policy pages included), actions (ledger rows, case resolutions, refund reviews, compensation
proposals and decisions, goodwill coupons proposed and decided, staff notes, return policy
drafts and publications) and refusals (the rejection log, refused console attempts included).
Each source is read newest first, at most one page plus one row past the page's cursor, and
merged by time: a page costs one bounded query per source however long the history is.

The cursor holds, per source, the position of the last row shown, so paging never repeats or
skips a row. Every source is read in the order of its time (then id): an id follows the order
rows were written, which is not their time when a clock was set back (the demo's replayed
stories) or a decision came long after its row was made.
"""

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Q, QuerySet
from django.urls import reverse
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import pgettext_lazy

from coupons.models import CommandRejection, ConflictCase, CouponOperation, GoodwillProposal
from coupons.refusal_messages import refusal_words
from refunds.models import Compensation, RefundCoupon, ReturnPolicyVersion
from timeline.glossary import (
    COMPENSATION_KINDS,
    COMPENSATION_STATUSES,
    DECISION_STATUSES,
    ERRORS,
    operation_words,
    state_words,
    worded,
)
from timeline.models import StaffNote, ViewRecord

VIEWS, ACTIONS, REFUSALS = "views", "actions", "refusals"
PAGE_SIZE = 50
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Stream:
    name: str  # the cursor's name for it
    kind: str  # VIEWS, ACTIONS or REFUSALS
    rows: Callable[[], QuerySet]
    time_field: str
    actor_field: str
    coupon_field: str  # "" for what is about no coupon (a return policy)
    describe: Callable[[object], str]

    def ordered(self, rows: QuerySet) -> QuerySet:
        return rows.order_by(f"-{self.time_field}", "-pk")

    def past(self, position: tuple[datetime, int]) -> Q:
        at, pk = position
        return Q(**{f"{self.time_field}__lt": at}) | Q(**{self.time_field: at, "pk__lt": pk})


# The view log names pages by these codes (ConsolePage.audit_page, the exports).
PAGES = {
    "coupon": pgettext_lazy("activity: opened ...", "coupon"),
    "search": pgettext_lazy("activity: opened ...", "search"),
    "approvals": pgettext_lazy("activity: opened ...", "approval queue"),
    "cases": pgettext_lazy("activity: opened ...", "conflict cases"),
    "compensations": pgettext_lazy("activity: opened ...", "compensations"),
    "note": pgettext_lazy("activity: opened ...", "staff note"),
    "customer": pgettext_lazy("activity: opened ...", "customer page"),
    "goodwill": pgettext_lazy("activity: opened ...", "goodwill coupons"),
    "policies": pgettext_lazy("activity: opened ...", "return policies"),
    "policy": pgettext_lazy("activity: opened ...", "return policy"),
    "policy-version": pgettext_lazy("activity: opened ...", "return policy version"),
    "policy-diff": pgettext_lazy("activity: opened ...", "return policy comparison"),
    "policy-impact": pgettext_lazy("activity: opened ...", "return policy impact"),
    "policy-editor": pgettext_lazy("activity: opened ...", "return policy draft editor"),
}


def _view(v):
    page = PAGES.get(v.page, v.page)
    if v.kind == ViewRecord.Kind.EXPORT:
        return _("Exported the %(page)s list") % {"page": page}
    return _("Opened %(page)s") % {"page": page}


def _operation(op):
    return format_html("{} {}→{} (v{})", operation_words(op.op_type),
                       state_words(op.from_state) if op.from_state else "∅",
                       state_words(op.to_state), op.to_version)


def _case(case):
    return _("Resolved conflict case #%(id)s: %(resolution)s") % {
        "id": case.pk, "resolution": case.resolution}


def _worded_sentence(sentence: str, **facts) -> str:
    # The sentence is text (escaped); the facts are escaped unless they are a word and badge.
    return mark_safe(conditional_escape(sentence) % {
        name: conditional_escape(value) for name, value in facts.items()})


def _review(decision):
    # A review approves or rejects: the verb says which.
    sentence = {RefundCoupon.Status.EXECUTED: _("Approved refund decision #%(id)s"),
                RefundCoupon.Status.REJECTED: _("Rejected refund decision #%(id)s"),
                }.get(decision.status, _("Reviewed refund decision #%(id)s: %(status)s"))
    return _worded_sentence(sentence, id=decision.pk,
                            status=worded(decision.status, DECISION_STATUSES))


def _proposed(compensation):
    return _worded_sentence(_("Proposed compensation #%(id)s: %(kind)s"), id=compensation.pk,
                            kind=worded(compensation.kind, COMPENSATION_KINDS))


def _compensation(compensation):
    # "Decided …: REJECTED" read as an approval; the verb is the decision.
    sentence = {Compensation.Status.APPROVED: _("Approved compensation #%(id)s"),
                Compensation.Status.REJECTED: _("Rejected compensation #%(id)s"),
                }.get(compensation.status, _("Decided compensation #%(id)s: %(status)s"))
    return _worded_sentence(sentence, id=compensation.pk,
                            status=worded(compensation.status, COMPENSATION_STATUSES))


def _goodwill_proposed(proposal):
    return _("Proposed goodwill coupon #%(id)s for customer %(user_id)s (%(answers)s)") % {
        "id": proposal.pk, "user_id": proposal.user_id, "answers": proposal.answers}


def _goodwill_decided(proposal):
    if proposal.status == GoodwillProposal.Status.APPROVED:
        return _("Approved goodwill coupon #%(id)s: issued coupon %(coupon)s") % {
            "id": proposal.pk, "coupon": proposal.issued_coupon_id}
    return _("Rejected goodwill coupon #%(id)s") % {"id": proposal.pk}


def _note(note):
    return _("Wrote staff note #%(id)s") % {"id": note.pk}


def _drafted(version):
    return _("Drafted return policy %(policy)s version %(number)s") % {
        "policy": version.policy.code, "number": version.number}


def _published(version):
    return _("Published return policy %(policy)s version %(number)s") % {
        "policy": version.policy.code, "number": version.number}


def _refusal(rejection):
    return _worded_sentence(_("%(op)s refused: %(code)s"), op=operation_words(rejection.op_type),
                            code=worded(rejection.error_code, ERRORS))


STREAMS = [
    Stream("view", VIEWS, ViewRecord.objects.all, "created_at", "actor", "coupon_id", _view),
    Stream("ledger", ACTIONS, CouponOperation.objects.all, "created_at", "actor", "coupon_id",
           _operation),
    Stream("case", ACTIONS, lambda: ConflictCase.objects.filter(resolved_at__isnull=False),
           "resolved_at", "resolved_by", "coupon_id", _case),
    Stream("review", ACTIONS, lambda: RefundCoupon.objects.filter(reviewed_at__isnull=False),
           "reviewed_at", "reviewed_by", "coupon_id", _review),
    # Proposed in the console, over the API or by the system (an order's discount owed).
    Stream("compensation_proposal", ACTIONS, Compensation.objects.all, "created_at",
           "created_by", "coupon_id", _proposed),
    Stream("compensation", ACTIONS,
           lambda: Compensation.objects.filter(decided_at__isnull=False),
           "decided_at", "decided_by", "coupon_id", _compensation),
    Stream("note", ACTIONS, StaffNote.objects.all, "created_at", "author", "coupon_id", _note),
    Stream("goodwill_proposed", ACTIONS, GoodwillProposal.objects.all, "created_at",
           "created_by", "coupon_id", _goodwill_proposed),
    Stream("goodwill_decided", ACTIONS,
           lambda: GoodwillProposal.objects.filter(decided_at__isnull=False),
           "decided_at", "decided_by", "coupon_id", _goodwill_decided),
    Stream("policy_draft", ACTIONS,
           lambda: ReturnPolicyVersion.objects.select_related("policy"),
           "created_at", "created_by", "", _drafted),
    Stream("policy_publish", ACTIONS,
           lambda: ReturnPolicyVersion.objects.select_related("policy")
           .filter(published_at__isnull=False),
           "published_at", "published_by", "", _published),
    Stream("refusal", REFUSALS, CommandRejection.objects.all, "created_at", "actor",
           "coupon_id_ref", _refusal),
]


@dataclass(frozen=True)
class ActivityFilters:
    actor: str = ""  # as the logs name people: "user:alice" (a bare name means a person)
    coupon_id: int | None = None
    kind: str = ""  # VIEWS, ACTIONS, REFUSALS or every kind


def parse_cursor(text: str | None) -> dict[str, tuple[datetime, int]]:
    """{stream: (time, id) of the last row shown}; anything unreadable is the first page."""
    positions = {}
    for part in (text or "").split("."):
        name, _, rest = part.partition("~")
        micros, _, pk = rest.partition("~")
        try:
            positions[name] = (EPOCH + timedelta(microseconds=int(micros)), int(pk))
        except (ValueError, OverflowError):
            return {}
    return positions


def format_cursor(positions: dict[str, tuple[datetime, int]]) -> str:
    return ".".join(f"{name}~{(at - EPOCH) // timedelta(microseconds=1)}~{pk}"
                    for name, (at, pk) in sorted(positions.items()))


@dataclass
class ActivityPage:
    entries: list[dict]
    older: str | None  # the cursor of the next (older) page, if there is one


def activity_page(*, filters: ActivityFilters, cursor: str | None = None,
                  size: int = PAGE_SIZE) -> ActivityPage:
    positions = parse_cursor(cursor)
    heads = []  # per stream, its rows newest first (at most size + 1)
    for stream in STREAMS:
        if filters.kind and stream.kind != filters.kind:
            continue
        rows = stream.rows()
        if filters.actor:
            # A refused console page names the person by their bare sign-in name
            # (record_console_denial); every other log as "user:<name>".
            names = {filters.actor, filters.actor.removeprefix("user:")}
            rows = rows.filter(**{f"{stream.actor_field}__in": sorted(names)})
        if filters.coupon_id is not None:
            if not stream.coupon_field:
                continue  # about no coupon
            rows = rows.filter(**{stream.coupon_field: filters.coupon_id})
        if stream.name in positions:
            rows = rows.filter(stream.past(positions[stream.name]))
        heads.append((stream, list(stream.ordered(rows)[:size + 1])))
    # A k-way merge on each source's own order: every page takes a prefix of each source, so
    # the cursor (per source, the last row taken) never skips one.
    queue = [(-_time(stream, rows[0]).timestamp(), index, 0)
             for index, (stream, rows) in enumerate(heads) if rows]
    heapq.heapify(queue)
    entries = []
    while queue and len(entries) < size:
        _, index, position = heapq.heappop(queue)
        stream, rows = heads[index]
        row = rows[position]
        entries.append(_entry(stream, row))
        positions[stream.name] = (_time(stream, row), row.pk)
        if position + 1 < len(rows):
            heapq.heappush(queue, (-_time(stream, rows[position + 1]).timestamp(), index,
                                   position + 1))
    return ActivityPage(entries=entries, older=format_cursor(positions) if queue else None)


def _time(stream, row) -> datetime:
    return getattr(row, stream.time_field)


def _entry(stream: Stream, row) -> dict:
    coupon_id = getattr(row, stream.coupon_field) if stream.coupon_field else None
    if stream.name == "view":
        link = row.path
    elif not stream.coupon_field:
        link = reverse("console:policy", args=[row.policy_id])
    else:
        link = reverse("console:coupon", args=[coupon_id]) if coupon_id else ""
    return {"kind": stream.kind, "at": _time(stream, row),
            "actor": getattr(row, stream.actor_field), "what": stream.describe(row),
            "coupon_id": coupon_id, "link": link,
            "detail": refusal_words(row) if stream.name == "refusal" else ""}
