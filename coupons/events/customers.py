"""Facts about customers rather than orders: the user service's profile changes."""

from coupons.models import FactType, InboxMessage
from coupons.services.customers import customer_profile_apply


def on_profile_updated(message: InboxMessage) -> dict:
    payload = message.payload
    return customer_profile_apply(
        user_id=payload["user_id"], phone_hash=payload["phone_hash"],
        phone_masked=payload["phone_masked"], nickname=payload["nickname"],
        occurred_at=message.occurred_at)


CUSTOMER_HANDLERS = {FactType.CUSTOMER_PROFILE_UPDATED: on_profile_updated}
