from datetime import timedelta

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from coupons.errors import (
    LeaseOfAnotherClient,
    OrderMismatch,
    TokenMismatch,
    ValidationFailed,
    VersionConflict,
)
from coupons.write.tokens import lease_key_active, tokens_match


def check_lease_client(lock, ctx) -> None:
    """A lease answers only to the service client that took it, whatever token it shows.

    A token is a bearer secret: forged under a leaked or default LEASE_TOKEN_SECRET, or read
    from another service's logs, it must still not let one client consume another's lease.
    Console users and internal callers (ctx.client_id None) are not clients and pass here.
    """
    if ctx.client_id is not None and lock.client_id != ctx.client_id:
        raise LeaseOfAnotherClient()


def check_lease(coupon, lease, ctx) -> None:
    """Prove the caller holds the coupon's current lease: client, token, order, version.

    The token comes before the order: a late command from an earlier lease (the late-payment
    incident, docs/design.md: order A's redeem after order B re-locked) is refused as
    TOKEN_MISMATCH, whichever order it names. A token made under a key since removed from
    LEASE_TOKEN_SECRETS is refused too: removing a leaked key must stop every token derived with it.
    Internal callers (lock id + stored hash) never held a token, so they still end such a lease.
    """
    check_lease_client(coupon.current_lock, ctx)
    if not tokens_match(lease.token_hash, coupon.lock_token_hash) or (
        lease.lock_id is not None and str(lease.lock_id) != str(coupon.current_lock_id)
    ) or (lease.lock_id is None and not lease_key_active(coupon.current_lock.token_key_id)):
        raise TokenMismatch(coupon=coupon)
    if lease.order_id != coupon.locked_order_id:
        raise OrderMismatch(coupon=coupon)
    if lease.expected_version != coupon.state_version:
        raise VersionConflict(coupon=coupon, expected_version=lease.expected_version)


def lease_end(now, *, lease_seconds=None, lease_until=None):
    if lease_seconds is not None and lease_until is not None:
        raise ValidationFailed(_("Give lease_seconds or lease_until, not both."))
    if lease_until is None:
        lease_seconds = lease_seconds or settings.COUPONS["DEFAULT_LEASE_SECONDS"]
        lease_until = now + timedelta(seconds=lease_seconds)
    longest = now + timedelta(seconds=settings.COUPONS["MAX_LEASE_SECONDS"])
    if not now < lease_until <= longest:
        raise ValidationFailed(
            _("The lease must end in the future and within the longest lease allowed."),
            lease_until=lease_until.isoformat(), longest=longest.isoformat(),
        )
    return lease_until
