"""Refund decision and impact-preview request and answer shapes."""

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.fields import (
    StrictBooleanField,
    StrictCharField,
    external_id,
    journal_tip_field,
    money_field,
    seen_entry_field,
)
from coupons.models import CouponKind
from refunds.api.policy_serializers import CompensationDoc
from refunds.models import RefundCoupon
from refunds.policy_engine import RefundType


class RefundInput(serializers.Serializer):
    refund_id = external_id()
    order_id = external_id()
    payment_id = external_id()
    refund_amount = money_field()
    refund_type = serializers.ChoiceField(
        choices=["FULL", "PARTIAL"],
        help_text="As the refund service sees it; a PARTIAL refund that brings the order's "
                  "refunds up to what it paid counts as FULL.",
    )
    risk_flag = StrictBooleanField(required=False, default=False)


class RefundMoneyOutput(serializers.Serializer):
    coupon_share = serializers.CharField(
        allow_null=True,
        help_text="This refund's part of the coupon's discount: the order's discount snapshot "
                  "pro-rated by refunded_total / paid_amount, less earlier refunds' parts.")
    order_discount = serializers.CharField(allow_null=True)
    order_amount = serializers.CharField(allow_null=True)
    paid_amount = serializers.CharField(allow_null=True)
    refunded_total = serializers.CharField(allow_null=True)


class DecisionFacts(serializers.Serializer):
    """refunds.policy_engine.RefundFacts as stored with the decision (its `as_json`)."""

    refund_type = serializers.ChoiceField(choices=RefundType.ALL)
    refunded_share = serializers.CharField(
        help_text="The share of the order's payment refunded so far, 0 to 1, a decimal string.")
    coupon_expired = serializers.BooleanField()
    template_kind = serializers.ChoiceField(choices=CouponKind.choices)
    template_returnable = serializers.BooleanField()
    campaign_closed = serializers.BooleanField()
    risk_flag = serializers.BooleanField()
    days_since_redemption = serializers.IntegerField()
    face_value = serializers.CharField(
        allow_null=True, required=False,
        help_text="The coupon's face value, a decimal string (null for a percentage).")


# Declared shapes of what the selectors answer as stored JSON: the answer is the stored
# object unchanged, the schema names its fields.
@extend_schema_field(DecisionFacts)
class FactsField(serializers.DictField):
    pass


@extend_schema_field(CompensationDoc)
class CompensationField(serializers.DictField):
    pass


class RefundCouponDecisionOutput(serializers.Serializer):
    action = serializers.ChoiceField(choices=RefundCoupon.Action.choices, allow_null=True)
    policy = serializers.CharField(allow_null=True)
    policy_version = serializers.IntegerField(allow_null=True)
    rule_index = serializers.IntegerField(allow_null=True)
    rule_label = serializers.CharField()
    requires_approval = serializers.BooleanField()
    compensation = CompensationField(
        help_text="What a COMPENSATE rule gives (`template_id` or `amount`); `{}` otherwise.")
    facts = FactsField(allow_null=True, help_text="The RefundFacts it was decided on.")
    decided_at = serializers.DateTimeField(allow_null=True)


class RefundDetailsOutput(serializers.Serializer):
    amount = serializers.CharField()
    type = serializers.ChoiceField(choices=RefundType.ALL)
    risk_flag = serializers.BooleanField()
    received_at = serializers.DateTimeField()


class ReviewOutput(serializers.Serializer):
    by = serializers.CharField()
    at = serializers.DateTimeField(allow_null=True)
    note = serializers.CharField()


class RefundDecisionOutput(serializers.Serializer):
    id = serializers.IntegerField()
    refund_id = serializers.CharField()
    order_id = serializers.CharField()
    payment_id = serializers.CharField()
    coupon_id = serializers.IntegerField()
    redemption_id = serializers.IntegerField(allow_null=True)
    status = serializers.ChoiceField(choices=RefundCoupon.Status.choices)
    refund = RefundDetailsOutput()
    money_decision = RefundMoneyOutput()
    coupon_decision = RefundCouponDecisionOutput()
    executed_action = serializers.ChoiceField(choices=RefundCoupon.Action.choices,
                                              allow_null=True)
    operation_id = serializers.IntegerField(allow_null=True,
                                            help_text="The ledger row executing it.")
    compensation_coupon_id = serializers.IntegerField(allow_null=True)
    compensation_id = serializers.IntegerField(allow_null=True)
    review = ReviewOutput()
    reason = serializers.CharField()
    created_by = serializers.CharField()
    journal_tip = journal_tip_field()


class RefundNoteOutput(serializers.Serializer):
    coupon_id = serializers.IntegerField(allow_null=True)
    note = serializers.CharField()


class RefundReceiptOutput(serializers.Serializer):
    refund_id = serializers.CharField()
    order_id = serializers.CharField()
    decisions = RefundDecisionOutput(many=True)
    notes = RefundNoteOutput(many=True, help_text="Coupons of the order with nothing to decide.")


class ApproveInput(serializers.Serializer):
    seen_entry = seen_entry_field()
    note = StrictCharField(max_length=1000, required=False, default="", allow_blank=True)
    action = serializers.ChoiceField(
        choices=["RETURN", "KEEP_USED", "VOID"], required=False, allow_null=True, default=None,
        help_text="Required for a MANUAL_REVIEW decision: what happens to the coupon.",
    )


class RejectInput(serializers.Serializer):
    seen_entry = seen_entry_field()
    note = StrictCharField(max_length=1000)


class PreviewInput(serializers.Serializer):
    """`from` and `to` bound the decisions replayed (by when they were taken); `from` before
    `to`."""

    def get_fields(self):
        # `from` is a Python keyword: the fields are named here, not as class attributes.
        return {
            "from": serializers.DateTimeField(required=False, allow_null=True, default=None),
            "to": serializers.DateTimeField(required=False, allow_null=True, default=None),
        }

    def validate(self, data):
        if data["from"] and data["to"] and data["from"] >= data["to"]:
            raise serializers.ValidationError({"from": [_("Must be before to.")]})
        return {"date_from": data["from"], "date_to": data["to"]}


class PreviewChangeOutput(serializers.Serializer):
    from_ = serializers.CharField(help_text="The decision taken then.")
    to = serializers.CharField(help_text="What this version decides from the same facts.")
    rule_index = serializers.IntegerField()
    rule_label = serializers.CharField()
    count = serializers.IntegerField()
    example_refund_ids = serializers.ListField(child=serializers.CharField())

    def get_fields(self):
        return renamed_from(super().get_fields())


class PreviewRuleOutput(serializers.Serializer):
    rule_index = serializers.IntegerField()
    rule_label = serializers.CharField()
    decisions = serializers.IntegerField()


class PreviewOutput(serializers.Serializer):
    policy = serializers.CharField()
    version = serializers.IntegerField()
    version_status = serializers.CharField()
    from_ = serializers.DateTimeField(allow_null=True)
    to = serializers.DateTimeField(allow_null=True)
    decisions = serializers.IntegerField(help_text="Stored decisions of the policy replayed.")
    sample_size = serializers.IntegerField(
        help_text="At most this many decisions, the newest, are replayed (0: no cap).")
    sampled = serializers.BooleanField(
        help_text="True when older decisions in the range were left out by the cap.")
    unchanged = serializers.IntegerField()
    changed = serializers.IntegerField()
    changes = PreviewChangeOutput(many=True)
    by_rule = PreviewRuleOutput(many=True)

    def get_fields(self):
        return renamed_from(super().get_fields())


def renamed_from(fields: dict) -> dict:
    """`from` is a Python keyword: declared as `from_`, answered as `from`."""
    return {("from" if name == "from_" else name): field for name, field in fields.items()}
