"""The check panel's words: coupons.diagnosis's sentences written for a person in the console.

Times in the reader's zone with the zone shown; every order, case, refund decision and
compensation a link to where it is handled; no enum code in running text: a plain word, and the
code beside it in a small badge (`<abbr>` whose title says what it means), as the queues show
them.
"""

from django.urls import reverse
from django.utils.html import conditional_escape, format_html
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _

from coupons.diagnosis import Words
from coupons.models import Recommendation
from refunds.models import RefundCoupon
from timeline.glossary import STATES, worded
from timeline.time_zones import moment_text, utc_text

# A plain word for each code a sentence names, and what the code means (the badge's title);
# states and operations come from timeline.glossary.
RECOMMENDATIONS = {
    Recommendation.COMPENSATING_REDEEM: (
        _("use the coupon for the paid order now"),
        _("The coupon is free again and the order paid: lock and redeem it for the order.")),
    Recommendation.ORDER_DISCOUNT_REFUND: (
        _("refund the order its coupon discount"),
        _("Another order holds or used the coupon: the late order gets its discount back.")),
    Recommendation.SUBSTITUTE: (
        _("lock another coupon of the buyer for the order"),
        _("The presale deposit could not lock its coupon; another coupon of the buyer gives "
          "the order its discount.")),
    Recommendation.MANUAL_REVIEW: (
        _("a person decides"), _("No automatic remedy fits: an operator reviews the case.")),
}
ACTIONS = {
    RefundCoupon.Action.RETURN: (_("give the coupon back"),
                                 _("The coupon becomes available to the customer again.")),
    RefundCoupon.Action.KEEP_USED: (_("keep the coupon used"), _("Nothing changes.")),
    RefundCoupon.Action.VOID: (_("void the coupon"), _("The coupon is cancelled for good.")),
    RefundCoupon.Action.COMPENSATE: (_("compensate the customer"),
                                     _("A compensation is proposed for the customer.")),
    RefundCoupon.Action.MANUAL_REVIEW: (_("a person decides"),
                                        _("An operator chooses what happens.")),
    RefundCoupon.Action.RELEASE_LOCK: (_("release the lease"),
                                       _("The order's lease ends at once.")),
}


class ConsoleWords(Words):
    def say(self, sentence: str, **facts) -> str:
        # The translated sentence is text (escaped); the facts are escaped unless they are
        # this class's own HTML.
        return mark_safe(conditional_escape(sentence) % {
            name: conditional_escape(value) for name, value in facts.items()})

    def join(self, sentences) -> str:
        return mark_safe(" ".join(conditional_escape(s) for s in sentences))

    def moment(self, moment) -> str:
        if moment is None:
            return "—"
        return format_html('<time datetime="{}" title="{}">{}</time>', moment.isoformat(),
                           utc_text(moment), moment_text(moment))

    def order(self, order_id: str) -> str:
        return format_html('<a href="{}?{}">{}</a>', reverse("console:search"),
                           urlencode({"q": order_id}), order_id)

    def state(self, status: str) -> str:
        return worded(status, STATES)

    def case(self, case) -> str:
        shown = "open" if case.status == "OPEN" else "resolved"
        return format_html('<a href="{}?status={}#case-{}">#{}</a>', reverse("console:cases"),
                           shown, case.pk, case.pk)

    def recommendation(self, case) -> str:
        return worded(case.recommendation, RECOMMENDATIONS)

    def decision(self, decision) -> str:
        return format_html('<a href="{}?status=pending#decision-{}">#{}</a>',
                           reverse("console:approvals"), decision.pk, decision.pk)

    def action(self, action: str) -> str:
        return worded(action, ACTIONS)

    def compensation(self, compensation) -> str:
        return format_html('<a href="{}?status=proposed#compensation-{}">#{}</a>',
                           reverse("console:compensations"), compensation.pk, compensation.pk)
