"""A reply support can paste into the customer chat, in Chinese first and in English.

Both come from the same facts as the check panel's answer (the coupon's state, its redemption,
the open conflict cases and the compensations they opened) and, for "my refund: do I get my
coupon back?", from the coupon's latest refund decision and the policy version that decided it.
Each sentence is one catalogue entry, written once per language under translation.override, so
the two replies say the same thing. Plain text: it is copied into another product.

A reply is what a 客服 would send: a greeting, the answer, a closing; times in the customer's
zone (COUPON_CUSTOMER_TIME_ZONE, Beijing time by default), never the agent's browser zone; the
reason a rule decided as the customer is told it (refunds.rule_labels.customer_reason: the rule's
label in the customer's language), not a policy version; Chinese sentences follow each other
with no space, as full-width punctuation is written.
"""

from django.conf import settings
from django.utils import formats, timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from coupons.diagnosis import CouponFacts
from coupons.models import CaseStatus, CouponStatus, Recommendation
from coupons.write.transitions import is_past_validity
from refunds.models import Compensation, RefundCoupon
from refunds.policy_selectors import replies_in_force
from refunds.reply_words import reply_words
from refunds.rule_labels import customer_reason, decided_rule
from refunds.selectors import CouponAfterSale
from timeline.templatetags.console import money
from timeline.time_zones import offset_label

# Chinese first: the floor this is for answers customers in Chinese. Each language with its own
# name and its name in the reader's language (the copy button says the latter).
LANGUAGES = (("zh-hans", "简体中文", pgettext_lazy("a reply's language", "Chinese")),
             ("en", "English", pgettext_lazy("a reply's language", "English")))
# What goes between two sentences: Chinese punctuation is full width and takes no space.
SENTENCE_GAP = {"zh-hans": "", "en": " "}
# A zone a customer knows by name; any other is written as its offset (UTC+9).
ZONE_NAMES = {"Asia/Shanghai": gettext_lazy("Beijing time")}


def customer_replies(coupon, now, after_sale: CouponAfterSale, facts: CouponFacts) -> dict:
    """{"state": [(language, name, text)], "refund": [...] or []} for the coupon page, from
    the page's reads: `after_sale`, the latest refund decision and the compensations
    (refunds.selectors.coupon_after_sale); `facts`, the coupon's cases and redemption
    (coupons.diagnosis.coupon_facts), each read once for both languages."""
    decision = after_sale.latest_decision
    cases = [case for case in facts.cases
             if case.status in (CaseStatus.OPEN, CaseStatus.RESOLVED)
             and case.recommendation == Recommendation.ORDER_DISCOUNT_REFUND]
    owed = {c.order_id: c for c in after_sale.discount_compensations}
    redemption = facts.redemption
    # The greeting and closing a policy admin wrote (the catalogue's until they do).
    words = replies_in_force(at=now)
    replies = {"refund": [], "state": []}
    with timezone.override(settings.COUPON_CUSTOMER_TIME_ZONE):
        for language, name, reader_name in LANGUAGES:
            with translation.override(language):
                if decision is not None:
                    replies["refund"].append((language, name, reader_name, _reply(
                        language, words, [_refund_sentence(decision)])))
                replies["state"].append((language, name, reader_name, _reply(
                    language, words, [_state_sentence(coupon, now, redemption),
                               *(_case_sentence(case, owed.get(case.order_id))
                                 for case in cases)])))
    return replies


def _reply(language: str, words: dict, sentences: list[str]) -> str:
    """The answer between a greeting and a closing, as a person writes to a customer."""
    return SENTENCE_GAP[language].join([
        reply_words(words, "greeting", language), *sentences,
        reply_words(words, "closing", language)])


def moment_text(moment) -> str:
    """A moment as the customer reads it: their zone named in words, the date in their
    language (2026年12月5日 13:49（北京时间） / Dec. 5, 2026 13:49 (Beijing time))."""
    if moment is None:
        return "—"
    local = timezone.localtime(moment)
    zone = ZONE_NAMES.get(timezone.get_current_timezone_name()) or offset_label(local)
    return _("%(date)s %(time)s (%(zone)s)") % {
        "date": formats.date_format(local, "DATE_FORMAT"), "time": f"{local:%H:%M}",
        "zone": zone}


def _state_sentence(coupon, now, redemption) -> str:
    status = coupon.status
    if status == CouponStatus.AVAILABLE:
        if coupon.valid_from is not None and now < coupon.valid_from:
            return _("Your coupon can be used from %(start)s.") % {
                "start": moment_text(coupon.valid_from)}
        if is_past_validity(coupon, now):
            return _("Your coupon expired at %(end)s and can no longer be used.") % {
                "end": moment_text(coupon.valid_until)}
        if coupon.valid_until:
            return _("Your coupon can be used now, until %(end)s.") % {
                "end": moment_text(coupon.valid_until)}
        return _("Your coupon can be used now.")
    if status == CouponStatus.LOCKED:
        return _("Your coupon is held by order %(order)s until %(end)s; if that order is not "
                 "paid, the coupon can be used again.") % {
            "order": coupon.locked_order_id, "end": moment_text(coupon.lock_expires_at)}
    if status == CouponStatus.USED:
        if redemption is not None:
            return _("Your coupon was used for order %(order)s at %(at)s.") % {
                "order": redemption.order_id, "at": moment_text(redemption.created_at)}
        return _("Your coupon has been used.")
    if status == CouponStatus.EXPIRED:
        return _("Your coupon expired at %(end)s and can no longer be used.") % {
            "end": moment_text(coupon.valid_until)}
    return _("Your coupon was cancelled and can no longer be used.")


def _case_sentence(case, compensation) -> str:
    """A paid order whose coupon another order took: its discount comes back as money."""
    if compensation is None:
        return _("Order %(order)s was paid after the coupon had moved on; we are checking it "
                 "and will refund that order's discount if it is owed.") % {
            "order": case.order_id}
    amount = money(compensation.amount)
    if compensation.status == Compensation.Status.APPROVED:
        return _("The discount of order %(order)s (%(amount)s) has been refunded to you.") % {
            "order": case.order_id, "amount": amount}
    if compensation.status == Compensation.Status.REJECTED:
        return _("The discount of order %(order)s is not refunded; support will explain "
                 "why.") % {"order": case.order_id}
    return _("The discount of order %(order)s (%(amount)s) will be refunded to you once it "
             "is approved.") % {"order": case.order_id, "amount": amount}


def _refund_sentence(decision) -> str:
    """Does the coupon come back, when and why: the decision with the reason its rule gives a
    customer."""
    done = decision.executed_action or ""
    facts = {"order": decision.order_id, "why": _reason(decision),
             "at": moment_text(decision.reviewed_at or decision.decided_at
                               or decision.received_at)}
    if decision.status == RefundCoupon.Status.AWAITING_REDEMPTION:
        return _("We have your refund for order %(order)s; whether the coupon comes back is "
                 "decided once the order's payment is settled.") % facts
    if decision.status == RefundCoupon.Status.PENDING_APPROVAL:
        return _("Your refund for order %(order)s is being reviewed; we will tell you whether "
                 "the coupon comes back.") % facts
    if decision.status == RefundCoupon.Status.REJECTED:
        return _("After the refund of order %(order)s your coupon stays used (reviewed at "
                 "%(at)s).") % facts
    if done == RefundCoupon.Action.RETURN:
        return _("After the refund of order %(order)s your coupon was returned to you at "
                 "%(at)s (reason: %(why)s).") % facts
    if done == RefundCoupon.Action.VOID:
        return _("After the refund of order %(order)s your coupon was cancelled at %(at)s "
                 "(reason: %(why)s).") % facts
    if done == RefundCoupon.Action.COMPENSATE:
        return _("After the refund of order %(order)s you are compensated instead of getting "
                 "the coupon back (reason: %(why)s).") % facts
    if done == RefundCoupon.Action.RELEASE_LOCK:
        return _("After the refund of order %(order)s the coupon was freed at %(at)s and can "
                 "be used again.") % facts
    return _("After the refund of order %(order)s your coupon stays used (reason: "
             "%(why)s).") % facts


def _reason(decision) -> str:
    """The rule's reason in the customer's words; a decision without one says who decided."""
    if decision.policy_version is None or not decision.rule_label:
        return _("our team decided it") if decision.reviewed_by else _(
            "our coupon return rules")
    return customer_reason(decided_rule(decision))
