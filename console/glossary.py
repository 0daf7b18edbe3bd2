"""The domain's words in the reader's language: the one place pages take them from.

A state or an operation type is shown as its word followed by its code in a small badge
(`<abbr>` whose title says what it means): the code is what logs, tickets and other services
quote, the word is what a person reads. The Chinese words are those of
locale/zh_Hans/glossary.md; tests/console/test_glossary.py keeps the pages on them.
"""

from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from coupons.models import CouponStatus, OperationType

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


def operation_words(code: str) -> str:
    return worded(code, OPERATIONS)
