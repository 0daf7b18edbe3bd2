"""Reads of return policies for the API and the admin."""

from django.db.models import Max, Q, QuerySet
from django.utils.translation import gettext_lazy as _

from coupons.errors import NotFound
from refunds.models import ReturnPolicy, ReturnPolicyVersion

PUBLISHED = Q(versions__status=ReturnPolicyVersion.Status.PUBLISHED)
DRAFT = Q(versions__status=ReturnPolicyVersion.Status.DRAFT)


def policy_list() -> QuerySet[ReturnPolicy]:
    return ReturnPolicy.objects.annotate(
        current_version=Max("versions__number", filter=PUBLISHED),
        draft_version=Max("versions__number", filter=DRAFT),
    ).order_by("code")


def policy_get(*, policy_id) -> ReturnPolicy:
    policy = policy_list().filter(pk=policy_id).first()
    if policy is None:
        raise NotFound(_("No such return policy."), policy_id=policy_id)
    return policy


def policy_versions(*, policy_id) -> QuerySet[ReturnPolicyVersion]:
    return (ReturnPolicyVersion.objects.filter(policy_id=policy_id)
            .select_related("policy", "based_on").order_by("number"))


def policy_version_get(*, policy_id, number) -> ReturnPolicyVersion:
    version = policy_versions(policy_id=policy_id).filter(number=number).first()
    if version is None:
        raise NotFound(_("No such policy version."), policy_id=policy_id, number=number)
    return version
