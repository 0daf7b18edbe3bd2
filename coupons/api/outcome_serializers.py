"""What a fact did, one shape per outcome `action` (coupons/events/handlers.py and presale.py).

The answer of `POST /events` carries `outcome`; its schema is a union discriminated by `action`,
so a generated client knows, say, that CASE_OPENED comes with `case_id` and `recommendation`
without casting. These serializers describe answers only: the handlers build the dicts.
"""

from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from api.error_serializers import ERROR_CODES, DetailsField
from api.fields import MONEY, NamedSetField
from coupons.models import CouponStatus, LockStatus, Recommendation, SettlementResult


class Outcome(serializers.Serializer):
    actions: tuple[str, ...] = ()
    repeated_fact = serializers.BooleanField(
        help_text="True when another message had already stated this fact.")

    def get_fields(self):
        fields = super().get_fields()
        fields["action"] = serializers.ChoiceField(choices=self.actions)
        return fields


class CouponOutcome(Outcome):
    coupon_id = serializers.IntegerField(help_text="The coupon the fact concerned.")


class Refusal(serializers.Serializer):
    error_code = serializers.ChoiceField(choices=ERROR_CODES,
                                         help_text="Why the command the fact asked for refused.")
    error_details = DetailsField(help_text="The refusal's details, as in an error body.")


class NoCouponOutcome(Outcome):
    """The order holds no coupon: nothing to do."""

    actions = ("NO_COUPON",)


class RedeemedOutcome(CouponOutcome):
    """A payment redeemed the order's coupon (`redemption_id`, `state_version`), or a presale
    final payment did (`settlement` REDEEMED and its discount)."""

    actions = ("REDEEMED", "ALREADY_REDEEMED")
    redemption_id = serializers.IntegerField(required=False)
    state_version = serializers.IntegerField(required=False)
    settlement = serializers.ChoiceField(choices=[SettlementResult.REDEEMED], required=False)
    substitute_coupon_id = serializers.IntegerField(required=False, allow_null=True)
    discount_amount = serializers.DecimalField(**MONEY, required=False)
    discount_applied = serializers.DecimalField(**MONEY, required=False, allow_null=True)
    amount_charged = serializers.DecimalField(**MONEY, required=False, allow_null=True)


class CaseOutcome(CouponOutcome, Refusal):
    """A late fact met a coupon that moved on: a conflict case for people to resolve."""

    actions = ("CASE_OPENED", "CASE_ALREADY_CLOSED")
    case_id = serializers.IntegerField()
    recommendation = serializers.ChoiceField(choices=Recommendation.choices)


class IgnoredOutcome(CouponOutcome):
    """The fact changes nothing, for the `reason` given."""

    actions = ("IGNORED",)
    reason = serializers.CharField()


class NothingToReleaseOutcome(CouponOutcome):
    """The order's lease had already ended (`lock_status`)."""

    actions = ("NOTHING_TO_RELEASE",)
    lock_status = serializers.ChoiceField(choices=LockStatus.choices)


class RefusedOutcome(CouponOutcome, Refusal):
    """The command the fact asked for was refused."""

    actions = ("REFUSED", "LOCK_REFUSED")


class ReleasedOutcome(CouponOutcome):
    actions = ("RELEASED",)
    status = serializers.ChoiceField(choices=CouponStatus.choices)
    state_version = serializers.IntegerField()


class LockedOutcome(CouponOutcome):
    """A deposit locked the coupon until the final-payment deadline and its grace."""

    actions = ("LOCKED",)
    lock_id = serializers.UUIDField()
    state_version = serializers.IntegerField()
    expires_at = serializers.DateTimeField()


class AlreadyLockedOutcome(CouponOutcome):
    """The order already held the coupon; `error_code` when stretching its lease was refused."""

    actions = ("ALREADY_LOCKED",)
    error_code = serializers.ChoiceField(choices=ERROR_CODES, required=False)
    error_details = DetailsField(required=False)


class LeaseExtendedOutcome(CouponOutcome):
    actions = ("LEASE_EXTENDED",)
    expires_at = serializers.DateTimeField()
    state_version = serializers.IntegerField()


class RefundRefusedOutcome(Outcome, Refusal):
    """The refund id was received before for another order or amount."""

    actions = ("REFUND_REFUSED",)


class DecisionNote(serializers.Serializer):
    coupon_id = serializers.IntegerField(allow_null=True)
    note = serializers.CharField()


class NoCouponDecisionOutcome(Outcome):
    """The refund concerns no coupon; `notes` say why, per coupon."""

    actions = ("NO_COUPON_DECISION",)
    notes = DecisionNote(many=True)


class DecisionSummary(serializers.Serializer):
    id = serializers.IntegerField()
    coupon_id = serializers.IntegerField()
    action = NamedSetField(component="RefundCouponDecisionOutputActionEnum",
                           help_text="What the return policy decided (e.g. RETURN).")
    status = NamedSetField(component="RefundDecisionOutputStatusEnum",
                           help_text="The decision's status (e.g. EXECUTED).")


class RefundDecidedOutcome(Outcome):
    actions = ("REFUND_DECIDED",)
    decisions = DecisionSummary(many=True)


class SettlementOutcome(CouponOutcome):
    """A presale final payment settled the deposit's coupon (or had been settled)."""

    actions = ("PAID_IN_FULL", "SUBSTITUTED", "COMPENSATED", "ALREADY_SETTLED")
    settlement = serializers.ChoiceField(choices=SettlementResult.choices)
    substitute_coupon_id = serializers.IntegerField(allow_null=True)
    discount_amount = serializers.DecimalField(
        **MONEY, help_text="The discount the coupon (or its substitute) gave the order.")
    discount_applied = serializers.DecimalField(
        **MONEY, allow_null=True,
        help_text="What the final payment fact said it applied (null: not sent).")
    amount_charged = serializers.DecimalField(
        **MONEY, allow_null=True, help_text="What the final payment fact said it charged.")


class ProfileOutcome(Outcome):
    """A customer's profile: written, already saying this (`repeated_fact`), or older than the
    one kept (nothing changed)."""

    actions = ("PROFILE_UPDATED", "PROFILE_UNCHANGED", "PROFILE_OUTDATED")
    user_id = serializers.CharField(help_text="The customer the fact concerned.")


OUTCOMES = (NoCouponOutcome, RedeemedOutcome, CaseOutcome, IgnoredOutcome,
            NothingToReleaseOutcome, RefusedOutcome, ReleasedOutcome, LockedOutcome,
            AlreadyLockedOutcome, LeaseExtendedOutcome, RefundRefusedOutcome,
            NoCouponDecisionOutcome, RefundDecidedOutcome, SettlementOutcome, ProfileOutcome)

OUTCOME_UNION = PolymorphicProxySerializer(
    component_name="EventOutcome",
    serializers={action: outcome for outcome in OUTCOMES for action in outcome.actions},
    resource_type_field_name="action",
)
