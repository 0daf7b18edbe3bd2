"""Inbox and conflict-case request and answer shapes."""

from datetime import timedelta

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from api.error_serializers import DetailsField
from api.fields import (
    MAX_DB_ID,
    StrictBooleanField,
    StrictCharField,
    external_id,
    money_field,
    note_unless,
)
from api.identifiers import ExternalIdField
from coupons import clock, phones
from coupons.api.outcome_serializers import OUTCOME_UNION
from coupons.models import ConflictCase, CouponStatus, FactType
from coupons.redaction import visible


class FactTime(serializers.DateTimeField):
    """A time a fact names, within COUPONS["FACT_TIME_WINDOW_DAYS"] of now either way.

    No order is paid or due centuries away; such a time is a sender's bug, and one that fails
    downstream (a 9999-12-31 deadline plus the presale grace overflows) would fail on every
    redelivery. Refused here, it is a 400 and nothing is recorded.
    """

    def to_internal_value(self, value):
        moment = super().to_internal_value(value)
        days = settings.COUPONS["FACT_TIME_WINDOW_DAYS"]
        now = clock.now()
        if not now - timedelta(days=days) <= moment <= now + timedelta(days=days):
            raise serializers.ValidationError(
                _("Must be within %(days)s days of now.") % {"days": days}, code="out_of_range"
            )
        return moment


class EventInput(serializers.Serializer):
    message_id = ExternalIdField(
        max_length=128, help_text="The sender's id of this message: a redelivery repeats it "
                                  "(answered DUPLICATE); another body under it is a 422.")
    type = serializers.ChoiceField(choices=FactType.choices)
    occurred_at = FactTime(help_text="Within FACT_TIME_WINDOW_DAYS (1,830 days) of now.")
    payload = serializers.DictField()


class OrderPayload(serializers.Serializer):
    order_id = external_id()


class PaymentPayload(OrderPayload):
    payment_id = external_id()


class DepositPaidPayload(OrderPayload):
    coupon_id = serializers.IntegerField(min_value=1, max_value=MAX_DB_ID)
    user_id = external_id()
    order_amount = money_field()
    final_payment_deadline = FactTime(help_text="Within FACT_TIME_WINDOW_DAYS of now.")
    final_payment_opens_at = FactTime(
        required=False, help_text="When the final-payment window opens (the buyer is reminded "
                                  "then); without it, at the deposit.")
    quote_id = external_id(required=False, default="", allow_blank=True)
    deposit_payment_id = external_id(required=False, default="", allow_blank=True)

    def validate(self, attrs):
        opens_at = attrs.get("final_payment_opens_at")
        if opens_at is not None and opens_at > attrs["final_payment_deadline"]:
            raise serializers.ValidationError({"final_payment_opens_at": _(
                "The final-payment window must open before its deadline.")})
        return attrs


class FinalPaymentPayload(PaymentPayload):
    """What the payment service charged may come with it: the settlement records it, so a
    STRICT order the coupon no longer covered shows what it actually paid."""

    discount_applied = money_field(
        minimum="0", required=False,
        help_text="The discount the order service applied to the final payment.")
    amount_charged = money_field(
        minimum="0", required=False, help_text="What the final payment actually charged.")


class RefundPayload(PaymentPayload):
    refund_id = external_id()
    refund_amount = money_field()
    refund_type = serializers.ChoiceField(choices=["FULL", "PARTIAL"])
    risk_flag = StrictBooleanField(required=False, default=False)


class CustomerProfilePayload(serializers.Serializer):
    """A customer's profile from the user service. The phone number is kept only as its keyed
    hash and a masked form (138****5678), in the inbox as in the customer directory."""

    user_id = external_id()
    phone = StrictCharField(
        max_length=32, required=False, default="", allow_blank=True,
        help_text="Any common spelling (13812345678, +86 138 1234 5678, 138-1234-5678); "
                  "empty: the customer has none.")
    nickname = StrictCharField(max_length=64, required=False, default="", allow_blank=True)

    def validate_phone(self, value: str) -> str:
        if not value:
            return ""
        number = phones.normalised(value)
        if number is None:
            raise serializers.ValidationError(_("Not a phone number."), code="invalid")
        return number

    def stored(self) -> dict:
        number = self.validated_data["phone"]
        return {"user_id": self.validated_data["user_id"],
                "phone_hash": phones.phone_hash(number) if number else "",
                "phone_masked": phones.masked(number) if number else "",
                "nickname": self.validated_data["nickname"]}


PAYLOADS = {
    FactType.PAYMENT_SUCCEEDED: PaymentPayload,
    FactType.PAYMENT_FAILED: OrderPayload,
    FactType.ORDER_CLOSED: OrderPayload,
    FactType.DEPOSIT_PAID: DepositPaidPayload,
    FactType.FINAL_PAYMENT_SUCCEEDED: FinalPaymentPayload,
    FactType.REFUND_SUCCEEDED: RefundPayload,
    FactType.CUSTOMER_PROFILE_UPDATED: CustomerProfilePayload,
}


def typed_event(fact_type: str, payload: type[serializers.Serializer]):
    """The envelope of one fact type, its payload typed: one member of the `/events` union."""
    return type(f"{fact_type}Event", (EventInput,), {
        "__doc__": f"A {fact_type} fact.",
        "type": serializers.ChoiceField(choices=[fact_type]),
        "payload": payload(),
    })


# The request body of POST /events in the schema: a union discriminated by `type`, so a
# generated client knows each fact's payload. The view validates the same two steps.
EVENT_UNION = PolymorphicProxySerializer(
    component_name="Event",
    # Plain str keys: the YAML schema cannot represent the enum members themselves.
    serializers={str(fact_type): typed_event(fact_type, payload)
                 for fact_type, payload in PAYLOADS.items()},
    resource_type_field_name="type",
)


class EventOutput(serializers.Serializer):
    message_id = serializers.CharField()
    status = serializers.ChoiceField(choices=["PROCESSED", "DUPLICATE"])
    outcome = OUTCOME_UNION


class CaseEvidence(serializers.Serializer):
    """What coupons.events.handlers and coupons.services.presale_cases store when they open or
    join a case; each kind of case fills the fields it knows."""

    refused_with = serializers.CharField(
        help_text="The error code the fact's command was refused with, or NO_BINDING (a "
                  "final payment for an order whose deposit never locked the coupon).")
    coupon_state = serializers.ChoiceField(choices=CouponStatus.choices, required=False)
    coupon_version = serializers.IntegerField(required=False)
    error_details = DetailsField(required=False,
                                 help_text="The refusal's details, as in an error body.")
    order_lock_id = serializers.UUIDField(required=False)
    order_amount = serializers.CharField(required=False, help_text="A decimal string.")
    order_discount = serializers.CharField(required=False, help_text="A decimal string.")
    final_payment_deadline = serializers.CharField(required=False)
    substitute_coupon_id = serializers.IntegerField(required=False, allow_null=True)
    payment_id = serializers.CharField(required=False)
    message_id = serializers.CharField(required=False)
    final_payment_id = serializers.CharField(required=False)
    final_payment_message_id = serializers.CharField(required=False)


@extend_schema_field(CaseEvidence)
class EvidenceField(serializers.DictField):
    """The stored evidence unchanged, its fields declared."""


class CaseOutput(serializers.ModelSerializer):
    """Notes and evidence only when the context says `can_see_details` (default: hidden)."""

    sometimes_absent = ConflictCase.detail_fields
    evidence = EvidenceField(help_text="The fact's values the case was opened on, by "
                             "name (payment id, amounts, times).")

    class Meta:
        model = ConflictCase
        fields = ["id", "coupon", "order_id", "payment_id", "fact_type", "status",
                  "recommendation", "summary", "evidence", "opened_at", "resolved_at",
                  "resolved_by", "resolution", "resolution_note"]

    def to_representation(self, instance):
        return visible(ConflictCase, super().to_representation(instance),
                       can_see_details=self.context.get("can_see_details", False))


class CaseResolveInput(serializers.Serializer):
    """RESOLVE and DISMISS need a note that says what was done (stated in the schema too)."""

    schema_constraints = note_unless("APPLY", noted=["RESOLVE", "DISMISS"])

    action = serializers.ChoiceField(
        choices=["APPLY", "RESOLVE", "DISMISS"],
        help_text="APPLY runs the recommendation; RESOLVE (done by hand) and DISMISS need a note.",
    )
    note = StrictCharField(max_length=1000, required=False, default="", allow_blank=True)

