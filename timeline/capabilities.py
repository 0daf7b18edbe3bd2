"""What only the console does: capabilities of the `timeline` app, granted to the console's roles.

They sit beside the domain's (coupons.capabilities) and work the same way: one permission each,
checked by `ConsolePage.capabilities` and the navigation through `.perm`. The domains never see
them: notes, view records and exports are the console's own.
"""

from django.db import models


class ConsoleCapability(models.TextChoices):
    ADD_NOTES = "add_notes", "Write staff notes on coupons"
    VIEW_ACTIVITY = "view_activity", "See who viewed, did and was refused what"
    EXPORT_LISTS = "export_lists", "Export search results and queues as CSV"

    @property
    def perm(self) -> str:
        return f"timeline.{self.value}"


C = ConsoleCapability

# Support and operators write notes; operators and policy admins audit; operators, who work the
# queues as a team, take lists away.
CONSOLE_GROUPS = {
    "support": [C.ADD_NOTES],
    "operator": [C.ADD_NOTES, C.VIEW_ACTIVITY, C.EXPORT_LISTS],
    "policy_admin": [C.VIEW_ACTIVITY],
}


def can_read_notes(user) -> bool:
    """Staff notes are read by who may write them and by who sees case notes; others (policy
    admins) see that a note exists, not its text (as case notes, coupons.redaction)."""
    return user.has_perm(C.ADD_NOTES.perm) or user.has_perm("coupons.view_case_details")
