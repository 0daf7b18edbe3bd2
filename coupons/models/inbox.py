import pgtrigger
from django.db import models
from django.db.models.fields.json import KeyTransform

from coupons.models.append_only import Refuse, delete_refused, frozen_except
from coupons.models.journal import PRUNED, Journaled


class FactType(models.TextChoices):
    PAYMENT_SUCCEEDED = "PaymentSucceeded"
    PAYMENT_FAILED = "PaymentFailed"
    ORDER_CLOSED = "OrderClosed"
    DEPOSIT_PAID = "DepositPaid"
    FINAL_PAYMENT_SUCCEEDED = "FinalPaymentSucceeded"
    REFUND_SUCCEEDED = "RefundSucceeded"
    CUSTOMER_PROFILE_UPDATED = "CustomerProfileUpdated"


# Facts about an order; the others are about a customer and name no order.
ORDER_FACTS = tuple(t for t in FactType if t != FactType.CUSTOMER_PROFILE_UPDATED)


class InboxMessage(Journaled):
    """One delivered fact, de-duplicated per sender by message_id in the transaction of its
    effects.

    Message ids are the sender's own: another client's message under the same id is another
    message, so no client can shadow a fact it did not send.

    Journaled: received (the whole message) and processed (its outcome), each entry in the
    statement that writes the row. Retention deletes old rows, never their entries: prune
    appends a `pruned` entry in the statement that deletes the row, so a message gone after
    its `pruned` entry is expected, and one gone without it is named (verify_journal).
    """

    JOURNAL_OPENS = ("received", "existing")
    JOURNAL_STEPS = ("processed", PRUNED)
    JOURNAL_MOVES = ("outcome",)
    JOURNAL_COUPON = None  # about an order: the check folds the messages of its orders

    message_id = models.CharField(max_length=128)
    fact_type = models.CharField(max_length=32, choices=FactType.choices)
    order_id = models.CharField(max_length=64, db_index=True)
    occurred_at = models.DateTimeField()
    payload = models.JSONField()
    sender = models.CharField(max_length=128, help_text="Who sent it, by name (for people).")
    sender_scope = models.CharField(
        max_length=64, help_text="Who sent it, by id: client:<pk> or user:<pk>; a rename keeps it."
    )
    content_hash = models.CharField(
        max_length=64,
        help_text="SHA-256 of type, occurred_at and payload: a redelivery says the same.",
    )
    received_at = models.DateTimeField()
    outcome = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["sender_scope", "message_id"], name="inbox_message_per_sender"
            ),
        ]
        # The inbox inserts the message, runs its effects, then writes their outcome once;
        # the outcome is what a redelivery answers, so it never changes after that.
        # `manage.py prune` alone deletes, as PRUNER_ROLE, rows past the inbox window.
        triggers = [
            *delete_refused(pruned=True),
            *frozen_except("outcome"),
            Refuse(
                name="outcome_set_once", operation=pgtrigger.Update,
                condition=pgtrigger.Condition(
                    "OLD.outcome <> '{}'::jsonb AND OLD.outcome IS DISTINCT FROM NEW.outcome"
                ),
            ),
        ]

    def __str__(self):
        return f"{self.fact_type} {self.message_id} ({self.order_id})"


class OrderFact(models.Model):
    """What the order and payment services told us about an order, one row per distinct fact.

    Several messages may carry one fact (a retry with a new message id); the fact is stored once.
    """

    order_id = models.CharField(max_length=64)
    fact_type = models.CharField(max_length=32, choices=FactType.choices)
    payment_id = models.CharField(max_length=64, blank=True)
    refund_id = models.CharField(max_length=64, blank=True)
    occurred_at = models.DateTimeField()
    payload = models.JSONField()
    first_message = models.ForeignKey(InboxMessage, on_delete=models.PROTECT, related_name="+")
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["order_id", "fact_type", "payment_id", "refund_id"],
                name="order_fact_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["order_id", "fact_type"], name="order_fact_lookup"),
            # Reconciliation reads, per batch of coupons, the deposits that named them: the
            # claim of an order whose deposit never bound its coupon lives only here.
            models.Index(KeyTransform("coupon_id", "payload"), name="deposit_coupon_claim",
                         condition=models.Q(fact_type="DepositPaid")),
        ]

    def __str__(self):
        return f"{self.fact_type} for {self.order_id}"
