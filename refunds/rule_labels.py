"""The default return policy's name and rule labels in the reader's language.

A policy's name and a rule's label are data: a policy admin writes them and they read as
written. The labels the default policy ships with (refunds/migrations/0002_return_policies.py)
are catalogue sentences, and a shipped label's English text is its code: a version that keeps
it, and every decision that stored it as its `rule_label`, reads in the reader's language; a
label an admin changed reads as they wrote it. Versions are never edited, so the shipped ones
need no new column. The shipped policy's name reads the same way until an admin renames it.
"""

from django.utils import translation
from django.utils.translation import gettext, gettext_noop

# The languages a rule's label pair is written in: the console's two.
LABEL_LANGUAGES = ("en", "zh-hans")

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


def shipped_pair(label: str) -> dict:
    """A single label as a pair, the way the editor first shows it: a shipped label in both of
    its catalogue languages, any other as stored in both."""
    pair = {}
    for language in LABEL_LANGUAGES:
        with translation.override(language):
            pair[language] = label_words(label)
    return pair


def _language(language: str | None) -> str:
    language = language or translation.get_language() or "en"
    return "zh-hans" if language.lower().startswith("zh") else "en"


def rule_words(rule: dict, language: str | None = None) -> str:
    """A rule's label in the reader's language: its pair's label for that language; a rule
    with a single label (versions written before pairs) as stored, a shipped one translated."""
    labels = rule.get("labels") or {}
    return labels.get(_language(language)) or label_words(rule.get("label") or "")


def decided_rule(decision) -> dict:
    """The rule a decision names, from the version it stored: the decision's label pair. A
    decision whose version no longer has that label there (it cannot happen to a published
    version, but a row may predate the column) reads as its stored label."""
    version = decision.policy_version
    rules = version.rules if version is not None else []
    index = decision.rule_index
    if index is not None and 0 <= index < len(rules) and (
            rules[index].get("label") == decision.rule_label):
        return rules[index]
    return {"label": decision.rule_label}


def customer_reason(rule: dict) -> str:
    """A rule's reason as a customer is told it: a shipped rule's customer words while its pair
    still says the shipped label, else its label in the customer's language, "" when the
    decision names no rule."""
    label = rule.get("label") or ""
    if label in CUSTOMER_REASONS and (not rule.get("labels")
                                      or rule["labels"] == shipped_pair(label)):
        return gettext(CUSTOMER_REASONS[label])
    return rule_words(rule)
