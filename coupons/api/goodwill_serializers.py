"""Goodwill coupon requests and answers (documents coupons.services.goodwill.goodwill_payload)."""

from rest_framework import serializers

from api.fields import (
    MAX_DB_ID,
    StrictCharField,
    external_id,
    journal_tip_field,
    seen_entry_field,
)
from coupons.models import GoodwillProposal


class GoodwillProposeInput(serializers.Serializer):
    template_id = serializers.IntegerField(min_value=1, max_value=MAX_DB_ID)
    user_id = external_id(
        required=False, help_text="The customer; left out when `coupon_id` names their coupon.")
    coupon_id = serializers.IntegerField(
        min_value=1, max_value=MAX_DB_ID, required=False,
        help_text="The coupon the customer called about: the goodwill coupon is for its owner.")
    answers = StrictCharField(
        max_length=64, help_text="The order id or support case it makes good: one goodwill "
                                 "coupon per customer and order or case.")
    reason = StrictCharField(max_length=500)


class GoodwillDecideInput(serializers.Serializer):
    seen_entry = seen_entry_field()
    note = StrictCharField(max_length=1000, required=False, default="", allow_blank=True,
                           help_text="Why; required to reject.")


class GoodwillOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=GoodwillProposal.Status.choices)
    user_id = serializers.CharField()
    template_id = serializers.IntegerField()
    coupon_id = serializers.IntegerField(allow_null=True,
                                         help_text="The coupon it was proposed from, if any.")
    answers = serializers.CharField()
    reason = serializers.CharField()
    proposed_by = serializers.CharField()
    proposed_at = serializers.DateTimeField()
    decided_by = serializers.CharField()
    decided_at = serializers.DateTimeField(allow_null=True)
    decision_note = serializers.CharField()
    issued_coupon_id = serializers.IntegerField(
        allow_null=True, help_text="The coupon its approval issued (its ISSUE ledger row names "
                                   "this proposal); null until approved.")
    journal_tip = journal_tip_field()
