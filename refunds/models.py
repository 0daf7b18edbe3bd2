import pgtrigger
from django.db import models

from coupons.models.append_only import (
    Refuse,
    delete_refused,
    frozen_once_closed,
    frozen_while,
    status_moves,
    truncate_refused,
)
from coupons.models.journal import Journaled
from refunds.rule_labels import policy_name_words


class Compensation(Journaled):
    """Money owed to an order, or a ledger operation to undo, decided by a second person.

    Recorded by the coupon service (a SUBSTITUTE presale with no substitute, a conflict case
    resolved by refunding the discount) or proposed by an operator for one ledger operation (a
    wrong redeem, void or expiry). Another operator approves it: a reversal appends a REVERSE
    row, money a COMPENSATE row with the amount (refunds.services.compensation_decide). Nothing
    is edited or deleted: the proposal, the decision and the ledger row all stay.
    """

    # What only holders of VIEW_CASE_DETAILS see (coupons.redaction).
    detail_fields = ("amount", "reason", "reason_params", "decision_note")
    # Proposed by an operator or recorded by the service; then decided once. The decision moves
    # only the decision's columns: what was proposed is what is approved.
    JOURNAL_OPENS = ("proposed", "recorded", "existing")
    JOURNAL_STEPS = ("approved", "rejected")
    JOURNAL_MOVES = ("status", "decided_by", "decided_at", "decision_note",
                     "resulting_operation_id")
    # A rejection executes nothing: it names no resulting operation.
    JOURNAL_STEP_MOVES = {"rejected": ("status", "decided_by", "decided_at", "decision_note")}

    class Kind(models.TextChoices):
        PRESALE_EXPIRED_COUPON = "PRESALE_EXPIRED_COUPON"
        ORDER_DISCOUNT_REFUND = "ORDER_DISCOUNT_REFUND"
        REFUND_CREDIT = "REFUND_CREDIT"  # a return policy's COMPENSATE with an amount
        REVERSE_OPERATION = "REVERSE_OPERATION"  # undo `operation`: restore the state before it
        MONEY = "MONEY"  # an amount owed because of `operation`; the coupon's state stays

    class Status(models.TextChoices):
        PROPOSED = "PROPOSED"
        APPROVED = "APPROVED"
        REJECTED = "REJECTED"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    order_id = models.CharField(max_length=64, db_index=True, blank=True)
    coupon = models.ForeignKey("coupons.UserCoupon", on_delete=models.PROTECT, related_name="+")
    # The ledger operation an operator's proposal is about; NULL for the shortfall kinds,
    # which name an order instead.
    operation = models.ForeignKey(
        "coupons.CouponOperation", null=True, blank=True, on_delete=models.PROTECT,
        related_name="compensations",
    )
    amount = models.DecimalField(  # NULL for a reversal: it restores a state, it pays nothing
        max_digits=12, decimal_places=2, null=True, blank=True
    )
    reason = models.CharField(max_length=500)  # in English when the services wrote it
    # Which sentence a reason the services wrote is, and its values (coupons/ledger_reasons.py);
    # empty on a reason a person typed and on compensations recorded before the codes.
    reason_code = models.CharField(max_length=32, blank=True, default="", db_default="")
    reason_params = models.JSONField(null=True, blank=True, default=None)
    created_by = models.CharField(max_length=128, help_text="Who proposed it.")
    created_at = models.DateTimeField()
    # The proposal's own Idempotency-Key and request hash ("" for system-recorded shortfalls).
    idempotency_key = models.CharField(max_length=255, blank=True)
    request_hash = models.CharField(max_length=64, blank=True)
    decided_by = models.CharField(max_length=128, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.CharField(max_length=1000, blank=True)
    # The REVERSE or COMPENSATE ledger row its approval appended.
    resulting_operation = models.OneToOneField(
        "coupons.CouponOperation", null=True, blank=True, on_delete=models.PROTECT,
        related_name="compensation_decision",
    )

    class Meta:
        constraints = [
            # The same shortfall reported twice (a redelivered fact) is one compensation.
            models.UniqueConstraint(fields=["order_id", "coupon", "kind"],
                                    condition=models.Q(operation__isnull=True),
                                    name="one_compensation_per_shortfall"),
            # Two operators proposing for the same operation at once: one proposal waits.
            models.UniqueConstraint(fields=["operation"],
                                    condition=models.Q(status="PROPOSED"),
                                    name="one_open_compensation_per_operation"),
        ]
        # Evidence once decided: an approved or rejected compensation never changes again.
        triggers = [*delete_refused(), *frozen_once_closed(open_statuses=["PROPOSED"]),
                    *status_moves(opens=["PROPOSED"], moves={"PROPOSED": ["APPROVED", "REJECTED"]})]

    def __str__(self):
        # No amount: this names the row wherever it is listed, also to people who may not see
        # it (coupons.redaction).
        return f"{self.kind} for {self.order_id} ({self.status})"


class ReturnPolicy(models.Model):
    """Decides whether a refunded order's coupon comes back (docs/after-sale.md); its rules are
    versioned.

    A coupon template names its policy (none = the policy with code `default`); a refund decision
    uses the version published at the refund's time and stores it with the facts it looked at.
    """

    DEFAULT_CODE = "default"

    code = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["code"]
        verbose_name_plural = "return policies"

    def __str__(self):
        return self.code

    @property
    def name_words(self) -> str:
        """The name in the reader's language where it is the one the policy shipped with."""
        return policy_name_words(self.name)


class PolicyVersionStatus(models.TextChoices):
    DRAFT = "DRAFT"
    PUBLISHED = "PUBLISHED"


class ReturnPolicyVersion(models.Model):
    """An ordered list of rules, first match wins. A PUBLISHED row never changes again.

    Services refuse to change one; on PostgreSQL a trigger refuses any UPDATE or DELETE of a
    published row, so raw SQL and bulk updates cannot rewrite what past decisions relied on.
    """

    Status = PolicyVersionStatus

    policy = models.ForeignKey(ReturnPolicy, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    rules = models.JSONField(default=list)
    # The customer replies' greeting and closing per language, {"greeting": {"en": ...,
    # "zh-hans": ...}, "closing": {...}}: a policy admin's words, frozen with the version as
    # its rules are. Only the default policy's are used (refunds.reply_words); {} is the
    # catalogue's.
    replies = models.JSONField(default=dict, blank=True)
    based_on = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="The version this draft was copied from.",
    )
    created_by = models.CharField(max_length=128)
    created_at = models.DateTimeField()
    published_by = models.CharField(max_length=128, blank=True, default="")
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["policy", "number"]
        constraints = [
            models.UniqueConstraint(fields=["policy", "number"], name="policy_version_unique"),
            # Two drafts of one policy would race to be "the next version"; one at a time.
            models.UniqueConstraint(
                fields=["policy"], condition=models.Q(status="DRAFT"), name="one_draft_per_policy"
            ),
            models.CheckConstraint(
                condition=models.Q(status="DRAFT", published_at__isnull=True)
                | models.Q(status="PUBLISHED", published_at__isnull=False),
                name="published_version_has_time",
            ),
        ]
        indexes = [
            # policy_version_for: the newest version of a policy published by a refund's time.
            models.Index(fields=["policy", "status", "published_at"],
                         name="policy_published_idx"),
        ]
        triggers = [
            *truncate_refused(),
            Refuse(
                name="published_policy_version_frozen",
                operation=pgtrigger.Update | pgtrigger.Delete,
                condition=pgtrigger.Q(old__status="PUBLISHED"),
            ),
        ]

    def __str__(self):
        return f"{self.policy.code} v{self.number} ({self.status})"

    @property
    def is_published(self) -> bool:
        return self.status == self.Status.PUBLISHED
class RefundCoupon(Journaled):
    """One refund's two decisions about one coupon the order redeemed (docs/after-sale.md).

    The money decision: the coupon's share of this refund, pro-rated from the order's discount
    snapshot (OrderCoupon), never the template's face value. The coupon decision: what the
    order's return policy version says happens to the coupon, with the facts it looked at.
    Only coupons.services changes `status`, each move a compare-and-set in one transaction;
    every move writes its journal entry in the same statement (refund_execute.decision_move).
    """

    # Received, then each move of its status (refund_execute.decision_move); what the refund
    # service sent (amount, type, risk flag) and who received it never move.
    JOURNAL_OPENS = ("received", "existing")
    JOURNAL_STEPS = ("waiting", "recommended", "decided", "executed", "approved", "rejected",
                     "return_linked")
    JOURNAL_MOVES = (
        "redemption_id", "order_amount", "order_discount", "paid_amount", "refunded_total",
        "coupon_share", "action", "facts", "policy_version_id", "rule_index", "rule_label",
        "requires_approval", "compensation", "status", "reason", "reason_code", "reason_params",
        "decided_at", "reviewed_by", "reviewed_at", "review_note", "executed_action",
        "operation_id", "compensation_coupon_id", "compensation_record_id",
    )
    # The steps that decide (refund_receive: the recommendation, a decision or its execution
    # with no one to approve) move every decision column but the review's; the review's
    # steps move only what the review adds: an approval executes the action it was shown,
    # it cannot write another one (refund_review, refund_execute.decision_finish).
    JOURNAL_STEP_MOVES = {
        "waiting": ("status", "reason", "reason_code", "reason_params"),
        **dict.fromkeys(("recommended", "decided", "executed"), tuple(
            name for name in JOURNAL_MOVES
            if name not in ("reviewed_by", "reviewed_at", "review_note"))),
        "approved": ("status", "executed_action", "operation_id", "compensation_coupon_id",
                     "compensation_record_id", "reviewed_by", "reviewed_at", "review_note"),
        "rejected": ("status", "reviewed_by", "reviewed_at", "review_note"),
        # reconcile's re-drive of a RETURN names the operation it always meant.
        "return_linked": ("operation_id",),
    }

    class Status(models.TextChoices):
        AWAITING_REDEMPTION = "AWAITING_REDEMPTION"  # the order's redemption is not known yet
        DECIDED = "DECIDED"  # decided, nothing to execute (KEEP_USED)
        PENDING_APPROVAL = "PENDING_APPROVAL"  # an operator approves or rejects
        EXECUTED = "EXECUTED"
        REJECTED = "REJECTED"

    class Action(models.TextChoices):
        RETURN = "RETURN"
        KEEP_USED = "KEEP_USED"
        VOID = "VOID"
        COMPENSATE = "COMPENSATE"
        MANUAL_REVIEW = "MANUAL_REVIEW"
        # Not a policy action: a refunded presale deposit whose coupon was still leased to the
        # order; the lease ends at once instead of waiting for its end.
        RELEASE_LOCK = "RELEASE_LOCK"

    refund_id = models.CharField(max_length=64)
    order_id = models.CharField(max_length=64, db_index=True)
    payment_id = models.CharField(max_length=64, blank=True)
    coupon = models.ForeignKey(
        "coupons.UserCoupon", on_delete=models.PROTECT, related_name="refund_decisions"
    )
    redemption = models.ForeignKey(
        "coupons.Redemption", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    refund_type = models.CharField(max_length=16, help_text="As the refund service sent it.")
    risk_flag = models.BooleanField(default=False)
    refund_amount = models.DecimalField(max_digits=12, decimal_places=2)
    # The money decision and its evidence (filled when decided).
    order_amount = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    order_discount = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True,
        help_text="This coupon's discount in the order's snapshot.",
    )
    paid_amount = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True,
        help_text="What the order paid: order amount minus all its coupons' discounts.",
    )
    refunded_total = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True,
        help_text="All refunds of the order so far, this one included.",
    )
    coupon_share = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True,
        help_text="The part of this coupon's discount this refund gives back (money decision).",
    )
    # The coupon decision and its evidence.
    action = models.CharField(max_length=16, choices=Action.choices, blank=True)
    facts = models.JSONField(null=True, blank=True, help_text="RefundFacts it was decided on.")
    policy_version = models.ForeignKey(
        "refunds.ReturnPolicyVersion", null=True, blank=True, on_delete=models.PROTECT,
        related_name="decisions",
    )
    rule_index = models.PositiveIntegerField(null=True, blank=True)
    rule_label = models.CharField(max_length=200, blank=True)
    requires_approval = models.BooleanField(default=False)
    compensation = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=24, choices=Status.choices)
    reason = models.CharField(max_length=500, blank=True)  # in English, as written
    # Which sentence the reason is and its values (refunds/decision_reasons.py); empty on
    # decisions written before the codes.
    reason_code = models.CharField(max_length=32, blank=True, default="", db_default="")
    reason_params = models.JSONField(null=True, blank=True, default=None)
    created_by = models.CharField(max_length=128)
    received_at = models.DateTimeField(help_text="When the refund reached us.")
    decided_at = models.DateTimeField(null=True, blank=True)
    # An operator's review.
    reviewed_by = models.CharField(max_length=128, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_note = models.CharField(max_length=1000, blank=True)
    executed_action = models.CharField(max_length=16, choices=Action.choices, blank=True)
    # What executing it did.
    operation = models.OneToOneField(
        "coupons.CouponOperation", null=True, blank=True, on_delete=models.PROTECT,
        related_name="refund_decision",
    )
    compensation_coupon = models.ForeignKey(
        "coupons.UserCoupon", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    compensation_record = models.ForeignKey(
        Compensation, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        constraints = [
            # The same refund by API and by fact, or delivered twice, decides once.
            models.UniqueConstraint(fields=["refund_id", "coupon"], name="one_decision_per_refund"),
        ]
        indexes = [
            models.Index(fields=["coupon", "status"], name="refund_coupon_status"),
        ]
        # Evidence once decided; reconciliation may still fill a missing RETURN `operation` once.
        # Decided from AWAITING_REDEMPTION only (refund_decide): a recommendation waiting for
        # its approval moves only the approval's and the execution's columns.
        triggers = [
            *delete_refused(),
            *frozen_once_closed(open_statuses=["AWAITING_REDEMPTION", "PENDING_APPROVAL"],
                                movable=("operation_id",)),
            *status_moves(opens=["AWAITING_REDEMPTION"], moves={
                "AWAITING_REDEMPTION": ["PENDING_APPROVAL", "DECIDED", "EXECUTED"],
                "PENDING_APPROVAL": ["DECIDED", "EXECUTED", "REJECTED"],
            }),
            *frozen_while("PENDING_APPROVAL", movable=(
                "status", "reviewed_by", "reviewed_at", "review_note", "executed_action",
                "operation_id", "compensation_coupon_id", "compensation_record_id")),
        ]
        ordering = ["-received_at", "-id"]

    def __str__(self):
        action = self.action or "undecided"
        return f"refund {self.refund_id} coupon {self.coupon_id}: {action} ({self.status})"
