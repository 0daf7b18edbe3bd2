import pgtrigger
from django.db import models


class Compensation(models.Model):
    """Money or a coupon owed to an order because its coupon could not give the discount.

    Recorded by the coupon service (a SUBSTITUTE presale with no substitute, a conflict case
    resolved by refunding the discount); paid out by the order service, approved by operators.
    """

    class Kind(models.TextChoices):
        PRESALE_EXPIRED_COUPON = "PRESALE_EXPIRED_COUPON"
        ORDER_DISCOUNT_REFUND = "ORDER_DISCOUNT_REFUND"

    class Status(models.TextChoices):
        PROPOSED = "PROPOSED"
        APPROVED = "APPROVED"
        REJECTED = "REJECTED"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    order_id = models.CharField(max_length=64, db_index=True)
    coupon = models.ForeignKey("coupons.UserCoupon", on_delete=models.PROTECT, related_name="+")
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    reason = models.CharField(max_length=500)
    created_by = models.CharField(max_length=128)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            # The same shortfall reported twice (a redelivered fact) is one compensation.
            models.UniqueConstraint(fields=["order_id", "coupon", "kind"],
                                    name="one_compensation_per_shortfall"),
        ]

    def __str__(self):
        return f"{self.kind} {self.amount} for {self.order_id} ({self.status})"


class ReturnPolicy(models.Model):
    """Decides whether a refunded order's coupon comes back (SPEC §10); its rules are versioned.

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
            pgtrigger.Protect(
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
