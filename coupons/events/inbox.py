"""The inbox: each message takes effect once, in the transaction that records it."""

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC

from django.db import IntegrityError, transaction

from coupons import clock
from coupons.errors import MessageIdReused
from coupons.events.customers import CUSTOMER_HANDLERS
from coupons.events.handlers import HANDLERS
from coupons.models import InboxMessage, OrderFact
from coupons.models.inbox import ORDER_FACTS
from coupons.write.declared import declared_insert, declared_update


@dataclass(frozen=True)
class InboxResult:
    status: str  # PROCESSED or DUPLICATE
    message: InboxMessage

    def payload(self) -> dict:
        return {"message_id": self.message.message_id, "status": self.status,
                "outcome": self.message.outcome}


def fact_hash(fact_type: str, occurred_at, payload: dict) -> str:
    """What the message says, canonically: a redelivery under its id must say the same."""
    canonical = json.dumps(
        {"type": fact_type, "occurred_at": occurred_at.astimezone(UTC).isoformat(),
         "payload": payload},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def inbox_receive(
    *, message_id, fact_type, order_id, occurred_at, payload, sender, sender_scope,
) -> InboxResult:
    """Record the message and everything it causes in one transaction (a savepoint when the
    caller has one open, as the permutation tests do to roll each story back).

    Messages are keyed by (sender_scope, message_id): one sender's id never shadows another's
    fact. A second delivery from the same sender (even concurrently: its insert waits on the
    first's unique-index entry, then fails) is acknowledged as DUPLICATE with the first's
    outcome if it says the same thing, and refused MESSAGE_ID_REUSED if it does not.
    """
    content_hash = fact_hash(fact_type, occurred_at, payload)
    with transaction.atomic():
        received_at = clock.now()
        try:
            with transaction.atomic():
                # The database journals the row in the statement that inserts it.
                message = declared_insert(InboxMessage(
                    message_id=message_id, fact_type=fact_type, order_id=order_id,
                    occurred_at=occurred_at, payload=payload, sender=sender,
                    sender_scope=sender_scope, content_hash=content_hash,
                    received_at=received_at,
                ), actor=sender_scope)
        except IntegrityError:
            first = InboxMessage.objects.get(sender_scope=sender_scope, message_id=message_id)
            if first.content_hash != content_hash:
                raise MessageIdReused(message_id=message_id) from None
            return InboxResult("DUPLICATE", first)
        if fact_type in ORDER_FACTS:
            fact, is_new_fact = _record_fact(message)
            outcome = {**HANDLERS[fact_type](fact), "repeated_fact": not is_new_fact}
        else:  # about a customer: the message is the fact, no order's
            outcome = CUSTOMER_HANDLERS[fact_type](message)
        declared_update(message, where={}, changes={"outcome": outcome}, step="processed",
                        actor=sender_scope)
        return InboxResult("PROCESSED", message)


def _record_fact(message: InboxMessage) -> tuple[OrderFact, bool]:
    """One fact per (order, type, payment, refund), however many messages carried it."""
    keys = {
        "order_id": message.order_id,
        "fact_type": message.fact_type,
        "payment_id": message.payload.get("payment_id", ""),
        "refund_id": message.payload.get("refund_id", ""),
    }
    # get_or_create inserts in a savepoint and reads the winner after an IntegrityError, so
    # the same fact committed just now under another message id is found, not duplicated.
    return OrderFact.objects.get_or_create(
        **keys, defaults={"occurred_at": message.occurred_at, "payload": message.payload,
                          "first_message": message, "recorded_at": message.received_at},
    )
