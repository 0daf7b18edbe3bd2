"""Return policy requests and answers. Rules are checked by refunds.policy_engine, so the API,
the admin and the services refuse the same rules with the same field-level details."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.fields import StrictCharField, StrictSlugField
from coupons.models import CouponKind
from refunds.models import ReturnPolicy, ReturnPolicyVersion
from refunds.policy_engine import CONDITIONS, Action, RefundType

SHARE = {"max_digits": 5, "decimal_places": 4, "coerce_to_string": True}


class ConditionsDoc(serializers.Serializer):
    """All optional and AND-ed; an empty object matches every refund."""

    refund_type = serializers.ChoiceField(choices=RefundType.ALL, required=False)
    refunded_share_min = serializers.DecimalField(**SHARE, required=False)
    refunded_share_max = serializers.DecimalField(**SHARE, required=False)
    coupon_expired = serializers.BooleanField(required=False)
    template_kind = serializers.ListField(child=serializers.ChoiceField(CouponKind.choices),
                                          required=False)
    template_returnable = serializers.BooleanField(required=False)
    campaign_closed = serializers.BooleanField(required=False)
    risk_flag = serializers.BooleanField(required=False)
    days_since_redemption_min = serializers.IntegerField(min_value=0, required=False)
    days_since_redemption_max = serializers.IntegerField(min_value=0, required=False)
    face_value_min = serializers.DecimalField(max_digits=12, decimal_places=2, required=False)
    face_value_max = serializers.DecimalField(max_digits=12, decimal_places=2, required=False)

    def get_fields(self):
        fields = super().get_fields()
        for name, field in fields.items():
            field.help_text = CONDITIONS[name].help
        return fields


class CompensationDoc(serializers.Serializer):
    """COMPENSATE only, exactly one of the two."""

    template_id = serializers.IntegerField(required=False, help_text="Issue a coupon of it.")
    amount = serializers.DecimalField(max_digits=12, decimal_places=2, required=False,
                                      help_text="Credit this much money.")


class LabelsDoc(serializers.Serializer):
    """The rule's label in each console language; both written."""

    en = serializers.CharField(max_length=200)
    zh_hans = serializers.CharField(max_length=200, help_text="Key `zh-hans`.")

    def get_fields(self):
        fields = super().get_fields()
        fields["zh-hans"] = fields.pop("zh_hans")
        return fields


class RuleDoc(serializers.Serializer):
    label = serializers.CharField(
        max_length=200,
        help_text="A single label, read as written in every language; with `labels` the "
                  "stored label is their English one.")
    labels = LabelsDoc(required=False)
    when = ConditionsDoc(required=False)
    action = serializers.ChoiceField(choices=Action.ALL)
    requires_approval = serializers.BooleanField(
        required=False, default=False,
        help_text="An operator approves before it runs (always so for MANUAL_REVIEW).")
    compensation = CompensationDoc(required=False)


@extend_schema_field(RuleDoc(many=True))
class RulesField(serializers.JSONField):
    """Any JSON here; refunds.policy_engine.clean_rules says what is wrong, rule by rule."""

    # Read by api.schema: a version has at least its default rule.
    schema_extra = {"minItems": 1}


class PolicyCreateInput(serializers.Serializer):
    code = StrictSlugField(max_length=64, trim_whitespace=False)  # a code as sent
    name = StrictCharField(max_length=200)
    rules = RulesField(required=False, help_text=(
        "The first draft's rules; without them the draft copies the default policy's."))


class DraftCreateInput(serializers.Serializer):
    rules = RulesField(required=False, help_text=(
        "Replace the copied rules at once; without them the draft copies the latest version."))


class DraftUpdateInput(serializers.Serializer):
    """PATCH replaces the draft's rules as a whole, so `rules` is required."""

    # Never partial, although the method is PATCH: drf-spectacular sets `partial` on a PATCH
    # body's serializer (and would document `rules` as optional); the view never does.
    partial = property(lambda self: False, lambda self, value: None)

    rules = RulesField()


class PublishInput(serializers.Serializer):
    pass


class VersionRefOutput(serializers.Serializer):
    policy_id = serializers.IntegerField()
    number = serializers.IntegerField()


class PolicyVersionOutput(serializers.ModelSerializer):
    policy_code = serializers.CharField(source="policy.code")
    rules = RuleDoc(many=True)
    based_on = serializers.SerializerMethodField()

    class Meta:
        model = ReturnPolicyVersion
        fields = ["id", "policy_id", "policy_code", "number", "status", "rules", "based_on",
                  "created_by", "created_at", "published_by", "published_at"]

    @extend_schema_field(VersionRefOutput(allow_null=True))
    def get_based_on(self, version) -> dict | None:
        based_on = version.based_on
        if based_on is None:
            return None
        return {"policy_id": based_on.policy_id, "number": based_on.number}

    def to_representation(self, version):
        # Rules are answered exactly as stored, not re-rendered through RuleDoc.
        data = super().to_representation(version)
        data["rules"] = version.rules
        return data


class PolicyOutput(serializers.ModelSerializer):
    current_version = serializers.IntegerField(
        allow_null=True, help_text="The newest published version's number.")
    draft_version = serializers.IntegerField(
        allow_null=True, help_text="The open draft's number, if there is one.")

    class Meta:
        model = ReturnPolicy
        fields = ["id", "code", "name", "created_at", "current_version", "draft_version"]
