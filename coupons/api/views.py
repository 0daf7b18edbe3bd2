"""Thin API views: validate with an input serializer, call one service, answer its payload."""

from drf_spectacular.utils import extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from api.commands import IDEMPOTENCY_KEY_HEADER, run_command
from coupons import clock, selectors
from coupons.capabilities import Capability
from coupons.diagnosis import coupon_diagnosis
from coupons.evidence.checkpoint_proofs import coupon_proof
from coupons.evidence.replay import coupon_check
from coupons.history import merged_timeline, timeline_after, timeline_length
from coupons.identity import can_see_details
from coupons.services import (
    LeaseProof,
    coupon_issue,
    coupon_lock,
    coupon_redeem,
    coupon_release,
    coupon_renew,
    coupon_void,
    template_create,
    template_update,
)

from . import serializers as s
from .filters import CouponFilter, TemplateFilter


def command_schema(request, response, *, status=200):
    return extend_schema(
        request=request, responses={status: response}, parameters=[IDEMPOTENCY_KEY_HEADER]
    )


def link(operation_id: str, coupon_id: str, **body: str) -> dict:
    """An OpenAPI link: what a client (or Schemathesis's stateful phase) does next with the
    answer; values are runtime expressions such as `$response.body#/id`."""
    return {"operationId": operation_id, "parameters": {"coupon_id": coupon_id},
            **({"requestBody": body} if body else {})}


ISSUED = "$response.body#/id"
HELD = "$response.body#/coupon_id"
LEASE = {"order_id": "$response.body#/order_id", "lock_token": "$response.body#/lock_token",
         "expected_version": "$response.body#/state_version"}


def lease_of(data) -> LeaseProof:
    return LeaseProof.from_token(
        order_id=data["order_id"], lock_token=data["lock_token"],
        expected_version=data["expected_version"],
    )


def lease_window(data) -> dict:
    return {"lease_seconds": data.get("lease_seconds"), "lease_until": data.get("lease_until")}


def with_lease_token(body: dict, fresh: dict) -> dict:
    """Never stored: a replay derives it again from the lock; a first answer already has it
    (`fresh`: lock id → token, filled by the command)."""
    token = fresh.get(body["lock_id"]) or selectors.lock_token_get(lock_id=body["lock_id"])
    return {**body, "lock_token": token}


class TemplateListCreateApi(GenericAPIView):
    capabilities = {"POST": Capability.MANAGE_TEMPLATES}
    error_statuses = {"POST": {404}}  # no such return_policy
    response_links = {"POST": {"IssueCoupon": {
        "operationId": "coupons_create", "requestBody": {"template_id": "$response.body#/id"}}}}
    serializer_class = s.TemplateOutput
    filterset_class = TemplateFilter

    def get_queryset(self):
        return selectors.template_list()

    @extend_schema(operation_id="templates_list", responses=s.TemplateOutput(many=True))
    def get(self, request):
        """Coupon templates, by code, by pages; filter by the store or channel they apply at."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(s.TemplateOutput(page, many=True).data)

    @command_schema(s.TemplateInput, s.TemplateOutput, status=201)
    def post(self, request):
        """Create a template (version 1). The cross-field rules of its terms are in the body's
        description."""
        return run_command(
            request, s.TemplateInput, success_status=201,
            command=lambda ctx, data: s.TemplateOutput(template_create(**data)).data,
        )


class TemplateDetailApi(APIView):
    capabilities = {"PATCH": Capability.MANAGE_TEMPLATES}

    @extend_schema(responses=s.TemplateOutput)
    def get(self, request, template_id):
        """One template with its current terms and version."""
        return Response(s.TemplateOutput(selectors.template_get(template_id=template_id)).data)

    @command_schema(s.TemplateEditInput, s.TemplateOutput)
    def patch(self, request, template_id):
        """Edit some terms: a new template version; coupons already issued keep theirs."""
        return run_command(
            request, s.TemplateEditInput,
            command=lambda ctx, data: s.TemplateOutput(
                template_update(template_id=template_id, **data)
            ).data,
        )


class CouponListIssueApi(GenericAPIView):
    capabilities = {"POST": Capability.ISSUE}
    error_statuses = {"POST": {404}}  # no such template_id
    response_links = {"POST": {
        "GetCoupon": link("coupons_retrieve", ISSUED),
        "LockCoupon": link("coupons_lock_create", ISSUED, user_id="$response.body#/user_id"),
        "VoidCoupon": link("coupons_void_create", ISSUED,
                           expected_version="$response.body#/state_version"),
    }}
    serializer_class = s.CouponOutput
    filterset_class = CouponFilter

    def get_queryset(self):
        return selectors.coupon_list()

    @extend_schema(operation_id="coupons_list", responses=s.CouponOutput(many=True))
    def get(self, request):
        """Coupons, newest first, by pages; filter by user, status, template, an order that
        holds or held one, or the store or channel they apply at."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response([selectors.coupon_payload(c) for c in page])

    @command_schema(s.IssueInput, s.CouponOutput, status=201)
    def post(self, request):
        """Issue a coupon of an issuable template to a user (ISSUE: AVAILABLE, version 1)."""
        return run_command(
            request, s.IssueInput, success_status=201,
            command=lambda ctx, data: coupon_issue(**data, ctx=ctx).payload(),
        )


class CouponDetailApi(APIView):
    @extend_schema(responses=s.CouponOutput)
    def get(self, request, coupon_id):
        """One coupon: status, version, validity and the order holding it."""
        return Response(selectors.coupon_payload(selectors.coupon_get(coupon_id=coupon_id)))


class CouponLockApi(APIView):
    capabilities = {"POST": Capability.LOCK}
    response_links = {"POST": {
        "RenewLease": link("coupons_renew_create", HELD, **LEASE),
        "RedeemCoupon": link("coupons_redeem_create", HELD, **LEASE),
        "ReleaseCoupon": link("coupons_release_create", HELD, **LEASE),
    }}

    @command_schema(s.LockInput, s.LockOutput)
    def post(self, request, coupon_id):
        """LOCK an AVAILABLE coupon for an order: answers the discount and a lease token the
        order must show to renew, redeem or release."""
        fresh_tokens = {}

        def lock(ctx, data):
            result = coupon_lock(
                coupon_id=coupon_id, order_id=data["order_id"], user_id=data["user_id"],
                order_amount=data["order_amount"], quote_id=data["quote_id"],
                **lease_window(data), ctx=ctx,
            )
            fresh_tokens[str(result.lock.pk)] = result.lock_token
            return result.payload()

        return run_command(request, s.LockInput, command=lock,
                           render=lambda body: with_lease_token(body, fresh_tokens))


class CouponRenewApi(APIView):
    capabilities = {"POST": Capability.RENEW}
    @command_schema(s.RenewInput, s.RenewOutput)
    def post(self, request, coupon_id):
        """RENEW the lease the order holds (order id + lease token + expected version)."""
        return run_command(
            request, s.RenewInput,
            command=lambda ctx, data: coupon_renew(
                coupon_id=coupon_id, lease=lease_of(data), **lease_window(data), ctx=ctx
            ).payload(),
        )


class CouponRedeemApi(APIView):
    capabilities = {"POST": Capability.REDEEM}
    response_links = {"POST": {"CheckCoupon": link("coupons_check_retrieve", HELD)}}

    @command_schema(s.RedeemInput, s.RedeemOutput)
    def post(self, request, coupon_id):
        """REDEEM the locked coupon at payment (USED). Redeeming again for the same order answers
        the first redemption."""
        return run_command(
            request, s.RedeemInput,
            command=lambda ctx, data: coupon_redeem(
                coupon_id=coupon_id, lease=lease_of(data), payment_id=data["payment_id"],
                ctx=ctx,
            ).payload(),
        )


class CouponReleaseApi(APIView):
    capabilities = {"POST": Capability.RELEASE}
    @command_schema(s.ReleaseInput, s.StateOutput)
    def post(self, request, coupon_id):
        """RELEASE the lease: the coupon is AVAILABLE again (EXPIRED if its validity ended
        meanwhile)."""
        return run_command(
            request, s.ReleaseInput,
            command=lambda ctx, data: coupon_release(
                coupon_id=coupon_id, lease=lease_of(data), reason=data["reason"], ctx=ctx
            ).payload(),
        )


class CouponVoidApi(APIView):
    capabilities = {"POST": Capability.VOID}
    @command_schema(s.VoidInput, s.StateOutput)
    def post(self, request, coupon_id):
        """VOID the coupon at its expected version, with a reason."""
        return run_command(
            request, s.VoidInput,
            command=lambda ctx, data: coupon_void(
                coupon_id=coupon_id, expected_version=data["expected_version"],
                reason=data["reason"], ctx=ctx,
            ).payload(),
        )


class CouponOperationsApi(GenericAPIView):
    """The coupon's ledger, oldest first."""

    serializer_class = s.OperationOutput
    filter_backends = []

    def get_queryset(self):
        return selectors.coupon_operations(coupon_id=self.kwargs["coupon_id"])

    @extend_schema(responses=s.OperationOutput(many=True))
    def get(self, request, coupon_id):
        selectors.coupon_get(coupon_id=coupon_id)
        page = self.paginate_queryset(self.get_queryset())
        details = {"can_see_details": can_see_details(request.user)}
        return self.get_paginated_response(
            s.OperationOutput(page, many=True, context=details).data)


class CouponRejectionsApi(GenericAPIView):
    """Commands refused for this coupon, oldest first: what was refused, for whom and why."""

    serializer_class = s.RejectionOutput
    filter_backends = []

    def get_queryset(self):
        return selectors.coupon_rejections(coupon_id=self.kwargs["coupon_id"])

    @extend_schema(responses=s.RejectionOutput(many=True))
    def get(self, request, coupon_id):
        selectors.coupon_get(coupon_id=coupon_id)
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(s.RejectionOutput(page, many=True).data)


class CouponCheckApi(APIView):
    """Replays the coupon's ledger and tests the invariants (docs/design.md)."""

    # coupon → after-sale's rows that wait for a person, and coupon → its latest refund
    # decision's answer, given where the API is put together
    # (coupons.api.urls.coupon_urlpatterns): the core's HTTP layer imports no refunds module.
    waiting_on_people = None
    refund_answer = None

    @extend_schema(responses=s.CheckOutput)
    def get(self, request, coupon_id):
        coupon = selectors.coupon_get(coupon_id=coupon_id)
        diagnosis = coupon_diagnosis(coupon, clock.now(), waiting=self.waiting_on_people(coupon),
                                     refund=self.refund_answer(coupon))
        return Response({**coupon_check(coupon).as_dict(), "diagnosis": diagnosis})


class CouponProofApi(APIView):
    """The coupon's ledger with its hashes, its Merkle inclusion proof against the latest signed
    checkpoint, and that checkpoint; the coupon's journal entries with their inclusion proofs
    against the checkpoint's journal head (and, with `since`, the consistency proof from an
    older one): save it and check it offline with scripts/auditors/verify_coupon_proof.py and the
    published public key."""

    @extend_schema(parameters=[s.ProofQuery], responses=s.ProofOutput)
    def get(self, request, coupon_id):
        query = s.ProofQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        coupon = selectors.coupon_get(coupon_id=coupon_id)
        return Response(coupon_proof(coupon=coupon, since=query.validated_data.get("since")))


class CouponTimelineApi(GenericAPIView):
    """Everything that happened to the coupon, from every source, oldest first, by pages."""

    serializer_class = s.TimelineEntryOutput
    filter_backends = []
    # After-sale's timeline sources, given like CouponCheckApi's reader.
    extra_sources = ()

    @extend_schema(responses=s.TimelineEntryOutput(many=True))
    def get(self, request, coupon_id):
        coupon = selectors.coupon_get(coupon_id=coupon_id)
        details = can_see_details(request.user)
        if self.paginator.wants_cursor(request):
            return self.get_paginated_response(self.paginator.paginate_by_key(
                request, lambda after, size: timeline_after(
                    coupon=coupon, can_see_details=details, after=after, size=size,
                    extra_sources=self.extra_sources),
                count=lambda: timeline_length(coupon=coupon, extra_sources=self.extra_sources)))
        # Paged like every list: a busy coupon's whole history was a megabyte in one answer.
        timeline = merged_timeline(coupon=coupon, can_see_details=details,
                                   extra_sources=self.extra_sources)
        page = self.paginate_queryset(timeline)
        return self.get_paginated_response(page)
