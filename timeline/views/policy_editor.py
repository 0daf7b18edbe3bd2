"""Changing return policies: a new policy, a new draft, the draft editor.

Every change goes through refunds.services.policies (the API's functions), so the rule checks,
the one-draft-per-policy rule and the frozen published versions hold here exactly as there. A
refusal is shown in the page with its status (400/409), never as a server error.
"""

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from coupons.capabilities import Capability
from coupons.errors import PolicyDraftExists, PolicyVersionFrozen, ValidationFailed
from coupons.identity import actor_of
from coupons.selectors import template_list
from refunds.models import ReturnPolicy
from refunds.services.policies import (
    policy_create,
    policy_draft_create,
    policy_draft_update,
)
from timeline.policy_forms import (
    RepliesForm,
    RuleFormSet,
    blank_rule_formset,
    posted_rows,
    posted_rules_in_order,
    rows_after,
    rule_to_row,
    shown_forms,
)
from timeline.views.access import ConsolePage
from timeline.views.policies import (
    policy_or_404,
    policy_page,
    version_or_404,
    version_page,
)

EDIT = Capability.EDIT_POLICIES


def version_url(version, name="console:policy_version") -> str:
    return reverse(name, kwargs={"policy_id": version.policy_id, "number": version.number})


def go_to(request, url: str):
    # An htmx post swaps part of the page; after a save the whole page changes.
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


class PolicyForm(forms.Form):
    code = forms.SlugField(max_length=64, label=gettext_lazy("Code"),
                           help_text=gettext_lazy("Templates name their policy by this code."))
    name = forms.CharField(max_length=200, label=gettext_lazy("Name"))


class NewPolicy(ConsolePage):
    """A new policy whose first draft copies the default policy's published rules."""

    capabilities = {"GET": EDIT, "POST": EDIT}

    def get(self, request):
        return render(request, "timeline/policy_new.html", {"form": PolicyForm()})

    def post(self, request):
        form = PolicyForm(request.POST)
        if form.is_valid():
            try:
                policy = policy_create(code=form.cleaned_data["code"],
                                       name=form.cleaned_data["name"],
                                       actor=actor_of(request.user))
            except ValidationFailed as refused:
                for field, problems in refused.details.items():
                    form.add_error(field if field in form.fields else None, problems)
            else:
                messages.success(request, _("Policy %(code)s made: edit its first draft.")
                                 % {"code": policy.code})
                return redirect("console:policy_version_edit", policy_id=policy.pk, number=1)
        return render(request, "timeline/policy_new.html", {"form": form}, status=400)


class NewDraft(ConsolePage):
    """POST: the next version as a draft, copied from the latest one."""

    capabilities = {"POST": EDIT}

    def post(self, request, policy_id: int):
        policy = policy_or_404(policy_id)
        try:
            draft = policy_draft_create(policy.pk, actor_of(request.user))
        except PolicyDraftExists as refused:
            return policy_page(request, policy, error=refused, status=refused.http_status)
        messages.success(request, _("Draft v%(number)s made from v%(previous)s.")
                         % {"number": draft.number, "previous": draft.number - 1})
        return redirect(version_url(draft, "console:policy_version_edit"))


class DraftEditor(ConsolePage):
    """A draft's rules as a formset. Buttons named `op` (add, remove-N, up-N, down-N) only
    rearrange the rows shown and save nothing; Save sends the rules through the service."""

    capabilities = {"GET": EDIT, "POST": EDIT}
    audit_page = "policy-editor"

    def get(self, request, policy_id: int, number: int):
        version = version_or_404(policy_id, number)
        if version.is_published:
            return self.frozen(request, version)
        rows = [rule_to_row(rule) for rule in version.rules]
        return self.editor(request, version, blank_rule_formset(rows, self.templates()),
                           replies=self.replies_form(version))

    def post(self, request, policy_id: int, number: int):
        version = version_or_404(policy_id, number)
        if version.is_published:
            return self.frozen(request, version)
        templates = self.templates()
        formset = RuleFormSet(request.POST, form_kwargs={"templates": templates})
        replies = self.replies_form(version, request.POST)
        op = request.POST.get("op", "")
        if op and formset.management_form.is_valid():
            rows = rows_after(posted_rows(formset), op)
            return self.editor(request, version, blank_rule_formset(rows, templates),
                               replies=replies)
        if not formset.is_valid() or (replies is not None and not replies.is_valid()):
            return self.editor(request, version, formset, replies=replies, status=400)
        forms_in_order, rules = posted_rules_in_order(formset)
        try:
            policy_draft_update(version, rules, actor_of(request.user),
                                replies=replies.to_replies() if replies is not None else None)
        except ValidationFailed as refused:
            problems = refused.details.get("rules")
            if isinstance(problems, dict):
                for index, rule_problems in problems.items():
                    forms_in_order[int(index)].add_engine_errors(rule_problems)
            if replies is not None and "replies" in refused.details:
                replies.add_service_errors(refused.details["replies"])
            return self.editor(request, version, formset, replies=replies,
                               shown=shown_forms(formset, forms_in_order),
                               rules_errors=[] if isinstance(problems, dict)
                               else problems or [refused.message],
                               status=refused.http_status)
        except PolicyVersionFrozen:
            # Published by someone else since this page was opened.
            return self.frozen(request, version_or_404(policy_id, number))
        messages.success(request, ngettext("Saved draft v%(number)s: %(count)s rule.",
                                            "Saved draft v%(number)s: %(count)s rules.",
                                            len(rules))
                         % {"number": version.number, "count": len(rules)})
        return go_to(request, version_url(version))

    def templates(self):
        return list(template_list())

    def replies_form(self, version, data=None) -> RepliesForm | None:
        """The replies' greeting and closing: the default policy's to edit (the replies use
        only its words), no other's."""
        if version.policy.code != ReturnPolicy.DEFAULT_CODE:
            return None
        if data is not None and not any(name.startswith("replies-") for name in data):
            return None  # a post without them (a script's) leaves the draft's as they are
        return RepliesForm.of(version.replies) if data is None else RepliesForm(data)

    def frozen(self, request, version):
        refused = PolicyVersionFrozen(version=version)
        page = version_page(request, version, error=refused, status=refused.http_status)
        if request.htmx:
            # The answer is the read-only version page, not an editor to swap in: replace the
            # whole of <main> with it.
            page["HX-Retarget"] = page["HX-Reselect"] = "main"
            page["HX-Reswap"] = "outerHTML"
        return page

    def editor(self, request, version, formset, *, replies=None, shown=None, rules_errors=(),
               status=200):
        return render(request, "timeline/policy_editor.html", {
            "policy": version.policy, "version": version, "formset": formset,
            "replies": replies,
            "forms": formset.forms if shown is None else shown, "rules_errors": rules_errors,
        }, status=status)
