"""Input serializers validate requests; output serializers document (and render) answers."""

import re
from decimal import Decimal

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.error_serializers import ERROR_CODES, DetailsField
from api.fields import (
    MAX_DB_ID,
    MAX_VERSION,
    MONEY,
    DecimalText,
    QueryIntegerField,
    StrictBooleanField,
    StrictCharField,
    StrictSlugField,
    external_id,
    given,
    money_field,
)
from api.identifiers import ExternalIdField
from api.schema import SLUG
from coupons.diagnosis import RefundOutcome
from coupons.history import KIND_ORDER
from coupons.models import (
    Channel,
    CouponKind,
    CouponOperation,
    CouponStatus,
    CouponTemplate,
    ExpiryDuringLock,
    OperationType,
    SettlementResult,
)
from coupons.models.templates import MAX_STORES, STORE_ID_LENGTH
from coupons.redaction import redacted

PERCENT_PATTERN = r"^(?:100(?:\.00?)?|[1-9][0-9]?(?:\.[0-9]{1,2})?|0\.(?:0[1-9]|[1-9][0-9]?))$"


# A field that must be left out, in the branch of a `oneOf` that excludes it (api.schema's
# tidy_schema adds the type that tells generated clients so).
ABSENT = {"not": {}}


def lease_seconds_field():
    return serializers.IntegerField(
        required=False, min_value=1, max_value=settings.COUPONS["MAX_LEASE_SECONDS"],
        help_text="The lease's length from now; not with lease_until.",
    )


@extend_schema_field({"oneOf": [{"type": "integer", "minimum": 1, "maximum": MAX_DB_ID},
                                {"type": "string", "minLength": 1, "maxLength": 64,
                                 "pattern": SLUG}],
                      "description": "A return policy's id or code; null is the default policy."})
class PolicyRefField(serializers.Field):
    """A policy id or code (a slug, as every policy's code is); coupons.services.templates says
    whether such a policy exists. The schema states the same bounds."""

    def to_internal_value(self, data):
        if isinstance(data, int) and not isinstance(data, bool) and 1 <= data <= MAX_DB_ID:
            return data
        if isinstance(data, str) and len(data) <= 64 and re.fullmatch(SLUG, data):
            return data
        raise serializers.ValidationError(_("Give a return policy's id or code."))

    def to_representation(self, value):
        return value


class TemplateInput(serializers.Serializer):
    """Cross-field rules (coupons.services.templates.validate_terms), also in the schema:
    AMOUNT_OFF and EXCHANGE need `face_value`, PERCENT_OFF needs `percent_off`; exactly one of
    `valid_until` (a window, `valid_from` before it) and `valid_days`."""

    schema_constraints = {"allOf": [
        # A pattern, not an enum: the schema generator would make a one-value enum a component.
        {"anyOf": [{"properties": {"kind": {"type": "string", "pattern": "^PERCENT_OFF$"}}},
                   given("face_value", "string")]},
        {"anyOf": [{"properties": {"kind": {"not": {"enum": [CouponKind.PERCENT_OFF]}}}},
                   given("percent_off", "string")]},
        {"oneOf": [given("valid_until", "string"), given("valid_days", "integer")]},
    ]}

    code = StrictSlugField(max_length=64, trim_whitespace=False)  # a code as sent
    name = StrictCharField(max_length=200)
    kind = serializers.ChoiceField(choices=CouponKind.choices)
    face_value = money_field(required=False, allow_null=True)
    percent_off = DecimalText(
        max_digits=5, decimal_places=2, min_value=Decimal("0.01"), max_value=Decimal(100),
        pattern=PERCENT_PATTERN, required=False, allow_null=True,
    )
    max_discount = money_field(required=False, allow_null=True)
    min_order_amount = money_field(minimum="0", required=False, default=Decimal(0))
    valid_from = serializers.DateTimeField(required=False, allow_null=True)
    valid_until = serializers.DateTimeField(
        required=False, allow_null=True,
        help_text="The end of a fixed window; give this or valid_days, not both.",
    )
    valid_days = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=3650,
        help_text="Each coupon is valid this many days from its issue; or give valid_until.",
    )
    returnable = StrictBooleanField(required=False, default=True)
    expiry_during_lock = serializers.ChoiceField(
        choices=ExpiryDuringLock.choices, required=False, default=ExpiryDuringLock.LOCK_HONORS
    )
    return_policy = PolicyRefField(required=False, allow_null=True)
    stores = serializers.ListField(
        child=ExternalIdField(max_length=STORE_ID_LENGTH), max_length=MAX_STORES,
        required=False, help_text="The store ids its coupons apply at; left out or empty, "
                                  "every store. Kept as a set: sorted, each once.")
    channel = serializers.ChoiceField(
        choices=Channel.choices, allow_blank=True, required=False,
        help_text='The channel its coupons apply to; left out or "", every channel.')


class TemplateEditInput(TemplateInput):
    """A partial edit: only the terms sent change (no defaults fill the rest); never the code.

    The terms after the edit (the stored ones with these over them) must keep the rules of a
    new template, or the edit is a 400 naming the field: AMOUNT_OFF and EXCHANGE need a
    `face_value`, PERCENT_OFF a `percent_off`; exactly one of `valid_until` and `valid_days`
    is set (send the other as null to switch); `valid_from` before `valid_until`. Of these, the
    schema can state what holds whatever is stored: never both `valid_until` and `valid_days`
    in one edit, and no null `face_value` / `percent_off` for a kind that needs it."""

    schema_constraints = {"allOf": [
        {"not": {"allOf": [given("valid_until", "string"), given("valid_days", "integer")]}},
        {"not": {"required": ["kind", "face_value"], "properties": {
            "kind": {"type": "string", "pattern": "^(?:AMOUNT_OFF|EXCHANGE)$"},
            "face_value": {"enum": [None]}}}},
        {"not": {"required": ["kind", "percent_off"], "properties": {
            "kind": {"type": "string", "pattern": "^PERCENT_OFF$"},
            "percent_off": {"enum": [None]}}}},
    ]}
    code = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, partial=True, **kwargs)

    def validate(self, attrs):
        if "code" in self.initial_data:
            raise serializers.ValidationError({"code": _("A template's code never changes.")})
        return attrs


class TemplateOutput(serializers.ModelSerializer):
    stores = serializers.ListField(
        child=serializers.CharField(), help_text="The store ids its coupons apply at; empty: "
                                                 "every store.")
    channel = serializers.ChoiceField(
        choices=Channel.choices, allow_blank=True,
        help_text='The channel its coupons apply to; "": every channel.')

    class Meta:
        model = CouponTemplate
        fields = ["id", "code", "version", *CouponTemplate.TERM_FIELDS, "issuable", "created_at",
                  "updated_at"]


class IssueInput(serializers.Serializer):
    template_id = serializers.IntegerField(min_value=1, max_value=MAX_DB_ID)
    user_id = external_id()


class CouponOutput(serializers.Serializer):
    """Documents coupons.selectors.coupon_payload."""

    id = serializers.IntegerField()
    user_id = serializers.CharField()
    template_id = serializers.IntegerField()
    template_version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=CouponStatus.choices)
    state_version = serializers.IntegerField()
    valid_from = serializers.DateTimeField(allow_null=True)
    valid_until = serializers.DateTimeField(allow_null=True)
    issued_at = serializers.DateTimeField()
    locked_order_id = serializers.CharField(allow_null=True)
    lock_expires_at = serializers.DateTimeField(allow_null=True)


class LeaseWindowInput(serializers.Serializer):
    """How long the lease lasts: `lease_seconds` or `lease_until`, never both; neither gives
    COUPONS["DEFAULT_LEASE_SECONDS"] (a presale lease runs to its final-payment deadline)."""

    schema_constraints = {"allOf": [{"oneOf": [
        {"required": ["lease_seconds"], "properties": {"lease_until": ABSENT}},
        {"required": ["lease_until"], "properties": {"lease_seconds": ABSENT}},
        {"properties": {"lease_seconds": ABSENT, "lease_until": ABSENT}},
    ]}]}

    lease_seconds = lease_seconds_field()
    lease_until = serializers.DateTimeField(
        required=False,
        help_text="When the lease ends: after now and at most MAX_LEASE_SECONDS from now; "
                  "not with lease_seconds.",
    )

    def validate(self, data):
        if "lease_seconds" in data and "lease_until" in data:
            raise serializers.ValidationError(_("Give lease_seconds or lease_until, not both."))
        return data


class LockInput(LeaseWindowInput):
    order_id = external_id()
    user_id = external_id()
    order_amount = money_field()
    quote_id = external_id(required=False, default="", allow_blank=True)


class LockOutput(serializers.Serializer):
    coupon_id = serializers.IntegerField()
    lock_id = serializers.UUIDField()
    lock_token = serializers.CharField(help_text="Keep it: only its hash is stored.")
    order_id = serializers.CharField()
    state_version = serializers.IntegerField()
    expires_at = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=CouponStatus.choices)
    discount_amount = serializers.DecimalField(**MONEY)


class LeaseProofInput(serializers.Serializer):
    order_id = external_id()
    lock_token = ExternalIdField(max_length=128)
    expected_version = serializers.IntegerField(min_value=1, max_value=MAX_VERSION)


class RenewInput(LeaseProofInput, LeaseWindowInput):
    pass


class RenewOutput(serializers.Serializer):
    coupon_id = serializers.IntegerField()
    state_version = serializers.IntegerField()
    expires_at = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=CouponStatus.choices)


class RedeemInput(LeaseProofInput):
    payment_id = external_id()


class RedeemOutput(serializers.Serializer):
    coupon_id = serializers.IntegerField()
    redemption_id = serializers.IntegerField()
    order_id = serializers.CharField()
    payment_id = serializers.CharField()
    discount_amount = serializers.DecimalField(**MONEY)
    state_version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=CouponStatus.choices)
    already_redeemed = serializers.BooleanField(
        help_text="True when this order had redeemed before: nothing new happened."
    )


class ReleaseInput(LeaseProofInput):
    reason = StrictCharField(max_length=500, required=False, default="", allow_blank=True)


class VoidInput(serializers.Serializer):
    expected_version = serializers.IntegerField(min_value=1, max_value=MAX_VERSION)
    reason = StrictCharField(max_length=500)


class StateOutput(serializers.Serializer):
    coupon_id = serializers.IntegerField()
    state_version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=CouponStatus.choices)


def ledger_state(**kwargs):
    """A ledger row's state: a coupon status; `from_state` is "" on the ISSUE row."""
    return serializers.ChoiceField(choices=CouponStatus.choices, **kwargs)


class OperationOutput(serializers.Serializer):
    id = serializers.IntegerField()
    op_type = serializers.ChoiceField(choices=OperationType.choices)
    from_state = ledger_state(allow_blank=True)
    to_state = ledger_state()
    from_version = serializers.IntegerField()
    to_version = serializers.IntegerField()
    actor = serializers.CharField()
    order_id = serializers.CharField()
    lock_id = serializers.UUIDField(allow_null=True)
    payment_id = serializers.CharField()
    refund_id = serializers.CharField()
    idempotency_key = serializers.CharField()
    original_operation_id = serializers.IntegerField(allow_null=True)
    reason = serializers.CharField(
        allow_null=True,
        help_text="null on a REVERSE or COMPENSATE row when the caller lacks view_case_details "
                  "(the compensation's reason; then `redacted` names it).",
    )
    created_at = serializers.DateTimeField()
    redacted = serializers.SerializerMethodField(help_text="Fields hidden from this caller.")

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_redacted(self, operation) -> list[str]:
        shown = redacted(CouponOperation, {"reason": operation.reason},
                         can_see_details=self.context["can_see_details"],
                         op_type=operation.op_type)
        return shown["redacted"]

    def to_representation(self, instance):
        shown = super().to_representation(instance)
        return {**shown, **dict.fromkeys(shown["redacted"])}


class RejectionOutput(serializers.Serializer):
    id = serializers.IntegerField()
    op_type = serializers.CharField()
    order_id = serializers.CharField()
    actor = serializers.CharField()
    error_code = serializers.ChoiceField(choices=ERROR_CODES)
    message = serializers.CharField()
    details = DetailsField(help_text="The refusal's facts, by name, as its error answer gave "
                           "them (docs/api.md, Errors).")
    created_at = serializers.DateTimeField()


class InvariantOutput(serializers.Serializer):
    number = serializers.IntegerField()
    rule = serializers.CharField()
    ok = serializers.BooleanField()
    problems = serializers.ListField(child=serializers.CharField())


class RefundAnswerOutput(serializers.Serializer):
    decision_id = serializers.IntegerField()
    order_id = serializers.CharField()
    outcome = serializers.ChoiceField(choices=list(RefundOutcome.COMES_BACK), help_text=(
        "AWAITING_PAYMENT: decided once the order's payment is settled; IN_REVIEW: an operator "
        "approves or rejects the policy's action; RETURNED, FREED: the coupon is usable again; "
        "VOIDED, COMPENSATED, STAYS_USED, REJECTED: it does not come back."))
    coupon_comes_back = serializers.BooleanField(
        allow_null=True, help_text="Null while the decision is not made yet.")
    answer = serializers.CharField(help_text="The answer in a sentence, with the policy "
                                             "version that decided it.")


class PresaleAnswerOutput(serializers.Serializer):
    order_id = serializers.CharField()
    result = serializers.ChoiceField(choices=SettlementResult.choices)
    strategy = serializers.ChoiceField(choices=ExpiryDuringLock.choices)
    discount_amount = serializers.DecimalField(
        **MONEY, help_text="The discount the order finally got (0.00 when it paid full price).")
    amount_charged = serializers.DecimalField(
        **MONEY, allow_null=True,
        help_text="What the order service said it charged, when its fact said so.")
    answer = serializers.CharField(help_text="Why, in a sentence: e.g. the final payment "
                                             "came after the coupon's validity, so under "
                                             "STRICT the order paid full price.")


class DiagnosisOutput(serializers.Serializer):
    can_use_now = serializers.BooleanField()
    verdict = serializers.CharField(help_text="Why the coupon can or cannot be used now.")
    support_action = serializers.CharField(help_text="What support should do about it.")
    pending = serializers.ListField(child=serializers.CharField(), help_text=(
        "One sentence per refund decision or compensation that waits for a person, whatever "
        "the coupon's state; empty when nothing waits."))
    open_case_ids = serializers.ListField(child=serializers.IntegerField())
    refund = RefundAnswerOutput(allow_null=True, help_text=(
        "\"Do I get my coupon back?\": the coupon's latest refund decision; null when no "
        "refund names the coupon."))
    presale = PresaleAnswerOutput(allow_null=True, help_text=(
        "What the final payment of the presale order whose deposit locked the coupon did with "
        "it, under its template's expiry strategy; null when no presale order settled it."))


class CheckOutput(serializers.Serializer):
    coupon_id = serializers.IntegerField()
    ok = serializers.BooleanField()
    replayed_state = ledger_state(allow_null=True)
    replayed_version = serializers.IntegerField()
    invariants = InvariantOutput(many=True)
    notes = serializers.ListField(child=serializers.CharField(),
                                  help_text="What holds but is worth knowing.")
    complete = serializers.BooleanField(
        help_text="True: the check, with the earlier checks it rests on, verified the coupon's "
                  "whole history. False: more rows than a check reads on a request "
                  "(COUPON_CHECK_NEWEST_ROWS, 200) are covered by no signed checkpoint yet; it "
                  "read only the newest of them, and the background check (`manage.py "
                  "coupon_check --full`) verifies the rest. `ok` then speaks for what it read.")
    verified_up_to = serializers.IntegerField(
        allow_null=True,
        help_text="When the check read only the ledger's newest rows: the version up to which "
                  "the ledger is verified (0: none of it); the versions after it and before "
                  "`read_from_version` are left to the background check. Null otherwise.")
    read_from_version = serializers.IntegerField(
        allow_null=True,
        help_text="When the check read only the ledger's newest rows: the first version it "
                  "read. Null otherwise.")
    diagnosis = DiagnosisOutput()


# Each detail an entry may carry, and the kinds of entry that send it (coupons.history and
# after-sale's refunds.history); text but for the ids and the version.
DETAIL_KINDS = {
    "actor": "operation refusal refund",
    "order_id": "operation refusal fact case compensation refund",
    "payment_id": "operation fact", "lock_id": "operation", "op_type": "operation refusal",
    "from_state": "operation", "to_state": "operation", "to_version": "operation",
    "idempotency_key": "operation refusal", "reason": "operation compensation refund",
    "reason_code": "operation refund", "message": "refusal", "message_code": "refusal",
    "refund_id": "fact refund review", "occurred_at": "fact", "summary": "case",
    "resolved_by": "case", "resolution_note": "case", "strategy": "settlement",
    "discount_amount": "settlement", "substitute_coupon_id": "settlement",
    "proposed_by": "compensation", "operation_id": "compensation", "amount": "compensation",
    "decided_by": "compensation", "note": "compensation review", "coupon_share": "refund",
    "policy": "refund", "rule": "refund", "reviewed_by": "review",
    # Codes beside the words, so a reader's page can word them (the console does).
    "error_code": "refusal", "fact_type": "fact", "recommendation": "case",
    "compensation_kind": "compensation", "compensation_status": "compensation",
    "refund_type": "refund", "refund_amount": "refund", "action": "refund review",
    "requires_approval": "refund", "decision_status": "review",
}
NUMBER_DETAILS = {"to_version", "substitute_coupon_id", "operation_id"}
FLAG_DETAILS = {"requires_approval"}


class TimelineDetails(serializers.Serializer):
    """What an entry says beside its title: each kind sends the details it has, leaving out
    the empty ones; money is a decimal string, times ISO 8601."""

    def get_fields(self):
        return {name: (serializers.IntegerField if name in NUMBER_DETAILS
                       else serializers.BooleanField if name in FLAG_DETAILS
                       else serializers.CharField)(required=False, help_text=f"Sent by: {kinds}.")
                for name, kinds in DETAIL_KINDS.items()}


@extend_schema_field(TimelineDetails)
class TimelineDetailsField(serializers.DictField):
    """The entry's details unchanged, their fields declared."""


class TimelineEntryOutput(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.ChoiceField(choices=KIND_ORDER)
    id = serializers.IntegerField(help_text="The row id within its kind.")
    title = serializers.CharField()
    details = TimelineDetailsField()


class ProofOperationOutput(serializers.Serializer):
    to_version = serializers.IntegerField()
    op_type = serializers.ChoiceField(choices=OperationType.choices)
    from_state = ledger_state(allow_blank=True)
    to_state = ledger_state()
    created_at = serializers.DateTimeField()


class SignedCheckpointOutput(serializers.Serializer):
    signed = serializers.CharField(help_text="The signed text: canonical JSON of the checkpoint.")
    signature = serializers.CharField(help_text="Ed25519 over `signed` (UTF-8), base64.")


class ProofQuery(serializers.Serializer):
    since = QueryIntegerField(
        required=False, min_value=1, max_value=2**31 - 1,
        help_text="An older checkpoint's number: the answer adds the RFC 9162 consistency proof "
                  "from its journal head to the newest one's.")


class ProofJournalHeadOutput(serializers.Serializer):
    checkpoint = serializers.IntegerField(help_text="The checkpoint that signs it.")
    size = serializers.IntegerField(help_text="Log positions 0 .. size - 1 are signed.")
    root = serializers.CharField(help_text="RFC 9162 root of the journal log, hex.")


class ProofJournalEntryOutput(serializers.Serializer):
    entry_id = serializers.IntegerField()
    table = serializers.CharField(help_text="The row's table, as app.model.")
    row_id = serializers.IntegerField()
    kind = serializers.CharField()
    content = serializers.CharField(help_text="The entry: canonical JSON, exactly as stored.")
    content_hash = serializers.CharField(help_text="SHA-256 of `content` (UTF-8), hex.")
    log_index = serializers.IntegerField(
        allow_null=True, help_text="Its position in the journal log; null while the signed "
                                   "head does not cover it yet.")
    inclusion_path = serializers.ListField(
        child=serializers.CharField(), allow_null=True,
        help_text="RFC 9162 inclusion path of SHA-256(0x00 || content) to the signed journal "
                  "root, hex, leaf first; null when not covered, or when the stored log does "
                  "not lead the entry to the signed root (`inclusion_problem` says so).")
    inclusion_problem = serializers.CharField(
        allow_null=True, help_text="Null, or why no path is served: the server checked the "
                                   "stored path against the signed root and it does not reach "
                                   "it.")


class ProofJournalConsistencyOutput(serializers.Serializer):
    since = serializers.IntegerField(help_text="The older checkpoint's number.")
    since_size = serializers.IntegerField()
    since_root = serializers.CharField()
    path = serializers.ListField(
        child=serializers.CharField(), allow_null=True,
        help_text="RFC 9162 PROOF(since_size, D[size]) to the newest journal head, hex; null "
                  "when the stored log does not prove it (`problem` says so).")
    problem = serializers.CharField(
        allow_null=True, help_text="Null, or why no consistency proof is served: the server "
                                   "checked it against both signed roots and it does not hold.")


class ProofOutput(serializers.Serializer):
    coupon_id = serializers.IntegerField()
    state_version = serializers.IntegerField()
    operations = ProofOperationOutput(many=True)
    checkpoint = SignedCheckpointOutput(allow_null=True, help_text="The latest checkpoint; "
                                        "null before the first.")
    journal_head = ProofJournalHeadOutput(
        allow_null=True, help_text="The journal head the checkpoint signs (repeated from "
                                   "`checkpoint.signed`); null when it signs none.")
    journal_entries = ProofJournalEntryOutput(
        many=True, help_text="Every journal entry about the coupon (its refund decisions, "
                             "compensations, cases, ...), oldest first.")
    journal_consistency = ProofJournalConsistencyOutput(
        allow_null=True, help_text="With `since`: the consistency proof from that checkpoint's "
                                   "journal head; null otherwise.")
