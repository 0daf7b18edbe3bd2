from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.fields import StrictCharField, note_unless
from coupons.models import CouponStatus, Finding


class FindingEvidence(serializers.Serializer):
    """What operations.reconcile (checks.py, exports.py) stores for a finding: each kind fills
    the fields it knows, so every field is optional."""

    order_id = serializers.CharField(required=False)
    payment_id = serializers.CharField(required=False, help_text="\"\" when none was heard.")
    coupon_status = serializers.ChoiceField(choices=CouponStatus.choices, required=False)
    coupon_version = serializers.IntegerField(required=False)
    locked_order_id = serializers.CharField(required=False, allow_null=True)
    lock_id = serializers.CharField(required=False, help_text="The coupon's current lock.")
    facts = serializers.ListField(child=serializers.CharField(), required=False,
                                  help_text="The fact types that ended the order.")
    redemption_ids = serializers.ListField(child=serializers.IntegerField(), required=False)
    orders = serializers.DictField(child=serializers.CharField(), required=False,
                                   help_text="Each consuming order's payment id, by order id.")
    decision_id = serializers.IntegerField(required=False)
    refund_id = serializers.CharField(required=False)
    redemption_id = serializers.IntegerField(required=False, allow_null=True)
    return_operation_id = serializers.IntegerField(required=False, allow_null=True)
    operation_id = serializers.IntegerField(required=False, allow_null=True)
    event_id = serializers.IntegerField(required=False, allow_null=True)
    gaps = serializers.ListField(child=serializers.CharField(), required=False,
                                 help_text="The ledger's gaps, in words; the first few.")
    paid = serializers.BooleanField(required=False)
    case_id = serializers.IntegerField(required=False, allow_null=True)
    payments = serializers.ListField(child=serializers.CharField(), required=False)
    fact_type = serializers.CharField(required=False, help_text="The fact never sent.")
    key = serializers.CharField(required=False,
                                help_text="Its payment or refund id; \"\" for the order's own.")


@extend_schema_field(FindingEvidence)
class FindingEvidenceField(serializers.DictField):
    """The stored evidence unchanged, its fields declared."""


class FindingOutput(serializers.ModelSerializer):
    order_ids = serializers.ListField(child=serializers.CharField(),
                                      help_text="The orders the finding is about.")
    evidence = FindingEvidenceField(help_text="What the check found, by name.")

    class Meta:
        model = Finding
        fields = ["id", "kind", "severity", "coupon", "subject", "order_ids", "summary",
                  "evidence", "repair", "status", "first_seen_at", "last_seen_at", "closed_at",
                  "resolved_by", "resolved_at", "resolution", "resolution_note"]


class FindingResolveInput(serializers.Serializer):
    """DISMISS needs a note that says why (stated in the schema too)."""

    schema_constraints = note_unless("APPLY", noted=["DISMISS"])

    action = serializers.ChoiceField(
        choices=["APPLY", "DISMISS"],
        help_text="APPLY runs the proposed repair through the services (refused for "
                  "MANUAL_REVIEW); DISMISS closes it with a note, and later runs leave it "
                  "dismissed while the fault holds.",
    )
    note = StrictCharField(max_length=1000, required=False, default="", allow_blank=True)
