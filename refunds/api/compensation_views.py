"""Operators' compensations: propose for one ledger operation, a second operator decides."""

import django_filters
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from api.commands import IDEMPOTENCY_KEY_HEADER, run_command
from api.filters import ExternalIdFilter, IdFilter
from coupons.capabilities import Capability
from coupons.errors import CapabilityMissing, NotFound
from coupons.evidence.tips import with_journal_tip
from coupons.identity import actor_of, can_see_details
from coupons.models import CouponOperation
from coupons.redaction import redacted
from coupons.services import CommandContext
from coupons.write.refusals import refusals_recorded
from refunds.models import Compensation
from refunds.services.compensation_decide import compensation_approve, compensation_reject
from refunds.services.compensation_payloads import compensation_payload
from refunds.services.compensation_propose import compensation_propose

from . import compensation_serializers as s


def for_caller(request):
    """Amount, reason and decision note are case details: without view_case_details the
    caller sees null instead (and `redacted` names them), in the appended ledger row too."""
    details = can_see_details(request.user)

    def render(body: dict) -> dict:
        result = body["resulting_operation"]
        if result is not None:
            result = redacted(CouponOperation, result, can_see_details=details,
                              op_type=result["op_type"])
            del result["redacted"]  # named once, at the top
        return {**redacted(Compensation, body, can_see_details=details),
                "resulting_operation": result}

    return render


class RefusalsLogged:
    """A command refused for want of a capability goes to the rejection log too, with the
    user, like every other refusal of a compensation command."""

    refusal_op_type = ""

    def refused_coupon_id(self):
        return self.kwargs.get("coupon_id")

    def check_permissions(self, request):
        if request.method != "POST":
            return super().check_permissions(request)
        try:
            return super().check_permissions(request)
        except CapabilityMissing:
            with self.refusal_logged(request):
                raise

    def refusal_logged(self, request):
        """Records the refusal raised inside it, with the caller and the coupon."""
        ctx = CommandContext(actor=actor_of(request.user),
                             idempotency_key=request.headers.get("Idempotency-Key", "")[:255])
        return refusals_recorded(self.refusal_op_type, ctx, coupon_id=self.refused_coupon_id())


class DecisionRefusalsLogged(RefusalsLogged):
    def refused_coupon_id(self):
        return (Compensation.objects.filter(pk=self.kwargs["compensation_id"])
                .values_list("coupon_id", flat=True).first())


class CompensationProposeApi(RefusalsLogged, APIView):
    capabilities = {"POST": Capability.PROPOSE_COMPENSATION}
    refusal_op_type = "COMP_PROPOSE"

    @extend_schema(
        operation_id="compensation_propose", request=s.CompensationProposeInput,
        responses={201: s.CompensationOutput}, parameters=[IDEMPOTENCY_KEY_HEADER],
        description="Propose reversing one ledger operation (REDEEM, VOID, EXPIRE or RETURN, "
                    "while it is the coupon's latest change), or, with `amount`, paying money "
                    "for it. Another operator approves or rejects.",
    )
    def post(self, request, coupon_id, operation_id):
        return run_command(
            request, s.CompensationProposeInput, success_status=201, render=for_caller(request),
            command=lambda ctx, data: compensation_payload(compensation_propose(
                coupon_id=coupon_id, operation_id=operation_id, reason=data["reason"],
                amount=data.get("amount"), ctx=ctx,
            )),
        )


class CompensationFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=Compensation.Status.choices)
    kind = django_filters.ChoiceFilter(choices=Compensation.Kind.choices)
    order_id = ExternalIdFilter()
    coupon_id = IdFilter(field_name="coupon_id")

    class Meta:
        model = Compensation
        fields = ["status", "kind", "order_id", "coupon_id"]


def shown(compensation) -> dict:
    """A read's answer: the payload and the version it shows (read `with_journal_tip`)."""
    return {**compensation_payload(compensation), "journal_tip": compensation.journal_tip}


class CompensationListApi(GenericAPIView):
    serializer_class = s.CompensationOutput
    filterset_class = CompensationFilter

    def get_queryset(self):
        return with_journal_tip(Compensation.objects.select_related("resulting_operation")
                                .order_by("-created_at", "-id"))

    @extend_schema(operation_id="compensations_list",
                   responses=s.CompensationOutput(many=True))
    def get(self, request):
        """Compensations, newest first, each with the `journal_tip` a decision names; amounts
        only with view_case_details."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        render = for_caller(request)
        return self.get_paginated_response([render(shown(c)) for c in page])


class CompensationDetailApi(APIView):
    @extend_schema(responses=s.CompensationOutput)
    def get(self, request, compensation_id):
        """One compensation, the ledger row its approval appended, and the `journal_tip` an
        approval or rejection names as `seen_entry`."""
        compensation = with_journal_tip(Compensation.objects.select_related(
            "resulting_operation")).filter(pk=compensation_id).first()
        if compensation is None:
            raise NotFound(_("No such compensation."), compensation_id=compensation_id)
        return Response(for_caller(request)(shown(compensation)))


def decision_schema(action: str):
    return extend_schema(
        operation_id=f"compensation_{action}", request=s.CompensationDecideInput,
        responses={200: s.CompensationOutput}, parameters=[IDEMPOTENCY_KEY_HEADER],
        description=(
            "Approve: a reversal appends a REVERSE row naming the operation (409 if the coupon "
            "moved on since), money a COMPENSATE row with the amount; the answer carries it as "
            "`resulting_operation`." if action == "approve" else
            "Reject with a `note`: nothing is written to the ledger."
        ) + " `seen_entry` names the version read (its `journal_tip`): one that moved since "
            "is refused (409 EVIDENCE_CHANGED). Never by the proposer (403 SAME_OPERATOR).",
    )


class CompensationApproveApi(DecisionRefusalsLogged, APIView):
    capabilities = {"POST": Capability.APPROVE_COMPENSATION}
    refusal_op_type = "COMP_APPROVE"

    @decision_schema("approve")
    def post(self, request, compensation_id):
        return run_command(
            request, s.CompensationDecideInput, render=for_caller(request),
            command=lambda ctx, data: compensation_payload(compensation_approve(
                compensation_id=compensation_id, seen_entry=data["seen_entry"],
                note=data["note"], ctx=ctx)),
        )


class CompensationRejectApi(DecisionRefusalsLogged, APIView):
    capabilities = {"POST": Capability.APPROVE_COMPENSATION}
    refusal_op_type = "COMP_REJECT"

    @decision_schema("reject")
    def post(self, request, compensation_id):
        return run_command(
            request, s.CompensationDecideInput, render=for_caller(request),
            command=lambda ctx, data: compensation_payload(compensation_reject(
                compensation_id=compensation_id, seen_entry=data["seen_entry"],
                note=data["note"], ctx=ctx)),
        )
