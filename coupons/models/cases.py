from django.db import models

from coupons.models.append_only import delete_refused, frozen_once_closed, status_moves
from coupons.models.inbox import FactType
from coupons.models.journal import Journaled


class CaseStatus(models.TextChoices):
    OPEN = "OPEN"
    RESOLVED = "RESOLVED"
    DISMISSED = "DISMISSED"


class Recommendation(models.TextChoices):
    # The coupon is free again and the order paid: lock and redeem it for the order now.
    COMPENSATING_REDEEM = "COMPENSATING_REDEEM"
    # Another order holds or used the coupon: refund this order its coupon discount.
    ORDER_DISCOUNT_REFUND = "ORDER_DISCOUNT_REFUND"
    # A presale deposit could not lock its coupon, and another coupon of the buyer fits: lock
    # it for the order instead (and redeem it, once the final payment came).
    SUBSTITUTE = "SUBSTITUTE"
    MANUAL_REVIEW = "MANUAL_REVIEW"


class ConflictCase(Journaled):
    """A fact the coupon could not follow (a late payment after release, ...), for a person."""

    # Opened by the service, closed once by a person: the closing moves only its own columns.
    # A presale case opened by a refused deposit is joined, while open, by the order's final
    # payment: the payment, the evidence and what is now recommended move with it.
    JOURNAL_OPENS = ("opened", "existing")
    JOURNAL_STEPS = ("joined", "resolved", "dismissed")
    JOURNAL_MOVES = ("payment_id", "evidence", "recommendation", "summary", "summary_code",
                     "summary_params", "status", "resolved_at", "resolved_by", "resolution",
                     "resolution_note")
    # A presale's final payment joins the case its refused deposit opened (what it says and
    # recommends); a resolution moves only the resolution's columns, never what was opened.
    JOURNAL_STEP_MOVES = {
        "joined": ("payment_id", "evidence", "recommendation", "summary", "summary_code",
                   "summary_params"),
        **dict.fromkeys(("resolved", "dismissed"),
                        ("status", "resolved_at", "resolved_by", "resolution", "resolution_note")),
    }

    # What only holders of VIEW_CASE_DETAILS see (coupons.redaction).
    detail_fields = ("resolution_note", "evidence")

    coupon = models.ForeignKey(
        "coupons.UserCoupon", on_delete=models.PROTECT, related_name="conflict_cases"
    )
    order_id = models.CharField(max_length=64, db_index=True)
    payment_id = models.CharField(max_length=64, blank=True)
    fact_type = models.CharField(max_length=32, choices=FactType.choices)
    status = models.CharField(max_length=16, choices=CaseStatus.choices, default=CaseStatus.OPEN)
    recommendation = models.CharField(max_length=32, choices=Recommendation.choices)
    summary = models.CharField(max_length=500)  # in English, as written (the record)
    # Which sentence the summary is and its values, for readers in other languages
    # (coupons/case_summaries.py); empty on cases opened before the codes.
    summary_code = models.CharField(max_length=32, blank=True, default="")
    summary_params = models.JSONField(default=dict, blank=True)
    evidence = models.JSONField()
    opened_at = models.DateTimeField()
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.CharField(max_length=128, blank=True)
    resolution = models.CharField(max_length=32, blank=True)
    resolution_note = models.CharField(max_length=1000, blank=True)

    class Meta:
        constraints = [
            # A fact delivered again (new message id) joins the open case instead of a new one.
            models.UniqueConstraint(
                fields=["coupon", "order_id", "fact_type"],
                condition=models.Q(status="OPEN"), name="one_open_case_per_fact",
            ),
        ]
        ordering = ["-opened_at", "-id"]
        # A resolved or dismissed case is the record of a person's decision: frozen.
        triggers = [*delete_refused(), *frozen_once_closed(open_statuses=["OPEN"]),
                    *status_moves(opens=["OPEN"], moves={"OPEN": ["RESOLVED", "DISMISSED"]})]

    def __str__(self):
        return f"case {self.pk}: {self.fact_type} on coupon {self.coupon_id} ({self.status})"

    @property
    def summary_text(self) -> str:
        """The summary in the reader's language."""
        from coupons.case_summaries import case_summary

        return case_summary(self)
