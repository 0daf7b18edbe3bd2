"""The domain's words in the reader's language: the one place pages take them from.

A state or an operation type is shown as its word followed by its code in a small badge
(`<abbr>` whose title says what it means): the code is what logs, tickets and other services
quote, the word is what a person reads. The Chinese words are those of
locale/zh_Hans/glossary.md; tests/timeline/test_glossary.py keeps the pages on them.
"""

from django.utils.html import format_html
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from coupons.capabilities import Capability
from coupons.models import CouponKind, CouponStatus, OperationType

STATES = {
    CouponStatus.AVAILABLE: (pgettext_lazy("coupon state", "available"),
                             _("Can be locked by an order.")),
    CouponStatus.LOCKED: (pgettext_lazy("coupon state", "locked"),
                          _("Held by an order's lease.")),
    CouponStatus.USED: (pgettext_lazy("coupon state", "used"), _("Redeemed by a paid order.")),
    CouponStatus.EXPIRED: (pgettext_lazy("coupon state", "expired"), _("Its validity ended.")),
    CouponStatus.VOID: (pgettext_lazy("coupon state", "void"), _("Cancelled for good.")),
}
OPERATIONS = {
    OperationType.ISSUE: (pgettext_lazy("ledger operation", "issue"),
                          _("The coupon was given to the user.")),
    OperationType.LOCK: (pgettext_lazy("ledger operation", "lock"),
                         _("An order took the coupon's lease at checkout.")),
    OperationType.RENEW: (pgettext_lazy("ledger operation", "renew"),
                          _("The order extended its lease.")),
    OperationType.REDEEM: (pgettext_lazy("ledger operation", "redeem"),
                           _("A paid order used the coupon.")),
    OperationType.RELEASE: (pgettext_lazy("ledger operation", "release"),
                            _("The lease ended and the coupon is free again.")),
    OperationType.EXPIRE: (pgettext_lazy("ledger operation", "expire"),
                           _("The coupon's validity ended.")),
    OperationType.VOID: (pgettext_lazy("ledger operation", "void"),
                         _("The coupon was cancelled for good.")),
    OperationType.RETURN: (pgettext_lazy("ledger operation", "return"),
                           _("A refund gave the coupon back.")),
    OperationType.REVERSE: (pgettext_lazy("ledger operation", "reverse"),
                            _("An earlier operation was undone.")),
    OperationType.COMPENSATE: (pgettext_lazy("ledger operation", "compensate"),
                               _("An amount was paid; the coupon keeps its state.")),
}

KINDS = {
    CouponKind.AMOUNT_OFF: (pgettext_lazy("coupon kind", "amount off"),
                            _("A fixed amount off an order above a threshold.")),
    CouponKind.PERCENT_OFF: (pgettext_lazy("coupon kind", "percent off"),
                             _("A share of the order off, up to a cap.")),
    CouponKind.EXCHANGE: (pgettext_lazy("coupon kind", "exchange"),
                          _("One item for the coupon.")),
}

# The console's groups: their names are codes (permissions and tests name them); the header says
# the reader's word for them.
ROLES = {
    "support": pgettext_lazy("role", "support"),
    "operator": pgettext_lazy("role", "operator"),
    "policy_admin": pgettext_lazy("role", "policy admin"),
}

# The capabilities' labels are English in the code (they name the permissions); a page says
# them in the reader's language.
CAPABILITIES = {
    Capability.READ: _("Read coupons, their history, checks and timelines"),
    Capability.ISSUE: _("Issue coupons to users"),
    Capability.LOCK: _("Lock coupons for orders"),
    Capability.RENEW: _("Renew an order's coupon lease"),
    Capability.REDEEM: _("Redeem a locked coupon"),
    Capability.RELEASE: _("Release an order's coupon lease"),
    Capability.VOID: _("Void coupons (with a reason)"),
    Capability.MANAGE_TEMPLATES: _("Create and edit coupon templates"),
    Capability.POST_FACTS: _("Send order, payment and refund facts"),
    Capability.SEND_REFUNDS: _("Send refunds for a coupon decision"),
    Capability.RESOLVE_CASES: _("See and resolve conflict cases"),
    Capability.VIEW_CASE_DETAILS: _("See case notes and compensation amounts"),
    Capability.APPROVE_REFUNDS: _("Approve or reject refund decisions"),
    Capability.PROPOSE_COMPENSATION: _("Propose compensations"),
    Capability.APPROVE_COMPENSATION: _("Approve or reject others' compensations"),
    Capability.EDIT_POLICIES: _("Edit and publish return policies"),
    Capability.PROPOSE_GOODWILL: _("Propose goodwill coupons for customers"),
    Capability.APPROVE_GOODWILL: _("Approve or reject others' goodwill coupons"),
}


def choices(words: dict) -> list:
    """A form's choices for codes: the word, then the code in brackets (a choice's label is
    text, so the code cannot be a badge there)."""
    return [(code, format_lazy("{} ({})", word, code)) for code, (word, _meaning) in words.items()]


def code_badge(code: str, meaning) -> str:
    return format_html('<span class="code-badge"><abbr title="{}">{}</abbr></span>',
                       meaning, code)


def worded(code: str, words: dict) -> str:
    """A code as a plain word followed by its badge; an unknown code as its badge alone."""
    if code not in words:
        return code_badge(code, code)
    word, meaning = words[code]
    return format_html("{} {}", word, code_badge(code, meaning))


def state_words(code: str) -> str:
    return worded(code, STATES)


def state_badge(code: str) -> str:
    """A coupon's state as a headline shows it: the word, then the code in its coloured
    badge."""
    if code not in STATES:
        return format_html('<span class="badge badge-{}">{}</span>', str(code).lower(), code)
    word, meaning = STATES[code]
    return format_html('{} <span class="badge badge-{}"><abbr title="{}">{}</abbr></span>',
                       word, str(code).lower(), meaning, code)


def operation_words(code: str) -> str:
    return worded(code, OPERATIONS)
