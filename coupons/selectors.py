"""Reads. Views and serializers get coupons and their history from here."""


from django.db.models import Count, QuerySet
from django.utils.translation import gettext_lazy as _

from coupons.errors import NotFound, TokenMismatch
from coupons.models import (
    CaseStatus,
    CommandRejection,
    ConflictCase,
    CouponLock,
    CouponOperation,
    CouponStatus,
    CouponTemplate,
    CustomerProfile,
    ExpiryWarning,
    LockStatus,
    UserCoupon,
)
from coupons.write.payloads import iso
from coupons.write.tokens import RetiredLeaseKey, lease_token


def coupon_get(*, coupon_id) -> UserCoupon:
    coupon = (UserCoupon.objects.select_related("template_version__template")
              .filter(pk=coupon_id).first())
    if coupon is None:
        raise NotFound(_("No such coupon."), coupon_id=coupon_id)
    return coupon


def coupon_list() -> QuerySet[UserCoupon]:
    return UserCoupon.objects.select_related("template_version").order_by("id")


def template_get(*, template_id) -> CouponTemplate:
    template = CouponTemplate.objects.filter(pk=template_id).first()
    if template is None:
        raise NotFound(_("No such template."), template_id=template_id)
    return template


def coupon_operations(*, coupon_id) -> QuerySet[CouponOperation]:
    return CouponOperation.objects.filter(coupon_id=coupon_id).order_by("to_version")


def coupon_rejections(*, coupon_id) -> QuerySet[CommandRejection]:
    return CommandRejection.objects.filter(coupon_id_ref=coupon_id).order_by("created_at", "id")


def coupon_payload(coupon: UserCoupon) -> dict:
    return {
        "id": coupon.pk,
        "user_id": coupon.user_id,
        "template_id": coupon.template_id,
        "template_version": coupon.template_version.version,
        "status": coupon.status,
        "state_version": coupon.state_version,
        "valid_from": iso(coupon.valid_from),
        "valid_until": iso(coupon.valid_until),
        "issued_at": iso(coupon.issued_at),
        "locked_order_id": coupon.locked_order_id,
        "lock_expires_at": iso(coupon.lock_expires_at),
    }


def template_list() -> QuerySet[CouponTemplate]:
    return CouponTemplate.objects.order_by("code")


def lock_token_get(*, lock_id) -> str:
    """A lock's lease token, derived again under the key the lock was made with.

    A LOCK's answer (first or replayed) carries it; once its key is retired the token is gone
    for good, and the lease it proved is refused the same way (TOKEN_MISMATCH).
    """
    lock = CouponLock.objects.select_related("coupon").get(pk=lock_id)
    try:
        return lease_token(lock.pk, lock.token_key_id)
    except RetiredLeaseKey:
        raise TokenMismatch(
            _("This lock's token was made under a lease-token key that has been retired."),
            coupon=lock.coupon,
        ) from None


# --- What operators watch (operations/metrics.py; a dashboard may show the same counts) ---------


def expired_leases_unreleased_count(*, now) -> int:
    """LOCKED coupons whose lease has ended: the lease scanner has not released them yet."""
    return UserCoupon.objects.filter(status=CouponStatus.LOCKED, lock_expires_at__lte=now).count()


def open_case_count() -> int:
    return ConflictCase.objects.filter(status=CaseStatus.OPEN).count()


def open_cases_oldest(*, limit: int) -> list[ConflictCase]:
    """The open conflict cases waiting longest, for the dashboard's list."""
    return list(ConflictCase.objects.filter(status=CaseStatus.OPEN)
                .order_by("opened_at", "id")[:limit])


def coupon_counts_by_state() -> dict[str, int]:
    """Coupons per state, every state named (0 included); one grouped query."""
    counts = dict(UserCoupon.objects.values_list("status").annotate(n=Count("id")).order_by())
    return {state: counts.get(state, 0) for state in CouponStatus.values}


def expiry_warning_counts() -> tuple[int, int]:
    """CouponExpiresBeforeFinalPayment warnings sent, and those whose lease is still active
    (the buyer has neither paid nor closed the order yet)."""
    return (ExpiryWarning.objects.count(),
            ExpiryWarning.objects.filter(lock__status=LockStatus.ACTIVE).count())
def order_coupon_ids(order_id: str) -> QuerySet:
    """The ids of the coupons an order holds now or ever held (its discount evidence).

    Every LOCK writes a lease naming its order, so an order that released its coupon, or lost it
    to another order, still finds it: one index read, used as a subquery. The API's order filter
    uses this; the console's search adds its wider arms (cases, deposits, refunds) on top.
    """
    return CouponLock.objects.filter(order_id=order_id).values("coupon_id")


# A customer page shows this many of their coupons, newest first; more is said, not listed.
CUSTOMER_COUPON_LIMIT = 50


def customer_profile(*, user_id: str) -> CustomerProfile | None:
    return CustomerProfile.objects.filter(user_id=user_id).first()


def customer_coupons(*, user_id: str) -> list[UserCoupon]:
    """The customer's newest coupons (one more than the limit: the caller says there are
    more), with their templates, in one query."""
    return list(UserCoupon.objects.filter(user_id=user_id)
                .select_related("template", "template_version")
                .order_by("-issued_at", "-id")[:CUSTOMER_COUPON_LIMIT + 1])
