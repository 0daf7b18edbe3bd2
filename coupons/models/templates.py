from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.utils.translation import gettext_lazy as _


class CouponKind(models.TextChoices):
    AMOUNT_OFF = "AMOUNT_OFF", "Amount off"
    PERCENT_OFF = "PERCENT_OFF", "Percent off (with cap)"
    EXCHANGE = "EXCHANGE", "Exchange (one item)"


class ExpiryDuringLock(models.TextChoices):
    # Validity is checked at LOCK only; a redeem at final payment succeeds after valid_until.
    LOCK_HONORS = "LOCK_HONORS", "Lock honours validity"
    # A redeem after valid_until fails with COUPON_EXPIRED and the coupon ends EXPIRED.
    STRICT = "STRICT", "Strict"
    # Like STRICT, then a substitute coupon of the same user is locked and redeemed.
    SUBSTITUTE = "SUBSTITUTE", "Substitute"


class Channel(models.TextChoices):
    """Where an order is served; a template with no channel applies to every one."""

    DINE_IN = "DINE_IN", _("Dine-in")
    DELIVERY = "DELIVERY", _("Delivery")
    TAKEAWAY = "TAKEAWAY", _("Takeaway")


# The store ids a scope may name: the store service's ids, as other services' ids are.
STORE_ID_LENGTH = 64
MAX_STORES = 200


class TemplateTerms(models.Model):
    """The terms a coupon is issued under; shared by a template and its frozen versions."""

    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=CouponKind.choices)
    face_value = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True,
        help_text="Amount off, or the value of the exchanged item.",
    )
    percent_off = models.DecimalField(max_digits=5, decimal_places=2, null=True, blank=True)
    max_discount = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    min_order_amount = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    valid_days = models.PositiveIntegerField(
        null=True, blank=True, help_text="Validity in days after issue (instead of a window)."
    )
    returnable = models.BooleanField(default=True)
    expiry_during_lock = models.CharField(
        max_length=16, choices=ExpiryDuringLock.choices, default=ExpiryDuringLock.LOCK_HONORS
    )

    # The scope: where a coupon applies. No stores is every store; no channel, every channel.
    # A term, so a coupon keeps the scope it was issued with; a substitute must cover it.
    stores = ArrayField(
        models.CharField(max_length=STORE_ID_LENGTH), default=list, blank=True,
        size=MAX_STORES, help_text="Store ids the coupon applies at; none: every store.",
    )
    channel = models.CharField(
        max_length=16, choices=Channel.choices, blank=True, default="",
        help_text="The channel the coupon applies to; none: every channel.",
    )

    # Null: the default return policy (code `default`). A version keeps the policy it was
    # frozen with; which of that policy's versions applies is decided at refund time.
    return_policy = models.ForeignKey(
        "refunds.ReturnPolicy", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
    )

    TERM_FIELDS = (
        "name", "kind", "face_value", "percent_off", "max_discount", "min_order_amount",
        "valid_from", "valid_until", "valid_days", "returnable", "expiry_during_lock",
        "return_policy", "stores", "channel",
    )

    class Meta:
        abstract = True

    def terms(self) -> dict:
        return {field: getattr(self, field) for field in self.TERM_FIELDS}


class CouponTemplate(TemplateTerms):
    """The editable template. Every edit becomes a new CouponTemplateVersion."""

    code = models.CharField(max_length=64, unique=True)
    version = models.PositiveIntegerField(default=1)
    # False once the campaign is closed: no new coupons; a return policy may treat refunds of
    # its coupons differently. Not a term: closing a campaign does not make a new version.
    issuable = models.BooleanField(default=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["code"]
        # The API's and the console's scope filters: `stores @> ARRAY[..]` or `= '{}'` (GIN
        # answers both), `channel IN (.., '')`.
        indexes = [
            GinIndex(fields=["stores"], name="template_stores_gin"),
            models.Index(fields=["channel"], name="template_channel"),
        ]

    def __str__(self):
        return f"{self.code} v{self.version}"


class CouponTemplateVersion(TemplateTerms):
    """Frozen terms; a coupon points at the version it was issued from, never at later edits."""

    template = models.ForeignKey(CouponTemplate, on_delete=models.PROTECT, related_name="versions")
    version = models.PositiveIntegerField()
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["template", "version"], name="template_version_unique"),
        ]
        ordering = ["template", "version"]
        # The coupon list's scope filters read the version a coupon was issued from.
        indexes = [
            GinIndex(fields=["stores"], name="template_version_stores_gin"),
            models.Index(fields=["channel"], name="template_version_channel"),
        ]

    def __str__(self):
        return f"{self.template.code} v{self.version}"
