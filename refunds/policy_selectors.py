"""Reads of return policies for the API and the admin."""

from django.db.models import Max, Q, QuerySet
from django.utils.translation import gettext_lazy as _

from coupons.errors import NotFound
from coupons.models import CouponTemplate
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


def version_in_force(*, policy_id, at) -> ReturnPolicyVersion | None:
    """The version that decides this policy's refunds at `at`: the newest one published by
    then (as refunds.policy_engine.policy_version_for picks it)."""
    return (ReturnPolicyVersion.objects
            .filter(policy_id=policy_id, status=ReturnPolicyVersion.Status.PUBLISHED,
                    published_at__lte=at)
            .order_by("-number").first())


def template_codes_deciding_by(*, policy: ReturnPolicy) -> list[str]:
    """Codes of the templates whose coupons this policy decides: some version of the template
    names it (a coupon keeps its template version's policy), or, for the default policy,
    names none."""
    if policy.code == ReturnPolicy.DEFAULT_CODE:
        versions = Q(versions__return_policy=policy) | Q(versions__return_policy__isnull=True)
    else:
        versions = Q(versions__return_policy=policy)
    return list(CouponTemplate.objects.filter(versions).values_list("code", flat=True)
                .distinct().order_by("code"))


def replies_in_force(*, at) -> dict:
    """The customer replies' greeting and closing of the default policy's version in force at
    `at` ({}: the catalogue's; refunds.reply_words)."""
    version = (ReturnPolicyVersion.objects
               .filter(policy__code=ReturnPolicy.DEFAULT_CODE,
                       status=ReturnPolicyVersion.Status.PUBLISHED, published_at__lte=at)
               .order_by("-number").only("replies").first())
    return version.replies if version is not None else {}
