"""The impact replay of a policy version, and publishing a draft from the same page.

The replay (refunds.impact) re-decides the stored refund decisions of the policy under this
version and writes nothing; the page is where a policy admin confirms the publish, so the
counts are in front of them when they do.
"""

from datetime import UTC, date, datetime, time, timedelta

from django import forms
from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from coupons.capabilities import Capability
from coupons.errors import (
    PolicyDraftUnchanged,
    PolicyVersionFrozen,
    ReplayInProgress,
    ValidationFailed,
)
from coupons.identity import actor_of
from refunds.impact import policy_impact, replay_slot
from refunds.selectors import decision_list
from refunds.services.policies import policy_publish
from timeline.views.access import ConsolePage
from timeline.views.policies import can_edit, version_or_404
from timeline.views.policy_editor import version_url


class PublishForm(forms.Form):
    confirm = forms.BooleanField(
        label=gettext_lazy("I have read the impact: publish this version; refunds from now on "
                           "use it, and it can never be changed again."),
        error_messages={"required": gettext_lazy("Tick this box to publish.")})


class ImpactRange(forms.Form):
    """Which stored refunds to replay, by the day they were received (UTC); none: all."""

    since = forms.DateField(required=False, label=gettext_lazy("Refunds received from"),
                            widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label=gettext_lazy("to (inclusive)"),
                            widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self):
        data = super().clean()
        if data.get("since") and data.get("until") and data["since"] > data["until"]:
            self.add_error("until", _("must not be before the first day"))
        return data

    def bounds(self) -> dict:
        since, until = self.cleaned_data.get("since"), self.cleaned_data.get("until")
        return {
            "date_from": datetime.combine(since, time(), UTC) if since else None,
            # The last day there is has no day after it: no upper bound then.
            "date_to": datetime.combine(until + timedelta(days=1), time(), UTC)
            if until and until < date.max else None,
        }


def changes_with_coupons(impact: dict) -> list[dict]:
    """The report's changes, each example a (refund id, coupon id) pair so it links to the
    coupon whose timeline shows that decision."""
    refund_ids = {refund_id for change in impact["changes"]
                  for refund_id in change["example_refund_ids"]}
    coupons = dict(decision_list().filter(refund_id__in=refund_ids).order_by()
                   .values_list("refund_id", "coupon_id"))
    return [{**change, "examples": [(refund_id, coupons.get(refund_id))
                                    for refund_id in change["example_refund_ids"]]}
            for change in impact["changes"]]


def impact_page(request, version, *, form=None, error=None, status=200):
    replay_range = ImpactRange(request.GET)
    impact = None
    # A range that does not parse replays nothing: its errors say why.
    if replay_range.is_valid():
        try:
            with replay_slot(f"user:{request.user.pk}"):
                impact = policy_impact(version, **replay_range.bounds())
        except ReplayInProgress as busy:
            error, status = busy, busy.http_status
    return render(request, "timeline/policy_impact.html", {
        "policy": version.policy, "version": version, "impact": impact,
        "changes": changes_with_coupons(impact) if impact else [], "range": replay_range,
        "ranged": replay_range.is_valid() and any(replay_range.bounds().values()),
        "can_publish": can_edit(request) and not version.is_published,
        "form": form or PublishForm(), "error": error,
    }, status=status)


class ImpactPage(ConsolePage):
    """What this version would have decided for the newest stored refunds of its policy.

    A replay is work for the server: policy admins only, as the API's preview.
    """

    capabilities = {"GET": Capability.EDIT_POLICIES}
    audit_page = "policy-impact"

    def get(self, request, policy_id: int, number: int):
        return impact_page(request, version_or_404(policy_id, number))


class Publish(ConsolePage):
    """POST from the impact page, with its confirmation box ticked."""

    capabilities = {"POST": Capability.EDIT_POLICIES}

    def post(self, request, policy_id: int, number: int):
        version = version_or_404(policy_id, number)
        form = PublishForm(request.POST)
        if not form.is_valid():
            return impact_page(request, version, form=form, status=400)
        try:
            published = policy_publish(version, actor_of(request.user))
        except (PolicyVersionFrozen, PolicyDraftUnchanged, ValidationFailed) as refused:
            return impact_page(request, version_or_404(policy_id, number), error=refused,
                               status=refused.http_status)
        messages.success(request, _("Published v%(number)s: refunds from now on use it.")
                         % {"number": published.number})
        return redirect(version_url(published))
