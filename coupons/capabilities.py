"""What a caller may do: one Django permission per capability, never `is_staff` as a pass.

Console users get capabilities through their groups (made by migration 0003); a service client
holds the ones it was granted (`create_service_client NAME --allow lock,redeem`). The codenames
are permissions of the `coupons` app, so `user.has_perm(Capability.VOID.perm)` works as usual.
"""

from django.db import models


class Capability(models.TextChoices):
    READ = "read_coupons", "Read coupons, their history, checks and timelines"
    ISSUE = "issue_coupon", "Issue coupons to users"
    LOCK = "lock_coupon", "Lock coupons for orders"
    RENEW = "renew_coupon", "Renew an order's coupon lease"
    REDEEM = "redeem_coupon", "Redeem a locked coupon"
    RELEASE = "release_coupon", "Release an order's coupon lease"
    VOID = "void_coupon", "Void coupons (with a reason)"
    MANAGE_TEMPLATES = "manage_templates", "Create and edit coupon templates"
    POST_FACTS = "post_facts", "Send order, payment and refund facts"
    SEND_REFUNDS = "send_refunds", "Send refunds for a coupon decision"
    RESOLVE_CASES = "resolve_cases", "See and resolve conflict cases"
    VIEW_CASE_DETAILS = "view_case_details", "See case notes and compensation amounts"
    APPROVE_REFUNDS = "approve_refunds", "Approve or reject refund decisions"
    PROPOSE_COMPENSATION = "propose_compensation", "Propose compensations"
    APPROVE_COMPENSATION = "approve_compensation", "Approve or reject others' compensations"
    EDIT_POLICIES = "edit_policies", "Edit and publish return policies"
    PROPOSE_GOODWILL = "propose_goodwill", "Propose goodwill coupons for customers"
    APPROVE_GOODWILL = "approve_goodwill", "Approve or reject others' goodwill coupons"

    @property
    def perm(self) -> str:
        return f"coupons.{self.value}"


C = Capability

# The console's roles (docs/api.md). Support reads; operators decide after-sale
# questions and void with a reason; policy admins keep templates and return policies.
GROUPS = {
    "support": [C.READ, C.PROPOSE_GOODWILL],
    "operator": [
        C.READ, C.VOID, C.RESOLVE_CASES, C.VIEW_CASE_DETAILS, C.APPROVE_REFUNDS,
        C.PROPOSE_COMPENSATION, C.APPROVE_COMPENSATION, C.PROPOSE_GOODWILL, C.APPROVE_GOODWILL,
    ],
    "policy_admin": [C.READ, C.MANAGE_TEMPLATES, C.EDIT_POLICIES],
}

# What `--allow` names for a service client. Machines never resolve, approve or edit policies:
# those are people's decisions.
CLIENT_GRANTS = {
    "read": C.READ,
    "issue": C.ISSUE,
    "lock": C.LOCK,
    "renew": C.RENEW,
    "redeem": C.REDEEM,
    "release": C.RELEASE,
    "void": C.VOID,
    "templates": C.MANAGE_TEMPLATES,
    "refunds": C.SEND_REFUNDS,
}
