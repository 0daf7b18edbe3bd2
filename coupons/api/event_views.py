"""The inbox endpoint and the operators' conflict-case endpoints."""

import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from api.commands import IDEMPOTENCY_KEY_HEADER, run_command
from api.filters import ExternalIdFilter, IdFilter
from coupons.api.intake import fact_receive
from coupons.capabilities import Capability
from coupons.identity import can_see_details
from coupons.models import CaseStatus, ConflictCase
from coupons.services.cases import case_resolve

from . import event_serializers as s


class EventReceiveApi(APIView):
    """Facts from the order, payment and refund services: at least once, in any order.

    A service client may send only the fact types it was granted (`--facts`).
    """

    capabilities = {"POST": Capability.POST_FACTS}
    error_statuses = {"POST": {422}}  # MESSAGE_ID_REUSED

    @extend_schema(request=s.EVENT_UNION, responses={202: s.EventOutput})
    def post(self, request):
        result = fact_receive(data=request.data, sender=request.user)
        return Response(result.payload(), status=202)


class CaseFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=CaseStatus.choices)
    order_id = ExternalIdFilter()
    coupon_id = IdFilter(field_name="coupon_id")

    class Meta:
        model = ConflictCase
        fields = ["status", "order_id", "coupon_id"]


class CaseListApi(GenericAPIView):
    capabilities = {"GET": Capability.RESOLVE_CASES}
    serializer_class = s.CaseOutput
    filterset_class = CaseFilter

    def get_queryset(self):
        return ConflictCase.objects.order_by("-opened_at", "-id")

    @extend_schema(operation_id="cases_list", responses=s.CaseOutput(many=True))
    def get(self, request):
        """Conflict cases, newest first; notes and evidence only with view_case_details."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        details = {"can_see_details": can_see_details(request.user)}
        return self.get_paginated_response(s.CaseOutput(page, many=True, context=details).data)


class CaseResolveApi(APIView):
    capabilities = {"GET": Capability.RESOLVE_CASES, "POST": Capability.RESOLVE_CASES}

    @extend_schema(request=s.CaseResolveInput, responses={200: s.CaseOutput},
                   parameters=[IDEMPOTENCY_KEY_HEADER])
    def post(self, request, case_id):
        """Resolve an open conflict case: APPLY its recommendation, or RESOLVE / DISMISS with a
        note."""
        return run_command(
            request, s.CaseResolveInput,
            command=lambda ctx, data: s.CaseOutput(
                case_resolve(case_id=case_id, action=data["action"], note=data["note"], ctx=ctx),
                context={"can_see_details": can_see_details(request.user)},
            ).data,
        )
