"""The only code that changes a coupon's state. Everything else calls these functions.

Each command is one `transaction.atomic()`: a savepoint in the API's transaction, which also
holds the Idempotency-Key claim and answer (a refused command rolls back to it, and its refusal
commits with the key's answer); a savepoint too when the inbox runs it, because a fact's
de-duplication row must commit together with every command the fact caused (and a SUBSTITUTE
final payment causes several); the outermost transaction when called alone (scanners).
"""

from coupons.services.clients import service_client_create
from coupons.services.expire import coupon_expire
from coupons.services.issue import coupon_issue
from coupons.services.lock import coupon_lock
from coupons.services.redeem import coupon_redeem
from coupons.services.release import coupon_release
from coupons.services.renew import coupon_renew
from coupons.services.templates import template_create, template_update
from coupons.services.void import coupon_void
from coupons.write.context import CommandContext, LeaseProof

__all__ = [
    "CommandContext",
    "LeaseProof",
    "coupon_expire",
    "coupon_issue",
    "coupon_lock",
    "coupon_redeem",
    "coupon_release",
    "coupon_renew",
    "coupon_void",
    "service_client_create",
    "template_create",
    "template_update",
]
