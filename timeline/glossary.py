"""The domain's words in the reader's language: the one place pages take them from.

A state or an operation type is shown as its word followed by its code in a small badge
(`<abbr>` whose title says what it means): the code is what logs, tickets and other services
quote, the word is what a person reads. The Chinese words are those of
locale/zh_Hans/glossary.md; tests/timeline/test_glossary.py keeps the pages on them.
"""

from django.utils.html import format_html, format_html_join
from django.utils.text import format_lazy
from django.utils.translation import get_language, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from coupons.capabilities import Capability
from coupons.models import Channel, CouponKind, CouponStatus, OperationType

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

# Where an order is served: a template's scope names one, or none for every channel.
CHANNELS = {
    Channel.DINE_IN: (pgettext_lazy("channel", "dine-in"), _("Eaten at the store.")),
    Channel.DELIVERY: (pgettext_lazy("channel", "delivery"),
                       _("Delivered to the customer.")),
    Channel.TAKEAWAY: (pgettext_lazy("channel", "takeaway"),
                       _("Collected at the store by the customer.")),
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


def scope_words(terms) -> str:
    """Where a coupon of these terms applies: its stores (their ids) or every store, then its
    channel as a word with its code, or every channel."""
    if terms.stores:
        ids = format_html_join(str(_(", ")), "<code>{}</code>",
                               ((store,) for store in terms.stores))
        stores = format_html(str(_("Stores {}")), ids)
    else:
        stores = _("All stores")
    channel = worded(terms.channel, CHANNELS) if terms.channel else _("Every channel")
    return format_html(str(_("{stores}; {channel}")), stores=stores, channel=channel)


# A fact the order and payment systems sent (the timeline's and the queues' titles).
FACTS = {
    "PaymentSucceeded": (pgettext_lazy("order fact", "payment succeeded"),
                         _("The payment system says the order was paid.")),
    "PaymentFailed": (pgettext_lazy("order fact", "payment failed"),
                      _("The payment system says the order's payment failed.")),
    "OrderClosed": (pgettext_lazy("order fact", "order closed"),
                    _("The order system closed the order unpaid.")),
    "DepositPaid": (pgettext_lazy("order fact", "deposit paid"),
                    _("A presale order's deposit was paid.")),
    "FinalPaymentSucceeded": (pgettext_lazy("order fact", "final payment succeeded"),
                              _("A presale order's final payment went through.")),
    "RefundSucceeded": (pgettext_lazy("order fact", "refund succeeded"),
                        _("The payment system refunded the order.")),
}

def fact_text(code: str) -> str:
    """A fact's name inside a stored sentence: the word where the reader's language is not
    English; in English the code, as the sentence was stored (the record's own words)."""
    if code not in FACTS or (get_language() or "en").startswith("en"):
        return code
    return str(FACTS[code][0])


CASE_STATUSES = {
    "OPEN": (pgettext_lazy("case status", "open"), _("Waits for an operator.")),
    "RESOLVED": (pgettext_lazy("case status", "resolved"), _("An operator resolved it.")),
    "DISMISSED": (pgettext_lazy("case status", "dismissed"),
                  _("An operator closed it without a remedy.")),
}


# Why a command was refused, in a few words; the refusal's own sentence says the rest.
ERRORS = {
    "TOKEN_MISMATCH": (_("not the current lease"),
                       _("The lease token does not prove the coupon's current lease.")),
    "INVALID_STATE": (_("not allowed in this state"),
                      _("The coupon is not in a state that allows this command.")),
    "ORDER_MISMATCH": (_("another order holds it"), _("The coupon is held by another order.")),
    "VERSION_CONFLICT": (_("changed meanwhile"),
                         _("The coupon changed since the caller read it.")),
    "COUPON_EXPIRED": (_("expired"), _("The coupon's validity has ended.")),
    "COUPON_NOT_YET_VALID": (_("not valid yet"), _("The coupon's validity has not started.")),
    "THRESHOLD_NOT_MET": (_("order below the minimum"),
                          _("The order amount is below the coupon's minimum.")),
    "NOT_COUPON_OWNER": (_("not the owner's coupon"),
                         _("The coupon belongs to another user.")),
    "COUPON_BUSY": (_("busy, retry"), _("Another command held the coupon; retry later.")),
    "NO_BINDING": (_("no coupon for the order"), _("No coupon is bound to the order.")),
}

REFUND_TYPES = {
    "FULL": (pgettext_lazy("refund type", "full"), _("The whole order was refunded.")),
    "PARTIAL": (pgettext_lazy("refund type", "partial"), _("Part of the order was refunded.")),
}

DECISION_STATUSES = {
    "AWAITING_REDEMPTION": (pgettext_lazy("refund decision status", "awaiting the payment"),
                            _("Decided once the order's redemption is known.")),
    "DECIDED": (pgettext_lazy("refund decision status", "decided"),
                _("Decided; nothing to execute.")),
    "PENDING_APPROVAL": (pgettext_lazy("refund decision status", "waiting for approval"),
                         _("An operator approves or rejects it.")),
    "EXECUTED": (pgettext_lazy("refund decision status", "executed"),
                 _("The coupon decision was carried out.")),
    "REJECTED": (pgettext_lazy("refund decision status", "rejected"),
                 _("An operator rejected it; the coupon kept its state.")),
}

COMPENSATION_KINDS = {
    "PRESALE_EXPIRED_COUPON": (_("presale coupon expired"),
                               _("A presale order's coupon expired before its final payment.")),
    "ORDER_DISCOUNT_REFUND": (_("order discount refund"),
                              _("A paid order gets its coupon discount back.")),
    "REFUND_CREDIT": (_("refund credit"), _("A return policy gave a credit.")),
    "REVERSE_OPERATION": (_("undo an operation"),
                          _("Restores the coupon's state before the operation.")),
    "MONEY": (_("an amount owed"), _("An amount is paid; the coupon keeps its state.")),
}

COMPENSATION_STATUSES = {
    "PROPOSED": (pgettext_lazy("compensation status", "proposed"),
                 _("Waits for a second operator.")),
    "APPROVED": (pgettext_lazy("compensation status", "approved"), _("Approved and carried out.")),
    "REJECTED": (pgettext_lazy("compensation status", "rejected"), _("Rejected; nothing done.")),
}

# The names of stored details and evidence (a timeline entry's, a case's, a refund decision's
# facts): the reader's word, the key on hover.
KEYS = {
    "occurred_at": _("occurred at"),
    "payment_id": _("payment id"),
    "refund_id": _("refund id"),
    "lock_id": _("lock id"),
    "order_lock_id": _("the order's lock id"),
    "operation_id": _("operation"),
    "message_id": _("message id"),
    "reason": _("reason"),
    "message": _("message"),
    "summary": _("summary"),
    "note": _("note"),
    "resolution_note": _("note"),
    "decision_note": _("note"),
    "amount": _("amount"),
    "coupon_share": _("coupon's share"),
    "policy": _("return policy"),
    "rule": _("rule"),
    "strategy": _("strategy"),
    "discount_amount": _("discount"),
    "substitute_coupon_id": _("substitute coupon"),
    "refused_with": _("refused with"),
    "coupon_state": _("coupon state"),
    "coupon_version": _("coupon version"),
    "order_discount": _("order discount"),
    "order_amount": _("order amount"),
    "error_details": _("error details"),
    "final_payment_deadline": _("final payment deadline"),
    "refund_type": _("refund type"),
    "refunded_share": _("refunded share"),
    "coupon_expired": _("coupon past its validity"),
    "template_kind": _("coupon kind"),
    "template_returnable": _("template returnable"),
    "campaign_closed": _("campaign closed"),
    "risk_flag": _("risk flagged"),
    "days_since_redemption": _("days since redemption"),
    "face_value": _("face value"),
}


def key_words(key: str) -> str:
    """A stored key as the reader's word, the key itself on hover (an unknown one as code)."""
    if key not in KEYS:
        return format_html("<code>{}</code>", key)
    return format_html('<span title="{}">{}</span>', key, KEYS[key])


# Every word list by what it names, for the few values whose kind is only known at run time.
VALUE_WORDS = (STATES, OPERATIONS, ERRORS, REFUND_TYPES, KINDS)


def value_words(value) -> str:
    """A stored value as a reader sees it: yes or no for a flag, a code as its word and badge,
    anything else as it is."""
    if value is True or value is False:
        return str(_("yes") if value else _("no"))
    if isinstance(value, str):
        for words in VALUE_WORDS:
            if value in words:
                return worded(value, words)
    return value


# The coupon check's evidence invariants as a 客服 reads them: what they promise, not how the
# journal proves it. The engineering sentence (coupons.evidence.replay.INVARIANTS, which the API
# answers) stays on the page behind a disclosure.
INVARIANT_WORDS = {
    8: _("Every message we received about this coupon's orders is kept exactly as it arrived."),
    9: _("Every record about this coupon (its uses, refunds, notes, compensations and cases) is "
         "kept exactly as it was written."),
}
