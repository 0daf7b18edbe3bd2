"""One way in for a fact, whichever door it came through: POST /api/v1/events or the broker
consumer (operations/facts_consumer.py). Same validation, same grant check, same inbox."""

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from rest_framework.exceptions import ValidationError

from coupons.api import event_serializers as s
from coupons.capabilities import Capability
from coupons.errors import CapabilityMissing
from coupons.events.inbox import InboxResult, inbox_receive
from coupons.identity import actor_of, idempotency_scope_of
from coupons.models import ServiceClient


def fact_receive(*, data, sender) -> InboxResult:
    """Validate an event body and hand it to the inbox as `sender` (a ServiceClient or a
    signed-in user). Raises ValidationError, CapabilityMissing or MessageIdReused, changing
    nothing."""
    event = s.EventInput(data=data)
    event.is_valid(raise_exception=True)
    fact_type = event.validated_data["type"]
    if isinstance(sender, ServiceClient) and not sender.may_send(fact_type):
        # A client speaks only for the facts it owns: a refund service cannot say an
        # order was paid.
        raise CapabilityMissing(
            format_lazy(_("This client may not send {fact} facts."), fact=fact_type),
            capability=Capability.POST_FACTS.value, fact_type=fact_type,
        )
    payload = s.PAYLOADS[fact_type](data=event.validated_data["payload"])
    if not payload.is_valid():
        raise ValidationError({"payload": payload.errors})
    # A payload that must not be kept as sent (a phone number) says what is kept instead.
    stored = payload.stored() if hasattr(payload, "stored") else dict(payload.data)
    return inbox_receive(
        message_id=event.validated_data["message_id"], fact_type=fact_type,
        order_id=payload.validated_data.get("order_id", ""),
        occurred_at=event.validated_data["occurred_at"],
        payload=stored, sender=actor_of(sender),
        sender_scope=idempotency_scope_of(sender),
    )
