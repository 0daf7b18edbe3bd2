from rest_framework import serializers

from api.fields import StrictCharField, note_unless
from coupons.models import Finding


class FindingOutput(serializers.ModelSerializer):
    order_ids = serializers.ListField(child=serializers.CharField(),
                                      help_text="The orders the finding is about.")
    evidence = serializers.DictField(help_text="What the check found, by name.")

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
