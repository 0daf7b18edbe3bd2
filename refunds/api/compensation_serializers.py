"""Compensation requests and answers (documents refunds.services.compensation_payloads)."""

from rest_framework import serializers

from api.fields import (
    MONEY,
    StrictCharField,
    journal_tip_field,
    money_field,
    seen_entry_field,
)
from coupons.models import CouponStatus, OperationType
from refunds.models import Compensation

AMOUNT_HELP = "null when the caller lacks view_case_details (then `redacted` names it)."


class CompensationProposeInput(serializers.Serializer):
    reason = StrictCharField(max_length=500)
    amount = money_field(
        required=False,
        help_text="Money owed for the operation (a MONEY compensation: the coupon's state "
                  "stays). Leave it out to propose reversing the operation.",
    )


class CompensationDecideInput(serializers.Serializer):
    seen_entry = seen_entry_field()
    note = StrictCharField(
        max_length=1000, required=False, default="", allow_blank=True,
        help_text="Why; required to reject.",
    )


class CompensationOperationOutput(serializers.Serializer):
    """The REVERSE or COMPENSATE ledger row an approval appended."""

    id = serializers.IntegerField()
    op_type = serializers.ChoiceField(choices=[OperationType.REVERSE, OperationType.COMPENSATE])
    from_state = serializers.ChoiceField(choices=CouponStatus.choices)
    to_state = serializers.ChoiceField(choices=CouponStatus.choices)
    from_version = serializers.IntegerField()
    to_version = serializers.IntegerField()
    actor = serializers.CharField()
    original_operation_id = serializers.IntegerField(allow_null=True)
    amount = serializers.DecimalField(**MONEY, allow_null=True, help_text=AMOUNT_HELP)
    reason = serializers.CharField(allow_null=True, help_text=AMOUNT_HELP)
    created_at = serializers.DateTimeField()


class CompensationOutput(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=Compensation.Kind.choices)
    status = serializers.ChoiceField(choices=Compensation.Status.choices)
    coupon_id = serializers.IntegerField()
    order_id = serializers.CharField()
    operation_id = serializers.IntegerField(
        allow_null=True, help_text="The ledger operation compensated; null for a shortfall."
    )
    amount = serializers.DecimalField(**MONEY, allow_null=True, help_text=AMOUNT_HELP)
    reason = serializers.CharField(allow_null=True, help_text=AMOUNT_HELP)
    proposed_by = serializers.CharField()
    proposed_at = serializers.DateTimeField()
    decided_by = serializers.CharField()
    decided_at = serializers.DateTimeField(allow_null=True)
    decision_note = serializers.CharField(allow_null=True, help_text=AMOUNT_HELP)
    resulting_operation = CompensationOperationOutput(allow_null=True)
    redacted = serializers.ListField(
        child=serializers.CharField(), help_text="Fields hidden from this caller."
    )
    journal_tip = journal_tip_field()
