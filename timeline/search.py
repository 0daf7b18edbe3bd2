"""The console's one search box: which coupons a typed id names, and by which kind of key.

Support types whatever the customer or another team gave them: a coupon id, a user id, an
order id (also of an order that no longer holds the coupon), a payment id, a refund id or a
lease's lock id. `coupon_matches` answers every kind in one UNION query, each arm a lookup on
an indexed column; `coupon_search` then lists those coupons with the filters and the order
the list page asks for (a count and a page: two more queries).
"""

import uuid
from dataclasses import dataclass

from django.db.models import BigIntegerField, Exists, OuterRef, Q, QuerySet, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Lower

from coupons import clock
from coupons.models import (
    CaseStatus,
    ConflictCase,
    CouponLock,
    FactType,
    OrderFact,
    Redemption,
    UserCoupon,
)
from coupons.selectors import order_coupon_ids
from refunds.models import RefundCoupon

# Key kinds, in the order the page names them.
COUPON, USER, ORDER, PAYMENT, REFUND, LOCK = (
    "coupon id", "user id", "order id", "payment id", "refund id", "lock id")
KINDS = (COUPON, USER, ORDER, PAYMENT, REFUND, LOCK)
BIGINT_MAX = 2**63 - 1

VALID_NOW, EXPIRED, NOT_YET_VALID = "now", "expired", "not_yet"
VALIDITY = {VALID_NOW: "Valid now", EXPIRED: "Expired (validity ended)",
            NOT_YET_VALID: "Not yet valid"}

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
    sort: str = "id"
    descending: bool = False

    @property
    def narrowing(self) -> bool:
        return bool(self.status or self.template_id or self.validity or self.open_case)


def coupon_matches(text: str) -> dict[int, list[str]]:
    """{coupon id: [key kinds that matched]} for one typed key; {} when nothing does."""
    text = text.strip()
    if not text:
        return {}
    arms = [
        UserCoupon.objects.filter(user_id=text).values_list("id", Value(USER)),
        order_coupon_ids(text).values_list("coupon_id", Value(ORDER)),
        # Wider than the API's order filter: an order known only from a case (its payment came
        # after the coupon moved on), or from a presale deposit whose LOCK was refused (the fact
        # names the coupon) ...
        ConflictCase.objects.filter(order_id=text).values_list("coupon_id", Value(ORDER)),
        UserCoupon.objects.filter(pk__in=deposit_coupon_ids(text)).values_list(
            "id", Value(ORDER)),
        # ... or only from a refund sent for it.
        RefundCoupon.objects.filter(order_id=text).values_list("coupon_id", Value(ORDER)),
        Redemption.objects.filter(payment_id=text).values_list("coupon_id", Value(PAYMENT)),
        ConflictCase.objects.filter(payment_id=text).values_list("coupon_id", Value(PAYMENT)),
        RefundCoupon.objects.filter(refund_id=text).values_list("coupon_id", Value(REFUND)),
    ]
    if text.isdigit() and int(text) <= BIGINT_MAX:
        arms.append(UserCoupon.objects.filter(pk=int(text)).values_list("id", Value(COUPON)))
    lock_id = as_uuid(text)
    if lock_id is not None:
        arms.append(CouponLock.objects.filter(pk=lock_id).values_list("coupon_id", Value(LOCK)))
    # Model orderings (cases, decisions) are not allowed inside a UNION.
    first, *rest = [arm.order_by() for arm in arms]
    matches: dict[int, list[str]] = {}
    for coupon_id, kind in first.union(*rest):
        kinds = matches.setdefault(coupon_id, [])
        if kind not in kinds:
            kinds.append(kind)
    for kinds in matches.values():
        kinds.sort(key=KINDS.index)
    return matches


def deposit_coupon_ids(order_id: str) -> QuerySet:
    """The coupon ids the order's DepositPaid facts asked to lock (as text in the payload)."""
    return OrderFact.objects.filter(
        order_id=order_id, fact_type=FactType.DEPOSIT_PAID,
    ).annotate(coupon_ref=Cast(KT("payload__coupon_id"), BigIntegerField())).values("coupon_ref")


def as_uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def coupon_search(*, coupon_ids, filters: SearchFilters) -> QuerySet[UserCoupon]:
    """Coupons among `coupon_ids` (None: all coupons), filtered and ordered for the list."""
    now = clock.now()
    coupons = UserCoupon.objects.select_related("template", "template_version").annotate(
        has_open_case=Exists(ConflictCase.objects.filter(
            coupon=OuterRef("pk"), status=CaseStatus.OPEN)),
    )
    if coupon_ids is not None:
        coupons = coupons.filter(pk__in=list(coupon_ids))
    if filters.status:
        coupons = coupons.filter(status=filters.status)
    if filters.template_id:
        coupons = coupons.filter(template_id=filters.template_id)
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
