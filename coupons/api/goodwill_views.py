"""Goodwill coupons: support proposes one for a customer's order or case, another person
approves (the coupon is issued) or rejects it (coupons.services.goodwill)."""

import django_filters
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from api.commands import IDEMPOTENCY_KEY_HEADER, run_command
from api.filters import ExternalIdFilter
from coupons.capabilities import Capability
from coupons.errors import CapabilityMissing, NotFound
from coupons.evidence.tips import with_journal_tip
from coupons.identity import actor_of
from coupons.models import GoodwillProposal
from coupons.services import CommandContext
from coupons.services.goodwill import (
    APPROVE,
    PROPOSE,
    REJECT,
    goodwill_approve,
    goodwill_payload,
    goodwill_propose,
    goodwill_reject,
)
from coupons.write.refusals import refusals_recorded

from . import goodwill_serializers as s


class RefusalsLogged:
    """A command refused for want of a capability goes to the rejection log too, with the
    user, like every other refusal of a goodwill command."""

    refusal_op_type = ""

    def check_permissions(self, request):
        if request.method != "POST":
            return super().check_permissions(request)
        try:
            return super().check_permissions(request)
        except CapabilityMissing:
            ctx = CommandContext(actor=actor_of(request.user),
                                 idempotency_key=request.headers.get("Idempotency-Key", "")[:255])
            with refusals_recorded(self.refusal_op_type, ctx):
                raise


class GoodwillFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=GoodwillProposal.Status.choices)
    user_id = ExternalIdFilter()

    class Meta:
        model = GoodwillProposal
        fields = ["status", "user_id"]


def shown(proposal) -> dict:
    """A read's answer: the payload and the version it shows (read `with_journal_tip`)."""
    return {**goodwill_payload(proposal), "journal_tip": proposal.journal_tip}


class GoodwillListProposeApi(RefusalsLogged, GenericAPIView):
    capabilities = {"POST": Capability.PROPOSE_GOODWILL}
    refusal_op_type = PROPOSE
    error_statuses = {"POST": {404}}  # no such template or coupon
    serializer_class = s.GoodwillOutput
    filterset_class = GoodwillFilter

    def get_queryset(self):
        return with_journal_tip(GoodwillProposal.objects.order_by("-created_at", "-id"))

    @extend_schema(operation_id="goodwill_list", responses=s.GoodwillOutput(many=True))
    def get(self, request):
        """Goodwill coupons proposed, newest first, each with the `journal_tip` a decision
        names; filter by status or customer."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response([shown(p) for p in page])

    @extend_schema(
        operation_id="goodwill_propose", request=s.GoodwillProposeInput,
        responses={201: s.GoodwillOutput}, parameters=[IDEMPOTENCY_KEY_HEADER],
        description="Propose a goodwill coupon of a template for a customer (`user_id`, or "
                    "the owner of `coupon_id`) and the order or case it `answers`. Nothing is "
                    "issued until another person approves. Refused when the template's "
                    "campaign is closed (422 TEMPLATE_INACTIVE) or the customer already has one "
                    "for that order or case, waiting or approved (409 GOODWILL_ALREADY_GIVEN).",
    )
    def post(self, request):
        return run_command(
            request, s.GoodwillProposeInput, success_status=201,
            command=lambda ctx, data: goodwill_payload(goodwill_propose(
                template_id=data["template_id"], user_id=data.get("user_id", ""),
                coupon_id=data.get("coupon_id"), answers=data["answers"],
                reason=data["reason"], ctx=ctx)),
        )


class GoodwillDetailApi(APIView):
    @extend_schema(operation_id="goodwill_retrieve", responses=s.GoodwillOutput)
    def get(self, request, goodwill_id):
        """One goodwill coupon proposal, and the `journal_tip` an approval or rejection names
        as `seen_entry`."""
        proposal = with_journal_tip(GoodwillProposal.objects).filter(pk=goodwill_id).first()
        if proposal is None:
            raise NotFound(_("No such goodwill coupon."), goodwill_id=goodwill_id)
        return Response(shown(proposal))


def decision_schema(action: str):
    return extend_schema(
        operation_id=f"goodwill_{action}", request=s.GoodwillDecideInput,
        responses={200: s.GoodwillOutput}, parameters=[IDEMPOTENCY_KEY_HEADER],
        description=(
            "Approve: the coupon is issued from the template's current terms (an ISSUE ledger "
            "row naming the proposal, and its outbox event); the answer names it as "
            "`issued_coupon_id`. Refused if the campaign closed since (422 TEMPLATE_INACTIVE)."
            if action == "approve" else
            "Reject with a `note`: nothing is issued."
        ) + " `seen_entry` names the version read (its `journal_tip`): one that moved since "
            "is refused (409 EVIDENCE_CHANGED). Never by the proposer (403 SAME_OPERATOR).",
    )


class GoodwillApproveApi(RefusalsLogged, APIView):
    capabilities = {"POST": Capability.APPROVE_GOODWILL}
    refusal_op_type = APPROVE

    @decision_schema("approve")
    def post(self, request, goodwill_id):
        return run_command(
            request, s.GoodwillDecideInput,
            command=lambda ctx, data: goodwill_payload(goodwill_approve(
                goodwill_id=goodwill_id, seen_entry=data["seen_entry"], note=data["note"],
                ctx=ctx)),
        )


class GoodwillRejectApi(RefusalsLogged, APIView):
    capabilities = {"POST": Capability.APPROVE_GOODWILL}
    refusal_op_type = REJECT

    @decision_schema("reject")
    def post(self, request, goodwill_id):
        return run_command(
            request, s.GoodwillDecideInput,
            command=lambda ctx, data: goodwill_payload(goodwill_reject(
                goodwill_id=goodwill_id, seen_entry=data["seen_entry"], note=data["note"],
                ctx=ctx)),
        )
