"""One coupon's history from every source, merged into one time-ordered list for support.

The core's sources: the ledger, the rejection log, the order facts of every order that held
the coupon, conflict cases and presale settlements. The packages above it add their own, which
their callers pass in (`extra_sources`): after-sale's compensations and refund decisions
(received, decided, approved or rejected; the RETURN they executed is a ledger entry:
refunds/history.py), the console's staff notes. Ties at one instant keep a
fixed order (a fact before the commands it caused, a command before what it led to), then the
row id, then the row's step (a case is opened before it is resolved).

A page of it is each source's rows past the cursor, cut to the page on its index, merged by key
(time, kind, id, step) in the database (`coupon_timeline_page`: the API's cursor pages, the
console's pages): one query of every source's keys (one UNION ALL,
QuerySet.union) and one query by primary key for each kind of row on the page (sources reading
the same table share one: `Source.read`). A coupon with thousands of ledger rows renders as fast
as a new one. The whole history by offset (`merged_timeline`, the API's full list) is one query
of keys (the same UNION ALL) and one query for each kind of row on the slice.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.core.paginator import Paginator
from django.db.models import F, Q, QuerySet, Value
from django.utils.translation import gettext as _

from coupons.ledger_reasons import reason_words
from coupons.models import (
    CaseStatus,
    CommandRejection,
    ConflictCase,
    CouponOperation,
    OrderCoupon,
    OrderFact,
    PresaleSettlement,
)
from coupons.redaction import visible
from coupons.refusal_messages import refusal_words
from coupons.write.payloads import iso, money

# Every kind's place at one instant, the kinds of the sources passed in too: a refund is
# received, decided and (when it waits for one) reviewed before the RETURN it executes at the
# same instant; a reader's own sources (the console's staff notes) come last.
KIND_ORDER = ["fact", "refund", "review", "operation", "refusal", "case", "settlement",
              "compensation", "note"]


def entry(at, kind, pk, title, **details) -> dict:
    return {"at": at, "kind": kind, "id": pk, "title": title,
            "details": {k: v for k, v in details.items() if v not in ("", None)}}


@dataclass(frozen=True)
class Source:
    """One kind of row and one of its moments (`step`: a case's opening, then its resolution)."""

    kind: str
    step: int
    time_field: str
    rows: Callable[[object], QuerySet]  # coupon → the rows that have this moment
    build: Callable[[object, bool], dict]  # (row, can_see_details) → entry
    version_step: Callable[[object], str] = lambda row: ""
    # coupon → a queryset that reads this source's rows by primary key (its related rows
    # with them); sources passing the same one read the rows a page shows in one query.
    read: Callable[[object], QuerySet] | None = None

    def reader(self) -> Callable[[object], QuerySet]:
        return self.read or self.rows

    @property
    def rank(self) -> int:
        return KIND_ORDER.index(self.kind)

    def key(self, row) -> "TimelineKey":
        return TimelineKey(getattr(row, self.time_field), self.rank, row.pk, self.step)


def _operation(op, can_see_details):
    return entry(op.created_at, "operation", op.pk,
                 f"{op.op_type} {op.from_state or '∅'}→{op.to_state} (v{op.to_version})",
                 actor=op.actor, order_id=op.order_id, payment_id=op.payment_id,
                 lock_id=str(op.lock_id) if op.lock_id else None, op_type=op.op_type,
                 from_state=op.from_state, to_state=op.to_state, to_version=op.to_version,
                 idempotency_key=op.idempotency_key,
                 **visible(CouponOperation, {"reason": reason_words(op),
                                             "reason_code": op.reason_code},
                           can_see_details=can_see_details, op_type=op.op_type))


def _refusal(r, can_see_details):
    return entry(r.created_at, "refusal", r.pk,
                 _("%(op)s refused: %(code)s") % {"op": r.op_type, "code": r.error_code},
                 actor=r.actor, order_id=r.order_id, message=refusal_words(r),
                 message_code=r.message_code, op_type=r.op_type, error_code=r.error_code,
                 idempotency_key=r.idempotency_key)


def _refusal_version(r) -> str:
    version = r.details.get("current_version") if isinstance(r.details, dict) else None
    return _("at v%(version)s") % {"version": version} if version is not None else ""


def _fact(f, can_see_details):
    return entry(f.recorded_at, "fact", f.pk,
                 _("%(fact)s for order %(order)s") % {"fact": f.fact_type, "order": f.order_id},
                 order_id=f.order_id, payment_id=f.payment_id, refund_id=f.refund_id,
                 occurred_at=iso(f.occurred_at), fact_type=f.fact_type)


def _case_opened(case, can_see_details):
    return entry(case.opened_at, "case", case.pk,
                 _("Conflict case #%(case)s opened: %(recommendation)s")
                 % {"case": case.pk, "recommendation": case.recommendation},
                 order_id=case.order_id, summary=case.summary_text,
                 recommendation=case.recommendation)


def _case_resolved(case, can_see_details):
    return entry(case.resolved_at, "case", case.pk,
                 (_("Conflict case #%(case)s dismissed") if case.status == CaseStatus.DISMISSED
                  else _("Conflict case #%(case)s resolved")) % {"case": case.pk},
                 **visible(ConflictCase, {
                     "resolved_by": case.resolved_by,
                     "resolution_note": case.resolution_note,
                 }, can_see_details=can_see_details))


def _settlement(s, can_see_details):
    return entry(s.settled_at, "settlement", s.pk,
                 _("Presale order %(order)s: %(result)s")
                 % {"order": s.order_id, "result": s.result},
                 strategy=s.strategy, discount_amount=money(s.discount_amount),
                 substitute_coupon_id=s.substitute_id)


@dataclass(frozen=True)
class Coupons:
    """Several coupons whose histories read as one (a customer's): a source's `rows` of any."""

    ids: tuple[int, ...]


def of(coupon, field: str = "coupon") -> Q:
    """The rows of `coupon` (one coupon, or Coupons) by their column `field` naming it."""
    if isinstance(coupon, Coupons):
        return Q(**{f"{field}__in": coupon.ids})
    return Q(**{field: coupon.pk})


def _facts_of(coupon) -> QuerySet:
    # The facts of every order that ever held the coupon, one query with its subquery.
    return OrderFact.objects.filter(
        order_id__in=OrderCoupon.objects.filter(of(coupon)).values("order_id"))


def _cases_of(coupon) -> QuerySet:
    return ConflictCase.objects.filter(of(coupon))


CORE_SOURCES = [
    Source("operation", 0, "created_at", lambda c: CouponOperation.objects.filter(of(c)),
           _operation, lambda op: f"v{op.from_version} → v{op.to_version}"),
    Source("refusal", 0, "created_at",
           lambda c: CommandRejection.objects.filter(of(c, "coupon_id_ref")), _refusal,
           _refusal_version),
    Source("fact", 0, "recorded_at", _facts_of, _fact),
    Source("case", 0, "opened_at", _cases_of, _case_opened, read=_cases_of),
    Source("case", 1, "resolved_at",
           lambda c: _cases_of(c).filter(resolved_at__isnull=False), _case_resolved,
           read=_cases_of),
    Source("settlement", 0, "settled_at", lambda c: PresaleSettlement.objects.filter(of(c)),
           _settlement),
]


def merged_timeline(*, coupon, can_see_details: bool,
                    extra_sources: Sequence[Source] = ()) -> "MergedTimeline":
    """The whole history, oldest first, as a sequence read a slice at a time (the API pages
    it): its length is one count and each slice one query of keys plus one read of their
    rows, every source's in the same statement. `can_see_details`: whether the reader may see
    case notes and compensation amounts; `extra_sources`: the caller's sources beyond the
    core's (after-sale's, refunds/history.py)."""
    return MergedTimeline(coupon, [*CORE_SOURCES, *extra_sources], can_see_details)


def coupon_timeline(*, coupon, can_see_details: bool,
                    extra_sources: Sequence[Source] = ()) -> list[dict]:
    """The whole history at once, worded in the language active now."""
    return list(merged_timeline(coupon=coupon, can_see_details=can_see_details,
                                extra_sources=extra_sources))


def _all_keys(coupon, sources) -> QuerySet:
    """Every source's keys (KEY_COLUMNS), one UNION ALL, not yet read."""
    first, *rest = [source.rows(coupon).order_by().annotate(**_key_columns(source))
                    .values_list(*KEY_COLUMNS) for source in sources]
    return first.union(*rest, all=True)


def _rows_of(coupon, sources, keys) -> dict[tuple[int, int], dict[int, object]]:
    """{(rank, step): {pk: row}} of the rows the keys name: one query by primary key for each
    reader among their sources (`Source.reader`: its queryset, so the related rows it reads
    come with it). A key's kind and step name its source: two sources never share both."""
    source_of = {(source.rank, source.step): source for source in sources}
    keys = list(keys)
    wanted: dict[Callable, set[int]] = {}
    for _at, rank, pk, step in keys:
        wanted.setdefault(source_of[rank, step].reader(), set()).add(pk)
    read = {reader: reader(coupon).in_bulk(pks) for reader, pks in wanted.items()}
    rows: dict[tuple[int, int], dict[int, object]] = {}
    for _at, rank, pk, step in keys:
        found = read[source_of[rank, step].reader()]
        if pk in found:
            rows.setdefault((rank, step), {})[pk] = found[pk]
    return rows


class MergedTimeline:
    """Every entry of a coupon's timeline, oldest first; len() and slices, never the whole."""

    def __init__(self, coupon, sources: Sequence[Source], can_see_details: bool):
        self.coupon, self.sources, self.can_see_details = coupon, list(sources), can_see_details

    def __len__(self) -> int:
        return _all_keys(self.coupon, self.sources).count()

    def __iter__(self):
        return iter(self[:])

    def __getitem__(self, window: slice | int):
        if isinstance(window, int):
            return list(self)[window]
        start, stop = window.start or 0, window.stop
        if stop is not None and stop <= start:
            return []
        keys = list(_all_keys(self.coupon, self.sources).order_by(*KEY_COLUMNS)[start:stop])
        rows = _rows_of(self.coupon, self.sources, keys)
        source_of = {(source.rank, source.step): source for source in self.sources}
        return [{**built, "at": iso(built["at"])} for built in (
            source_of[rank, step].build(rows[rank, step][pk], self.can_see_details)
            for _at, rank, pk, step in keys)]


# --- one page at a time ----------------------------------------------------------------------

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, order=True)
class TimelineKey:
    """Where an entry sits in the merged order; as text it is a page cursor and an anchor."""

    at: datetime
    rank: int
    id: int
    step: int

    def __str__(self) -> str:
        micros = (self.at - EPOCH) // timedelta(microseconds=1)
        return f"{micros}-{self.rank}-{self.id}-{self.step}"

    @classmethod
    def parse(cls, text: str | None) -> "TimelineKey | None":
        """None for anything that is not a cursor: a bad link shows the latest page."""
        try:
            micros, rank, pk, step = (int(part) for part in (text or "").split("-"))
            return cls(EPOCH + timedelta(microseconds=micros), rank, pk, step)
        except (ValueError, OverflowError):
            return None


@dataclass
class TimelinePage:
    entries: list[dict] = field(default_factory=list)
    earlier: TimelineKey | None = None  # cursor for the page before, if there may be one
    later: TimelineKey | None = None


def _beyond(source: Source, cursor: TimelineKey, forward: bool, inclusive: bool) -> Q:
    """The rows of `source` whose key lies past `cursor` (in SQL, so the index does the work)."""
    time = source.time_field
    strictly, or_equal = ("gt", "gte") if forward else ("lt", "lte")
    if source.rank != cursor.rank:
        # At the cursor's instant, a kind ranked after it comes after it.
        same_instant_counts = (source.rank > cursor.rank) == forward
        return Q(**{f"{time}__{or_equal if same_instant_counts else strictly}": cursor.at})
    if source.step == cursor.step:
        id_lookup = or_equal if inclusive else strictly
    else:
        id_lookup = or_equal if (source.step > cursor.step) == forward else strictly
    return Q(**{f"{time}__{strictly}": cursor.at}) | Q(**{time: cursor.at,
                                                          f"pk__{id_lookup}": cursor.id})


class _TimelinePage:
    """What a page of the timeline reads, and what it makes of the rows it read."""

    def __init__(self, *, coupon, can_see_details: bool, size: int = 50,
                 after: TimelineKey | None = None, before: TimelineKey | None = None,
                 start: TimelineKey | None = None, extra_sources: Sequence[Source] = (),
                 labelled: bool = False):
        self.coupon, self.can_see_details, self.size = coupon, can_see_details, size
        # Entries name their coupon: a page merging several coupons' timelines.
        self.labelled = labelled
        self.cursor = after or start or before
        self.forward = before is None and (after is not None or start is not None)
        self.inclusive = start is not None
        self.sources = [*CORE_SOURCES, *extra_sources]

    def parts(self) -> list[QuerySet]:
        """Each source's first size + 1 rows past the cursor, cut on its index, with their
        keys as columns (KEY_COLUMNS)."""
        parts = []
        for source in self.sources:
            rows = source.rows(self.coupon)
            if self.cursor is not None:
                rows = rows.filter(_beyond(source, self.cursor, self.forward, self.inclusive))
            order = ([source.time_field, "pk"] if self.forward
                     else [f"-{source.time_field}", "-pk"])
            parts.append(rows.order_by(*order).annotate(**_key_columns(source))[:self.size + 1])
        return parts

    def read(self) -> list[list]:
        """The page's rows, each source's: one query of the first size + 1 keys in the merged
        order (every source's keys, one UNION ALL), then one query by primary key for each
        reader among their sources."""
        first, *rest = [part.values_list(*KEY_COLUMNS) for part in self.parts()]
        order = KEY_COLUMNS if self.forward else [f"-{name}" for name in KEY_COLUMNS]
        keys = first.union(*rest, all=True).order_by(*order)[:self.size + 1]
        rows = _rows_of(self.coupon, self.sources, keys)
        return [list(rows.get((source.rank, source.step), {}).values())
                for source in self.sources]

    def finish(self, found: list[list]) -> TimelinePage:
        forward, size, cursor = self.forward, self.size, self.cursor
        keyed = sorted(((source.key(row), source, row)
                        for source, rows in zip(self.sources, found, strict=True)
                        for row in rows),
                       key=lambda read: read[0], reverse=not forward)
        more = len(keyed) > size
        read = keyed[:size]
        if not forward:
            read.reverse()
        entries = [{**source.build(row, self.can_see_details), "key": key,
                    "version_step": source.version_step(row),
                    **({"coupon_id": _coupon_of(row)} if self.labelled else {})}
                   for key, source, row in read]
        page = TimelinePage(entries=entries)
        if entries:
            first, last = entries[0]["key"], entries[-1]["key"]
            page.earlier = first if (more if not forward else cursor is not None) else None
            page.later = last if (more if forward else cursor is not None) else None
        return page


def coupons_timeline_page(*, coupons, can_see_details: bool, size: int = 50,
                          after: TimelineKey | None = None, before: TimelineKey | None = None,
                          extra_sources: Sequence[Source] = ()) -> TimelinePage:
    """One page of several coupons' timelines merged (a customer's), as `coupon_timeline_page`
    pages one: each source reads the rows of all the coupons at once, so its cost is the same
    whatever the histories' lengths or the number of coupons. Each entry names its
    `coupon_id` (None for an order's fact, which belongs to the order)."""
    plan = _TimelinePage(coupon=Coupons(tuple(coupon.pk for coupon in coupons)),
                         can_see_details=can_see_details, size=size, after=after,
                         before=before, extra_sources=extra_sources, labelled=True)
    return plan.finish(plan.read())


def _coupon_of(row) -> int | None:
    """The coupon a source's row is about; None for an order's fact."""
    return getattr(row, "coupon_id", None) or getattr(row, "coupon_id_ref", None)


# A row's key (TimelineKey) in SQL, so the database merges the sources' rows and cuts the page.
KEY_COLUMNS = ("timeline_at", "timeline_rank", "timeline_id", "timeline_step")


def _key_columns(source: Source) -> dict:
    return dict(zip(KEY_COLUMNS, (F(source.time_field), Value(source.rank), F("pk"),
                                  Value(source.step)), strict=True))


def coupon_timeline_page(**page) -> TimelinePage:
    """One page of the timeline, oldest entry first: the `size` entries just `after` a cursor,
    just `before` one, from `start` on (a deep link), or else the latest ones.

    Each source gives at most size + 1 of its rows past the cursor, cut on its index, and the
    database keeps the first size + 1 of their keys in the merged order: one query of keys and
    one by primary key for each kind of row on the page, whatever the history's length, and
    only the page's rows read into instances. `extra_sources` are the caller's, beyond the
    core's (the console adds after-sale's and its staff notes; the core imports neither).
    Entries carry `at` as a datetime, their `key` (anchor and cursor) and `version_step`
    ("v7 → v8").
    """
    plan = _TimelinePage(**page)
    return plan.finish(plan.read())


def timeline_after(*, coupon, can_see_details: bool, after: str | None, size: int,
                   extra_sources: Sequence[Source] = ()) -> tuple[list[dict], str | None]:
    """The API's cursor pages: the `size` entries after the key `after` (from the first
    without one), written as `coupon_timeline` writes them, and the key of the last one when
    more follow."""
    key = TimelineKey.parse(after) if after else None
    page = coupon_timeline_page(
        coupon=coupon, can_see_details=can_see_details, size=size, extra_sources=extra_sources,
        **({"after": key} if key else {"start": TimelineKey(EPOCH, 0, 0, 0)}))
    entries = [{**{name: value for name, value in entry.items()
                   if name not in ("key", "version_step")}, "at": iso(entry["at"])}
               for entry in page.entries]
    return entries, str(page.later) if page.later else None


def timeline_length(*, coupon, extra_sources: Sequence[Source] = ()) -> int:
    return sum(source.rows(coupon).count() for source in [*CORE_SOURCES, *extra_sources])


# --- the ledger table ---------------------------------------------------------------------

LEDGER_PAGE_SIZE = 50


class LedgerPaginator(Paginator):
    """Pages a coupon's ledger by version: the row of version k is the k-th, so a page is one
    range read on the (coupon, to_version) index, where an OFFSET would walk every row before
    it (the last page of 20,000 rows is the one a reader opens first). The count is the
    coupon's state_version, with no query: one row per version is what the check verifies."""

    def __init__(self, coupon, per_page: int):
        super().__init__(CouponOperation.objects.filter(coupon=coupon).order_by("to_version"),
                         per_page)
        self.versions = coupon.state_version

    @property
    def count(self) -> int:
        return self.versions

    def page(self, number):
        number = self.validate_number(number)
        after = (number - 1) * self.per_page
        rows = self.object_list.filter(to_version__gt=after,
                                       to_version__lte=after + self.per_page)
        return self._get_page(rows, number, self)


def ledger_page(*, coupon, number: str | int | None, size: int = LEDGER_PAGE_SIZE):
    """A page of ledger rows by version; the last (newest) page unless a number is asked.

    One range read whatever the ledger's length (the page's number and count need none); its
    rows are read when the page is first used.
    """
    paginator = LedgerPaginator(coupon, size)
    return paginator.get_page(number or paginator.num_pages)
