from django.db import models

from coupons.models.append_only import delete_refused, frozen_once_closed, status_moves
from coupons.models.journal import Journaled


class GoodwillProposal(Journaled):
    """A coupon support proposes to give a customer as a goodwill gesture, for one order or
    support case; an operator who is not the proposer approves (the coupon is issued as an
    ordinary ISSUE) or rejects it (coupons.services.goodwill). Nothing is edited or deleted:
    the proposal, the decision and the issued coupon's ledger row all stay.
    """

    # Nothing hidden from support: they wrote the reason and answer the customer with it.
    detail_fields = ()
    # Proposed once, decided once; the decision moves only the decision's columns, so what
    # was proposed (customer, template, case) is what is approved.
    JOURNAL_OPENS = ("proposed", "existing")
    JOURNAL_STEPS = ("approved", "rejected")
    JOURNAL_MOVES = ("status", "decided_by", "decided_at", "decision_note", "issued_coupon_id")
    # A rejection issues nothing: it names no coupon.
    JOURNAL_STEP_MOVES = {"rejected": ("status", "decided_by", "decided_at", "decision_note")}

    class Status(models.TextChoices):
        PROPOSED = "PROPOSED"
        APPROVED = "APPROVED"
        REJECTED = "REJECTED"

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    user_id = models.CharField(max_length=64, db_index=True)
    template = models.ForeignKey("coupons.CouponTemplate", on_delete=models.PROTECT,
                                 related_name="+")
    # The coupon the customer called about, when proposed from its page.
    coupon = models.ForeignKey("coupons.UserCoupon", null=True, blank=True,
                               on_delete=models.PROTECT, related_name="goodwill_proposals")
    # The order id or support case reference the gesture makes good: one per customer.
    answers = models.CharField(max_length=64)
    reason = models.CharField(max_length=500)
    created_by = models.CharField(max_length=128, help_text="Who proposed it.")
    created_at = models.DateTimeField()
    idempotency_key = models.CharField(max_length=255, blank=True)
    request_hash = models.CharField(max_length=64, blank=True)
    decided_by = models.CharField(max_length=128, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.CharField(max_length=1000, blank=True)
    # The coupon its approval issued (its ISSUE ledger row and outbox event with it).
    issued_coupon = models.OneToOneField(
        "coupons.UserCoupon", null=True, blank=True, on_delete=models.PROTECT,
        related_name="goodwill_proposal",
    )

    class Meta:
        constraints = [
            # One gesture per customer and case: a second proposal while one waits or after
            # one was approved is refused (the services say so first; this is the last line).
            models.UniqueConstraint(fields=["user_id", "answers"],
                                    condition=~models.Q(status="REJECTED"),
                                    name="one_goodwill_per_customer_case"),
        ]
        # Evidence once decided: an approved or rejected proposal never changes again.
        triggers = [*delete_refused(), *frozen_once_closed(open_statuses=["PROPOSED"]),
                    *status_moves(opens=["PROPOSED"], moves={"PROPOSED": ["APPROVED", "REJECTED"]})]

    def __str__(self):
        return f"goodwill #{self.pk} for {self.user_id} ({self.status})"
