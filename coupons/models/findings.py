from django.db import models

from coupons.models.append_only import delete_refused, frozen_once_closed, status_moves
from coupons.models.journal import Journaled


class FindingKind(models.TextChoices):
    # The six checks of reconciliation (docs/operating.md); the RETURN check reports its two
    # halves apart.
    PAID_NOT_REDEEMED = "PAID_NOT_REDEEMED"
    CLOSED_STILL_LOCKED = "CLOSED_STILL_LOCKED"
    GHOST_REDEMPTION = "GHOST_REDEMPTION"
    DOUBLE_CONSUMPTION = "DOUBLE_CONSUMPTION"
    RETURN_NOT_ADVANCED = "RETURN_NOT_ADVANCED"
    RETURN_EVENT_UNPUBLISHED = "RETURN_EVENT_UNPUBLISHED"
    LEDGER_GAP = "LEDGER_GAP"
    # A presale deposit named the coupon, which never became the order's.
    DEPOSIT_NOT_BOUND = "DEPOSIT_NOT_BOUND"
    # From the order and payment systems' own exports (reconcile --orders --payments): an
    # order they say was paid with the coupon holds no binding to it; a payment they say
    # succeeded was never sent to this service as a fact.
    PAID_WITHOUT_BINDING = "PAID_WITHOUT_BINDING"
    FACT_NEVER_SENT = "FACT_NEVER_SENT"


class Severity(models.TextChoices):
    # Ordered so that sorting by the value puts the worst first.
    P0 = "P0", "P0: history or money is wrong"
    P1 = "P1", "P1: an order or a buyer is owed something"
    P2 = "P2", "P2: late, will hurt if left"


class Repair(models.TextChoices):
    """What a finding proposes; an operator applies it through the services, never the run."""

    COMPENSATING_REDEEM = "COMPENSATING_REDEEM", "compensating redeem for the paid order"
    RELEASE = "RELEASE", "release the ended order's lease"
    REDRIVE_RETURN = "REDRIVE_RETURN", "re-drive the refund's RETURN"
    REDRIVE_EVENT = "REDRIVE_EVENT", "re-drive the unpublished event"
    # No command can undo it safely: a person decides (a compensation, a void).
    MANUAL_REVIEW = "MANUAL_REVIEW", "manual review"


class FindingStatus(models.TextChoices):
    OPEN = "OPEN"
    RESOLVED = "RESOLVED"  # an operator applied the repair or dismissed it with a reason
    CLOSED = "CLOSED"  # a later run no longer found it: closed by itself


class Finding(Journaled):
    """What a reconciliation run found wrong about one coupon, until it is right again.

    Journaled (coupons/evidence/journal.py): opened by a run; while open, a run that finds the
    fault with other evidence changes it; closed by a run (or a re-check) that no longer finds
    it, or applied or dismissed by a person. Status moves only through operations.reconcile.
    `subject` tells apart two findings of one kind on one coupon (the order, the refund
    decision, the event), "" when there is one.
    """

    JOURNAL_OPENS = ("opened", "existing")
    JOURNAL_STEPS = ("changed", "closed", "applied", "dismissed")
    JOURNAL_MOVES = ("severity", "summary", "summary_code", "summary_params", "repair",
                     "evidence", "order_ids", "status", "closed_at", "resolved_by", "resolved_at",
                     "resolution", "resolution_note")
    # A run changes what the fault looks like or closes it; a person applies or dismisses it.
    JOURNAL_STEP_MOVES = {
        "changed": ("severity", "summary", "summary_code", "summary_params", "repair",
                    "evidence", "order_ids"),
        "closed": ("status", "closed_at"),
        **dict.fromkeys(("applied", "dismissed"), ("status", "resolved_by", "resolved_at",
                                                   "resolution", "resolution_note")),
    }
    # When a run last saw the fault: every run moves it on every open finding, and it says
    # nothing the entries do not (the fault held then). Not evidence: an entry per run per
    # finding would only grow the journal.
    JOURNAL_LEAVES_OUT = ("last_seen_at",)

    kind = models.CharField(max_length=32, choices=FindingKind.choices)
    severity = models.CharField(max_length=2, choices=Severity.choices)
    coupon = models.ForeignKey(
        "coupons.UserCoupon", on_delete=models.PROTECT, related_name="findings"
    )
    subject = models.CharField(max_length=128, blank=True)
    order_ids = models.JSONField(default=list)
    evidence = models.JSONField(default=dict)
    summary = models.CharField(max_length=500)  # in English, as the run wrote it
    # Which sentence the summary is and its values, for readers in other languages
    # (operations/reconcile/summaries.py); empty on findings written before the codes.
    summary_code = models.CharField(max_length=32, blank=True, default="", db_default="")
    summary_params = models.JSONField(default=dict, blank=True)
    repair = models.CharField(max_length=32, choices=Repair.choices)
    status = models.CharField(
        max_length=16, choices=FindingStatus.choices, default=FindingStatus.OPEN
    )
    first_seen_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.CharField(max_length=128, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution = models.CharField(max_length=16, blank=True)  # APPLIED or DISMISSED
    resolution_note = models.CharField(max_length=1000, blank=True)

    class Meta:
        constraints = [
            # Two runs at once (cron overlapping a manual run) keep one open finding per fault.
            models.UniqueConstraint(
                fields=["kind", "coupon", "subject"], condition=models.Q(status="OPEN"),
                name="one_open_finding_per_fault",
            ),
        ]
        indexes = [
            # The page and the API list open findings worst first; a run closes by coupon.
            models.Index(fields=["status", "severity", "id"], name="finding_status_severity"),
            models.Index(fields=["coupon", "status"], name="finding_coupon_status"),
        ]
        # A closed or resolved finding is the record of what was found and done: frozen.
        triggers = [*delete_refused(), *frozen_once_closed(open_statuses=["OPEN"]),
                    *status_moves(opens=["OPEN"], moves={"OPEN": ["RESOLVED", "CLOSED"]})]

    def __str__(self):
        return f"{self.severity} {self.kind} on coupon {self.coupon_id} ({self.status})"


class ReconciliationRun(models.Model):
    """One pass of `manage.py reconcile` and what it counted: the page shows the last one."""

    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    started_by = models.CharField(max_length=128)
    coupons_checked = models.PositiveIntegerField(default=0)
    found_new = models.PositiveIntegerField(default=0)
    still_open = models.PositiveIntegerField(default=0)
    closed = models.PositiveIntegerField(default=0)
    # The last coupon of the last batch recorded: `reconcile --resume` goes on after it.
    last_coupon_id = models.BigIntegerField(default=0)

    def __str__(self):
        return f"reconciliation run {self.pk} at {self.started_at:%Y-%m-%d %H:%M}"
