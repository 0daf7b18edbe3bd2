"""The default return policy's name and rule labels in the reader's language.

A policy's name and a rule's label are data: a policy admin writes them and they read as
written. The labels the default policy ships with (refunds/migrations/0002_return_policies.py)
are catalogue sentences, and a shipped label's English text is its code: a version that keeps
it, and every decision that stored it as its `rule_label`, reads in the reader's language; a
label an admin changed reads as they wrote it. Versions are never edited, so the shipped ones
need no new column. The shipped policy's name reads the same way until an admin renames it.
"""

from django.utils.translation import gettext, gettext_noop

SHIPPED = frozenset({
    gettext_noop("Exchange coupons are one-time: they stay used"),
    gettext_noop("The template says its coupons are not returned"),
    gettext_noop("Partial refunds keep the coupon used"),
    gettext_noop("Risk-flagged refunds are reviewed by an operator"),
    gettext_noop("Full refund within 30 days of redemption returns the coupon"),
    gettext_noop("Otherwise the coupon stays used"),
})


def label_words(label: str) -> str:
    """A rule's label in the active language when it is a shipped one, else as written."""
    return gettext(label) if label in SHIPPED else label


SHIPPED_NAMES = frozenset({gettext_noop("Default return policy")})


def policy_name_words(name: str) -> str:
    """A policy's name in the active language when it is the shipped one, else as written."""
    return gettext(name) if name in SHIPPED_NAMES else name


# What a customer is told as the reason a shipped rule decided their coupon: the words they
# would accept ("partly refunded"), not the rule's label or its policy version.
CUSTOMER_REASONS = {
    "Exchange coupons are one-time: they stay used":
        gettext_noop("exchange coupons can be used only once"),
    "The template says its coupons are not returned":
        gettext_noop("this kind of coupon is not returned after a refund"),
    "Partial refunds keep the coupon used": gettext_noop("the order was only partly refunded"),
    "Risk-flagged refunds are reviewed by an operator":
        gettext_noop("the refund was reviewed by our team"),
    "Full refund within 30 days of redemption returns the coupon":
        gettext_noop("the order was fully refunded soon after the coupon was used"),
    "Otherwise the coupon stays used": gettext_noop("our coupon return rules"),
}


def customer_reason(label: str) -> str:
    """A rule's reason as a customer is told it: a shipped rule's customer words, an admin's
    label as written, "" when the decision names no rule."""
    if label in CUSTOMER_REASONS:
        return gettext(CUSTOMER_REASONS[label])
    return label or ""
