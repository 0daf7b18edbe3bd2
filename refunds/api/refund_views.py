"""Refund decisions: refund services send refunds, operators approve or reject, policy admins
preview a policy version's impact on past refunds."""

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
from coupons.identity import idempotency_scope_of
from coupons.models import ServiceClient
from refunds import selectors
from refunds.impact import policy_impact, replay_slot
from refunds.models import RefundCoupon, ReturnPolicyVersion
from refunds.services import refund_approve, refund_receive, refund_reject

from . import refund_serializers as s
from .compensation_views import RefusalsLogged


class RefundFilter(django_filters.FilterSet):
    order_id = ExternalIdFilter()
    status = django_filters.ChoiceFilter(choices=RefundCoupon.Status.choices)
    coupon_id = IdFilter(field_name="coupon_id")
    refund_id = ExternalIdFilter()

    class Meta:
        model = RefundCoupon
        fields = ["order_id", "status", "coupon_id", "refund_id"]


class RefundListReceiveApi(GenericAPIView):
    capabilities = {"POST": Capability.SEND_REFUNDS}
    serializer_class = s.RefundDecisionOutput
    filterset_class = RefundFilter

    def get_queryset(self):
        return with_journal_tip(selectors.decision_list())

    @extend_schema(operation_id="refunds_list", responses=s.RefundDecisionOutput(many=True))
    def get(self, request):
        """Refund decisions, newest first, by pages, each with the `journal_tip` an approval
        names."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response([selectors.decision_shown(d) for d in page])

    @extend_schema(
        request=s.RefundInput, parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={201: s.RefundReceiptOutput, 200: s.RefundReceiptOutput},
        description="One decision per coupon the order used (201); an order that used no "
                    "coupon answers 200 with no decision. The same refund again (here or as a "
                    "RefundSucceeded fact) answers the decisions already taken.",
    )
    def post(self, request):
        return run_command(
            request, s.RefundInput,
            # Asked of the validated order id only: a raw one (a NUL) failed in PostgreSQL.
            success_status=lambda data: 201 if selectors.order_used_a_coupon(data["order_id"])
            else 200,
            command=lambda ctx, data: refund_receive(**data, ctx=ctx).payload(),
        )


class RefundDetailApi(APIView):
    @extend_schema(responses={200: s.RefundDecisionOutput})
    def get(self, request, decision_id):
        """One refund decision: the refund, the money and coupon decisions, the review, and the
        `journal_tip` an approval or rejection names as `seen_entry`."""
        decision = selectors.decision_get(decision_id=decision_id)
        return Response(selectors.decision_shown(decision))


def people_only(request) -> None:
    """Approving is a person's decision (docs/api.md): never a service client, whatever it holds."""
    if isinstance(request.user, ServiceClient):
        raise CapabilityMissing(_("Refund decisions are approved by operators, not by services."),
                                capability=Capability.APPROVE_REFUNDS.value)


class ReviewRefusalsLogged(RefusalsLogged):
    """A review refused before the service sees it (a capability missing, a service client
    asking) goes to the rejection log too, as the service's own refusals of it do."""

    def refused_coupon_id(self):
        return (RefundCoupon.objects.filter(pk=self.kwargs["decision_id"])
                .values_list("coupon_id", flat=True).first())

    def check_permissions(self, request):
        super().check_permissions(request)
        if request.method == "POST":
            with self.refusal_logged(request):
                people_only(request)


class RefundApproveApi(ReviewRefusalsLogged, APIView):
    capabilities = {"POST": Capability.APPROVE_REFUNDS}
    refusal_op_type = "REFUND_APPROVE"

    @extend_schema(request=s.ApproveInput,
                   responses={200: s.RefundDecisionOutput},
                   parameters=[IDEMPOTENCY_KEY_HEADER])
    def post(self, request, decision_id):
        """Approve a decision waiting for review and run it (a MANUAL_REVIEW names the `action`).
        `seen_entry` names the version read (its `journal_tip`): one that moved since is
        refused (409 EVIDENCE_CHANGED). Operators only, never a service client."""
        return run_command(
            request, s.ApproveInput,
            command=lambda ctx, data: selectors.decision_payload(refund_approve(
                decision_id=decision_id, seen_entry=data["seen_entry"], note=data["note"],
                action=data["action"], ctx=ctx,
            )),
        )


class RefundRejectApi(ReviewRefusalsLogged, APIView):
    capabilities = {"POST": Capability.APPROVE_REFUNDS}
    refusal_op_type = "REFUND_REJECT"

    @extend_schema(request=s.RejectInput,
                   responses={200: s.RefundDecisionOutput},
                   parameters=[IDEMPOTENCY_KEY_HEADER])
    def post(self, request, decision_id):
        """Reject a decision waiting for review, with a note: the coupon stays as it is.
        `seen_entry` as for approving. Operators only."""
        return run_command(
            request, s.RejectInput,
            command=lambda ctx, data: selectors.decision_payload(refund_reject(
                decision_id=decision_id, seen_entry=data["seen_entry"], note=data["note"],
                ctx=ctx,
            )),
        )


class PolicyVersionPreviewApi(APIView):
    """Re-decide the newest stored decisions of the policy under this version (at most
    IMPACT_REPLAY_SAMPLE; one replay per caller at a time); changes nothing."""

    capabilities = {"POST": Capability.EDIT_POLICIES}

    @extend_schema(request=s.PreviewInput,
                   responses={200: s.PreviewOutput})
    def post(self, request, policy_id, number):
        version = (ReturnPolicyVersion.objects.select_related("policy")
                   .filter(policy_id=policy_id, number=number).first())
        if version is None:
            raise NotFound(_("No such policy version."), policy_id=policy_id, version=number)
        window = s.PreviewInput(data=request.data)
        window.is_valid(raise_exception=True)
        with replay_slot(idempotency_scope_of(request.user)):
            return Response(policy_impact(version, **window.validated_data))
