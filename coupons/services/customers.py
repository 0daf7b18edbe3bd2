"""The customer directory: one row per user id, what the newest profile fact said.

Facts arrive at least once and in any order: a fact older than the one the row holds changes
nothing (PROFILE_OUTDATED), one that says what the row says already changes nothing either
(PROFILE_UNCHANGED). The write is a compare-and-set on `occurred_at`, so of two facts applied
concurrently the newer wins whichever commits last.
"""

from django.db import IntegrityError, transaction

from coupons import clock
from coupons.models import CustomerProfile

FIELDS = ("phone_hash", "phone_masked", "nickname")


def customer_profile_apply(*, user_id: str, phone_hash: str, phone_masked: str, nickname: str,
                           occurred_at) -> dict:
    values = {"phone_hash": phone_hash, "phone_masked": phone_masked, "nickname": nickname}
    outcome = {"user_id": user_id, "repeated_fact": False}
    now = clock.now()
    current = CustomerProfile.objects.filter(user_id=user_id).first()
    if current is None:
        try:
            with transaction.atomic():
                CustomerProfile.objects.create(user_id=user_id, occurred_at=occurred_at,
                                               updated_at=now, **values)
            return {**outcome, "action": "PROFILE_UPDATED"}
        except IntegrityError:  # created concurrently: compare with that one
            current = CustomerProfile.objects.get(user_id=user_id)
    if all(getattr(current, name) == value for name, value in values.items()):
        return {**outcome, "action": "PROFILE_UNCHANGED", "repeated_fact": True}
    moved = CustomerProfile.objects.filter(
        user_id=user_id, occurred_at__lte=occurred_at,
    ).update(occurred_at=occurred_at, updated_at=now, **values)
    return {**outcome, "action": "PROFILE_UPDATED" if moved else "PROFILE_OUTDATED"}
