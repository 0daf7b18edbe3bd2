"""Return policies: policy admins write drafts and publish them; everyone who reads may look."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from api.commands import IDEMPOTENCY_KEY_HEADER, run_command
from api.error_serializers import ErrorOutput
from coupons.capabilities import Capability
from refunds import policy_selectors as selectors
from refunds.services.policies import (
    policy_create,
    policy_draft_create,
    policy_draft_update,
    policy_publish,
)

from . import policy_serializers as s

WRITES = {"POST": Capability.EDIT_POLICIES, "PATCH": Capability.EDIT_POLICIES}


# The other error answers come from api.schema, like every operation's; this one says
# what a conflict means for a policy.
CONFLICT = {409: OpenApiResponse(ErrorOutput, description=(
    "INVALID_STATE: the version is published (frozen), or the policy already has a draft; "
    "details carry current_state and current_version; or IDEMPOTENCY_REQUEST_IN_PROGRESS."))}


def write_schema(request, response, *, status=200, **kwargs):
    return extend_schema(request=request, responses={status: response, **CONFLICT},
                         parameters=[IDEMPOTENCY_KEY_HEADER], **kwargs)


def version_body(version) -> dict:
    return s.PolicyVersionOutput(version).data


class PolicyListCreateApi(GenericAPIView):
    capabilities = WRITES
    serializer_class = s.PolicyOutput
    filter_backends = []

    def get_queryset(self):
        return selectors.policy_list()

    @extend_schema(operation_id="return_policies_list",
                   responses=s.PolicyOutput(many=True))
    def get(self, request):
        """Return policies with their current published and draft version numbers."""
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(s.PolicyOutput(page, many=True).data)

    @write_schema(s.PolicyCreateInput, s.PolicyOutput, status=201,
                  description="A new policy with its first version as a draft.")
    def post(self, request):
        def command(ctx, data):
            policy = policy_create(code=data["code"], name=data["name"],
                                   rules=data.get("rules"), actor=ctx.actor)
            return s.PolicyOutput(selectors.policy_get(policy_id=policy.pk)).data

        return run_command(request, s.PolicyCreateInput, command, success_status=201)


class PolicyDetailApi(APIView):
    @extend_schema(responses=s.PolicyOutput)
    def get(self, request, policy_id):
        """One return policy."""
        return Response(s.PolicyOutput(selectors.policy_get(policy_id=policy_id)).data)


class PolicyVersionListCreateApi(GenericAPIView):
    capabilities = WRITES
    serializer_class = s.PolicyVersionOutput
    filter_backends = []

    def get_queryset(self):
        return selectors.policy_versions(policy_id=self.kwargs["policy_id"])

    @extend_schema(operation_id="return_policy_versions_list",
                   responses=s.PolicyVersionOutput(many=True))
    def get(self, request, policy_id):
        """The policy's versions, by pages."""
        selectors.policy_get(policy_id=policy_id)
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(s.PolicyVersionOutput(page, many=True).data)

    @write_schema(s.DraftCreateInput, s.PolicyVersionOutput, status=201,
                  description="A new draft copied from the latest version (one draft at a "
                              "time); its `based_on` names that version.")
    def post(self, request, policy_id):
        def command(ctx, data):
            selectors.policy_get(policy_id=policy_id)
            return version_body(policy_draft_create(policy_id, ctx.actor,
                                                    rules=data.get("rules")))

        return run_command(request, s.DraftCreateInput, command, success_status=201)


class PolicyVersionDetailApi(APIView):
    capabilities = WRITES

    @extend_schema(responses=s.PolicyVersionOutput)
    def get(self, request, policy_id, number):
        """One version of the policy with its rules as stored."""
        return Response(version_body(
            selectors.policy_version_get(policy_id=policy_id, number=number)))

    @write_schema(s.DraftUpdateInput, s.PolicyVersionOutput,
                  description="Replace a draft's rules; a published version answers 409.")
    def patch(self, request, policy_id, number):
        def command(ctx, data):
            version = selectors.policy_version_get(policy_id=policy_id, number=number)
            return version_body(policy_draft_update(version, data["rules"], ctx.actor))

        return run_command(request, s.DraftUpdateInput, command)


class PolicyVersionPublishApi(APIView):
    capabilities = WRITES

    @write_schema(s.PublishInput, s.PolicyVersionOutput,
                  description="Freeze the draft; refunds after this moment use it.")
    def post(self, request, policy_id, number):
        def command(ctx, data):
            version = selectors.policy_version_get(policy_id=policy_id, number=number)
            return version_body(policy_publish(version, ctx.actor))

        return run_command(request, s.PublishInput, command)
