"""Reading return policies: the list, a policy's versions, one version's rules, a diff.

Everyone who reads the console may read policies (support reads everything); the buttons that
change them show only to people holding EDIT_POLICIES, and the editor views check it again.
"""

from django.http import Http404
from django.shortcuts import render

from coupons import clock
from coupons.capabilities import Capability
from coupons.errors import NotFound
from coupons.selectors import template_list
from refunds import policy_selectors
from timeline.policy_words import rules_diff, rules_in_words
from timeline.views.access import ConsolePage


def can_edit(request) -> bool:
    return request.user.has_perm(Capability.EDIT_POLICIES.perm)


def template_names() -> dict:
    return dict(template_list().values_list("pk", "code"))


def policy_or_404(policy_id):
    try:
        return policy_selectors.policy_get(policy_id=policy_id)
    except NotFound as missing:
        raise Http404(f"No return policy {policy_id}") from missing


def version_or_404(policy_id, number):
    try:
        return policy_selectors.policy_version_get(policy_id=policy_id, number=number)
    except NotFound as missing:
        raise Http404(f"No version {number} of return policy {policy_id}") from missing


def in_force(policy, versions=None) -> dict:
    """Which version decides refunds now (read from `versions` when the page has them), and
    for the coupons of which templates."""
    now = clock.now()
    if versions is None:
        version = policy_selectors.version_in_force(policy_id=policy.pk, at=now)
    else:
        version = max((v for v in versions if v.is_published and v.published_at <= now),
                      key=lambda v: v.number, default=None)
    return {"in_force": version and version.number,
            "in_force_templates": policy_selectors.template_codes_deciding_by(policy=policy)}


def policy_page(request, policy, *, error=None, status=200):
    """A policy and its versions; also answers a refused "new draft" with the reason."""
    versions = list(policy_selectors.policy_versions(policy_id=policy.pk))
    return render(request, "timeline/policy.html", {
        "policy": policy, "versions": versions, "can_edit": can_edit(request),
        **in_force(policy, versions),
        "draft": next((v for v in versions if not v.is_published), None),
        "latest": versions[-1] if versions else None, "error": error,
    }, status=status)


def version_page(request, version, *, error=None, status=200):
    """One version's rules in words; also answers a refused edit of a published version."""
    return render(request, "timeline/policy_version.html", {
        "policy": version.policy, "version": version, "can_edit": can_edit(request),
        **in_force(version.policy),
        "rules": rules_in_words(version.rules, template_names()), "error": error,
    }, status=status)


class PolicyList(ConsolePage):
    audit_page = "policies"

    def get(self, request):
        return render(request, "timeline/policies.html", {
            "policies": policy_selectors.policy_list(), "can_edit": can_edit(request)})


class PolicyPage(ConsolePage):
    audit_page = "policy"

    def get(self, request, policy_id: int):
        return policy_page(request, policy_or_404(policy_id))


class VersionPage(ConsolePage):
    audit_page = "policy-version"

    def get(self, request, policy_id: int, number: int):
        return version_page(request, version_or_404(policy_id, number))


class PolicyDiff(ConsolePage):
    """Two versions side by side: `?from=N&to=M`, by default the latest and what it copied."""

    audit_page = "policy-diff"

    def get(self, request, policy_id: int):
        policy = policy_or_404(policy_id)
        versions = list(policy_selectors.policy_versions(policy_id=policy.pk))
        if not versions:
            raise Http404(f"Return policy {policy_id} has no versions")
        by_number = {version.number: version for version in versions}
        new = by_number.get(_number(request.GET.get("to")), versions[-1])
        default_old = new.based_on or by_number.get(new.number - 1, new)
        old = by_number.get(_number(request.GET.get("from")), default_old)
        names = template_names()
        return render(request, "timeline/policy_diff.html", {
            "policy": policy, "versions": versions, "old": old, "new": new,
            "rows": rules_diff(rules_in_words(old.rules, names), rules_in_words(new.rules, names)),
        })


def _number(raw) -> int | None:
    return int(raw) if raw and raw.isdecimal() else None
