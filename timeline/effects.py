"""What a queue button will do, in words: each step of the plan its service executes.

The plans come from the services themselves (refunds.services.compensation_decide.
approval_plan, refunds.services.refund_execute.execution_plan, coupons.services.cases.
resolution_plan): the panel beside a button says the rows that button then writes.
"""

from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _

from coupons.effects import Step
from timeline.glossary import COMPENSATION_KINDS, operation_words, state_words, worded
from timeline.templatetags.console import money


def step_sentence(step: Step) -> str:
    if step.kind == Step.ROW and step.from_state == step.to_state:
        if step.amount is not None:
            return format_html(_("Appends a {op} row paying {amount}; the coupon stays {state}."),
                               op=operation_words(step.op_type), amount=money(step.amount),
                               state=state_words(step.to_state))
        return format_html(_("Appends a {op} row; the coupon stays {state}."),
                           op=operation_words(step.op_type), state=state_words(step.to_state))
    if step.kind == Step.ROW:
        return format_html(_("Appends a {op} row: the coupon goes from {before} to {after}."),
                           op=operation_words(step.op_type), before=state_words(step.from_state),
                           after=state_words(step.to_state))
    if step.kind == Step.RECORD:
        return format_html(
            _("Opens a compensation of {amount} ({kind}) that a second operator approves or "
              "rejects; no ledger row until then."),
            amount=money(step.amount), kind=worded(step.record_kind, COMPENSATION_KINDS))
    return format_html(_("Issues the customer a new coupon from template #{template}."),
                       template=step.template_id)


def plan_sentences(plan) -> list[str]:
    """One sentence per step; a refusal says what the service would answer now."""
    if plan.refusal is not None:
        return [format_html(_("Refused now: {message} ({code})"),
                            message=str(plan.refusal.message), code=plan.refusal.code)]
    if not plan.steps:
        return [format_html(_("Nothing is written to the ledger; the coupon stays {state}."),
                            state=state_words(plan.state))]
    return [step_sentence(step) for step in plan.steps]


def plan_html(plan) -> str:
    return format_html_join(" ", "{}", ((sentence,) for sentence in plan_sentences(plan)))
