"""Reconciliation findings (docs/operating.md) for operators: the list, and applying or dismissing
one.

Runs are `manage.py reconcile` on a schedule, not a request: a run over every coupon takes
longer than an HTTP request should.
"""

import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.views import APIView

from api.commands import IDEMPOTENCY_KEY_HEADER, run_command
from api.filters import IdFilter
from coupons.capabilities import Capability
from coupons.models import Finding, FindingKind, FindingStatus, Severity
from coupons.selectors import finding_list
from operations.reconcile import finding_apply, finding_dismiss

from . import reconciliation_serializers as s


class FindingFilter(django_filters.FilterSet):
    severity = django_filters.ChoiceFilter(choices=Severity.choices)
    status = django_filters.ChoiceFilter(choices=FindingStatus.choices)
    kind = django_filters.ChoiceFilter(choices=FindingKind.choices)
    coupon_id = IdFilter(field_name="coupon_id")

    class Meta:
        model = Finding
        fields = ["severity", "status", "kind", "coupon_id"]


class FindingListApi(GenericAPIView):
    """Findings worst first; `?status=OPEN` for the ones still waiting for a person."""

    # The operators' queue, like conflict cases: it names orders, payments and repairs.
    capabilities = {"GET": Capability.RESOLVE_CASES}
    serializer_class = s.FindingOutput
    filterset_class = FindingFilter

    def get_queryset(self):
        return finding_list()

    @extend_schema(operation_id="reconciliation_list", responses=s.FindingOutput(many=True))
    def get(self, request):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(s.FindingOutput(page, many=True).data)


class FindingResolveApi(APIView):
    capabilities = {"POST": Capability.RESOLVE_CASES}

    @extend_schema(operation_id="reconciliation_resolve", request=s.FindingResolveInput,
                   responses={200: s.FindingOutput}, parameters=[IDEMPOTENCY_KEY_HEADER])
    def post(self, request, finding_id):
        """Resolve a finding: APPLY runs its proposed repair through the services; DISMISS
        closes it with a note."""

        def resolve(ctx, data):
            if data["action"] == "APPLY":
                finding = finding_apply(finding_id=finding_id, ctx=ctx)
            else:
                finding = finding_dismiss(finding_id=finding_id, note=data["note"], ctx=ctx)
            return s.FindingOutput(finding).data

        return run_command(request, s.FindingResolveInput, command=resolve)
