"""The console's one search box: which coupons a typed id names, and by which kind of key.

Support types whatever the customer or another team gave them: a coupon id, a user id, an
order id (also of an order that no longer holds the coupon), a payment id, a refund id, a
lease's lock id or a template code; a customer by phone, nickname or user id
(`customers_matching`). `coupon_search` lists the coupons any kind names, with the
filters and the order the list page asks for, as one query whose arms are subqueries on indexed
columns: no list of ids is ever loaded (a user with 300,000 coupons took 55 s that way).

Ids are matched the way a person types them: in any case, and by any part of them
(`demo_a` finds `ORDER_DEMO_A`, as a customer reads out the end of an order number); a lock id
from its first 8 characters, as the ledger shows it. An arm is `UPPER(column) LIKE '%TYPED%'`,
which PostgreSQL answers from the trigram GIN indexes of the *_trigram_search_indexes
migrations (pg_trgm); text shorter than a trigram matches by its beginning only
(`UPPER(column) LIKE 'TY%'`, the `text_pattern_ops` indexes of
coupons/migrations/0019_search_indexes), where "any part" would name nearly every id.

A user id or a template code may name very many coupons, so when no other kind matches the list
is read straight off the coupon table in page order. `matched_by` says which kinds named the
coupons of one page, with the value that matched; `CappedPaginator` stops counting past MATCH_CAP.
"""

import re
from dataclasses import dataclass
from functools import cached_property

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import BigIntegerField, Exists, OuterRef, Q, QuerySet, TextField, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Lower
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.models import (
    CaseStatus,
    ConflictCase,
    CouponLock,
    CouponTemplate,
    CustomerProfile,
    FactType,
    OrderFact,
    Redemption,
    UserCoupon,
)
from coupons.phones import normalised, phone_hash
from coupons.scope import applies_at_store, applies_to_channel
from refunds.models import RefundCoupon

# Key kinds, in the order the page names them.
COUPON, USER, ORDER, PAYMENT, REFUND, LOCK, TEMPLATE = (
    "coupon id", "user id", "order id", "payment id", "refund id", "lock id", "template code")
KINDS = (COUPON, USER, ORDER, PAYMENT, REFUND, LOCK, TEMPLATE)
# The kinds above travel through SQL (a UNION of literals) and stay English; a page shows these.
KIND_LABELS = {COUPON: _("coupon id"), USER: _("user id"), ORDER: _("order id"),
               PAYMENT: _("payment id"), REFUND: _("refund id"), LOCK: _("lock id"),
               TEMPLATE: _("template code")}
BIGINT_MAX = 2**63 - 1
# The ledger and the coupon page show a lock id's first 8 characters: enough to find it by.
LOCK_PREFIX_MIN = 8
LOCK_ID = re.compile(rf"[0-9a-f]{{{LOCK_PREFIX_MIN}}}[0-9a-f-]{{0,{36 - LOCK_PREFIX_MIN}}}")

VALID_NOW, EXPIRED, NOT_YET_VALID = "now", "expired", "not_yet"
VALIDITY = {VALID_NOW: _("Valid now"), EXPIRED: _("Expired (validity ended)"),
            NOT_YET_VALID: _("Not yet valid")}

# Sortable columns: the ?sort= name and the field it orders by (id breaks ties).
SORTS = {
    "id": "id", "user": "user_id", "status": "status", "template": Lower("template__code"),
    "version": "state_version", "valid_until": "valid_until", "updated": "updated_at",
}


@dataclass(frozen=True)
class SearchFilters:
    status: str = ""
    template_id: int | None = None
    validity: str = ""
    open_case: bool = False
    store: str = ""
    channel: str = ""
    sort: str = "id"
    descending: bool = False

    @property
    def narrowing(self) -> bool:
        return bool(self.status or self.template_id or self.validity or self.open_case
                    or self.store or self.channel)


@dataclass(frozen=True)
class Arm:
    """One kind of key: the rows it finds, their column naming the coupon and the one that
    matched the typed text."""

    kind: str
    rows: QuerySet
    matched: str
    column: str = "coupon_id"

    def coupon_ids(self) -> QuerySet:
        # Model orderings (cases, decisions) are not allowed inside a UNION or a subquery.
        return self.rows.order_by().values_list(self.column)


# pg_trgm indexes three-character pieces: a shorter text cannot use them.
FRAGMENT_MIN = 3


@dataclass(frozen=True)
class Match:
    """What named a coupon: the kind of key and the value that holds the typed text."""

    kind: str
    value: str


def holds(field: str, text: str) -> Q:
    """`field` holds `text` anywhere, in any case (`UPPER(field) LIKE UPPER('%text%')`, Django's
    icontains, LIKE's wildcards in `text` escaped); a text shorter than FRAGMENT_MIN only at
    its beginning."""
    lookup = "icontains" if len(text) >= FRAGMENT_MIN else "istartswith"
    return Q(**{f"{field}__{lookup}": text})


def holds_text(value: str, text: str) -> bool:
    """The same test in Python, for a row already read."""
    value, text = value.upper(), text.upper()
    return text in value if len(text) >= FRAGMENT_MIN else value.startswith(text)


def other_arms(text: str) -> list[Arm]:
    """Every kind of key but the user id and the template code: each names a few coupons, by
    an indexed column."""
    arms = [
        Arm(ORDER, CouponLock.objects.filter(holds("order_id", text)), "order_id"),
        # Wider than the API's order filter: an order known only from a case (its payment came
        # after the coupon moved on), or from a presale deposit whose LOCK was refused (the fact
        # names the coupon) ...
        Arm(ORDER, ConflictCase.objects.filter(holds("order_id", text)), "order_id"),
        Arm(ORDER, deposits(text), "order_id", "coupon_ref"),
        # ... or only from a refund sent for it.
        Arm(ORDER, RefundCoupon.objects.filter(holds("order_id", text)), "order_id"),
        Arm(PAYMENT, Redemption.objects.filter(holds("payment_id", text)), "payment_id"),
        Arm(PAYMENT, ConflictCase.objects.filter(holds("payment_id", text)), "payment_id"),
        Arm(REFUND, RefundCoupon.objects.filter(holds("refund_id", text)), "refund_id"),
    ]
    if text.isdigit() and int(text) <= BIGINT_MAX:
        arms.append(Arm(COUPON, UserCoupon.objects.filter(pk=int(text))
                        .annotate(id_text=Cast("pk", TextField())), "id_text", "id"))
    lock_prefix = as_lock_prefix(text)
    if lock_prefix is not None:
        arms.append(Arm(LOCK, CouponLock.objects.annotate(lock_text=Cast("pk", TextField()))
                        .filter(lock_text__startswith=lock_prefix), "lock_text"))
    return arms


def direct(text: str, templates: list[int]) -> Q:
    """The kinds read off the coupon row itself: its user id, its template (ids given, so the
    planner may combine two index scans instead of filtering every row by a subquery)."""
    condition = holds("user_id", text)
    return condition | Q(template_id__in=templates) if templates else condition


def template_ids(text: str, templates=None) -> list[int]:
    """The ids of the templates whose code is `text` in any case; from `templates` when the
    caller has them loaded already (the search page lists them for its filter)."""
    if templates is None:
        return list(CouponTemplate.objects.filter(code__iexact=text).values_list("pk", flat=True))
    return [t.pk for t in templates if t.code.upper() == text.upper()]


def matching(text: str, templates: list[int]) -> Q:
    """The coupons `text` names as any kind of key, as a WHERE clause."""
    arms = other_arms(text)
    first, *rest = [arm.coupon_ids() for arm in arms]
    if not first.union(*rest, all=True).exists():
        # Only (or no) user id or template: the planner reads the coupons in page order and
        # stops at the page, where an OR with the other arms would make it fetch every match
        # first.
        return direct(text, templates)
    # A few coupons: every arm's ids in one UNION, which PostgreSQL joins to the coupons by
    # their primary key (an OR of `IN (subquery)` would test every coupon row instead).
    own = UserCoupon.objects.filter(direct(text, templates)).order_by().values_list("id")
    return Q(pk__in=own.union(first, *rest, all=True))


def matched_by(text: str, coupons) -> dict[int, list[Match]]:
    """{coupon id: [what named it: kind and value]} for one page of coupons, in one query."""
    ids = [coupon.pk for coupon in coupons]
    matches = {coupon.pk: ([Match(USER, coupon.user_id)] if holds_text(coupon.user_id, text)
                           else [])
               + ([Match(TEMPLATE, coupon.template.code)]
                  if coupon.template.code.upper() == text.upper() else [])
               for coupon in coupons}
    first, *rest = [
        arm.rows.order_by().filter(**{f"{arm.column}__in": ids})
        .values_list(arm.column, Value(arm.kind), arm.matched)
        for arm in other_arms(text)]
    for coupon_id, kind, value in first.union(*rest):
        if Match(kind, value) not in matches[coupon_id]:
            matches[coupon_id].append(Match(kind, value))
    for found in matches.values():
        found.sort(key=lambda match: (KINDS.index(match.kind), match.value))
    return matches


def matched_kinds(text: str, templates: list[int]) -> list[str]:
    """The kinds of key `text` matched anywhere (the list's summary), in two queries: the user
    id by EXISTS, the others' kinds by one UNION (which keeps each kind once); and a third if
    `text` is a template's code, whether any coupon has that template."""
    kinds = [USER] if UserCoupon.objects.filter(holds("user_id", text)).exists() else []
    if templates and UserCoupon.objects.filter(template_id__in=templates).exists():
        kinds.append(TEMPLATE)
    first, *rest = [arm.rows.order_by().values_list(Value(arm.kind)) for arm in other_arms(text)]
    kinds += [kind for (kind,) in first.union(*rest)]
    return sorted(set(kinds), key=KINDS.index)


# --- customers ----------------------------------------------------------------------------

PHONE, NICKNAME = "phone", "nickname"
CUSTOMER_KIND_LABELS = {PHONE: _("phone"), NICKNAME: _("nickname"), USER: _("user id")}
# A search box lists a few customers; more means the text names no one in particular.
CUSTOMER_LIMIT = 20


@dataclass(frozen=True)
class CustomerMatch:
    """A customer the text names, and how: by phone (the value shown masked), nickname or
    user id."""

    profile: CustomerProfile
    kind: str
    value: str


def customers_matching(text: str) -> list[CustomerMatch]:
    """The customers `text` names: its phone number in any common spelling (by the number's
    keyed hash: the directory holds no number to compare with), or part of a nickname or user
    id. One query."""
    # Without the key no number can be looked up; names and ids still can.
    number = normalised(text) if settings.CUSTOMER_PHONE_KEY else None
    by_phone = Q(phone_hash=phone_hash(number)) if number else Q(pk__in=[])
    found = (CustomerProfile.objects.filter(by_phone | holds("nickname", text)
                                            | holds("user_id", text))
             .order_by("user_id")[:CUSTOMER_LIMIT])
    matches = []
    for profile in found:
        if number and profile.phone_hash == phone_hash(number):
            matches.append(CustomerMatch(profile, PHONE, profile.phone_masked))
        elif holds_text(profile.nickname, text):
            matches.append(CustomerMatch(profile, NICKNAME, profile.nickname))
        else:
            matches.append(CustomerMatch(profile, USER, profile.user_id))
    return matches


MATCH_CAP = 10_000


class CappedPaginator(Paginator):
    """Counts up to MATCH_CAP + 1 (`SELECT count(*) FROM (... LIMIT 10001)`): past the cap
    the page says "more than 10,000" instead of counting 300,000 rows on every page."""

    cap = MATCH_CAP

    @cached_property
    def count(self) -> int:
        return self.object_list[: self.cap + 1].count()

    @property
    def capped(self) -> bool:
        return self.count > self.cap


def deposits(order_id: str) -> QuerySet:
    """The DepositPaid facts of the orders holding `order_id`, with the coupon id each asked to
    lock (as text in the payload) as `coupon_ref`."""
    return OrderFact.objects.filter(
        holds("order_id", order_id), fact_type=FactType.DEPOSIT_PAID,
    ).annotate(coupon_ref=Cast(KT("payload__coupon_id"), BigIntegerField())).filter(
        # A deposit may name a coupon that does not exist: it names no kind of key then.
        Exists(UserCoupon.objects.filter(pk=OuterRef("coupon_ref"))))


def as_lock_prefix(text: str) -> str | None:
    """The beginning of a lock id as the database writes it as text, or None if `text` is not
    one of at least LOCK_PREFIX_MIN characters. PostgreSQL writes a uuid with dashes."""
    typed = text.lower()
    return typed if LOCK_ID.fullmatch(typed) else None


def coupon_search(*, text: str | None, filters: SearchFilters,
                  templates: list[int] | None = None) -> QuerySet[UserCoupon]:
    """Coupons `text` names (None: all coupons), filtered and ordered for the list;
    `templates`: the ids of the templates whose code `text` is (template_ids), if known."""
    now = clock.now()
    coupons = UserCoupon.objects.select_related("template", "template_version").annotate(
        has_open_case=Exists(ConflictCase.objects.filter(
            coupon=OuterRef("pk"), status=CaseStatus.OPEN)),
    )
    if text is not None:
        coupons = coupons.filter(matching(
            text, template_ids(text) if templates is None else templates))
    if filters.status:
        coupons = coupons.filter(status=filters.status)
    if filters.template_id:
        coupons = coupons.filter(template_id=filters.template_id)
    if filters.store:
        coupons = coupons.filter(applies_at_store(filters.store, path="template_version__"))
    if filters.channel:
        coupons = coupons.filter(applies_to_channel(filters.channel, path="template_version__"))
    if filters.validity == VALID_NOW:
        coupons = coupons.filter(Q(valid_from__isnull=True) | Q(valid_from__lte=now),
                                 Q(valid_until__isnull=True) | Q(valid_until__gt=now))
    elif filters.validity == EXPIRED:
        coupons = coupons.filter(valid_until__lte=now)
    elif filters.validity == NOT_YET_VALID:
        coupons = coupons.filter(valid_from__gt=now)
    if filters.open_case:
        coupons = coupons.filter(has_open_case=True)
    field = SORTS[filters.sort]
    if isinstance(field, str):
        ordering = [f"-{field}" if filters.descending else field]
    else:
        ordering = [field.desc() if filters.descending else field.asc()]
    return coupons.order_by(*ordering, "-id" if filters.descending else "id")
