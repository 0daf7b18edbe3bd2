"""A plain-language answer to "why can't I use my coupon?" and what support should do.

The sentences are built from the facts; how a fact is written is the reader's: `Words` writes
for the API (ISO times, ids and codes as they are), the console passes its own (times in the
reader's zone, every order, case, decision and compensation a link, codes in a badge beside a
plain word: timeline/answers.py). `pending` says what waits for a person now (a refund
decision for approval, a compensation for a second operator), whatever the coupon's state:
after-sale reads those rows (refunds.selectors.waiting_on_people) and the caller passes them in.
`refund` answers "do I get my coupon back?" from the coupon's latest refund decision, which
after-sale reads and words as a `RefundAnswer` (refunds.selectors.refund_answer) for the caller
to pass in the same way. `presale` explains what the final payment of a presale order did with
the coupon (its PresaleSettlement), the template's strategy named.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.utils.translation import gettext as _

from coupons.ledger_reasons import reason_words
from coupons.models import (
    CaseStatus,
    ConflictCase,
    CouponOperation,
    CouponStatus,
    OperationType,
    PresaleSettlement,
    Redemption,
    SettlementResult,
    UserCoupon,
)
from coupons.write.payloads import iso
from coupons.write.transitions import is_past_validity


@dataclass(frozen=True)
class Waiting:
    """After-sale's rows of the coupon that wait for a person, oldest first: refund decisions
    for an operator's approval, compensations for a second operator's."""

    decisions: Sequence
    compensations: Sequence


class RefundOutcome:
    """What the latest refund decision did or will do with the coupon, as after-sale maps its
    decision's status and executed action (refunds.selectors.refund_answer)."""

    AWAITING_PAYMENT = "AWAITING_PAYMENT"  # decided once the order's payment is settled
    IN_REVIEW = "IN_REVIEW"  # an operator approves or rejects the policy's action
    RETURNED = "RETURNED"
    FREED = "FREED"  # a refunded deposit's lease ended: the coupon is usable again
    VOIDED = "VOIDED"
    COMPENSATED = "COMPENSATED"
    STAYS_USED = "STAYS_USED"  # the policy kept it used
    REJECTED = "REJECTED"  # an operator rejected the policy's action: it stays used
    COMES_BACK = {AWAITING_PAYMENT: None, IN_REVIEW: None, RETURNED: True, FREED: True,
                  VOIDED: False, COMPENSATED: False, STAYS_USED: False, REJECTED: False}


@dataclass(frozen=True)
class RefundAnswer:
    """The coupon's latest refund decision: `decision` the row (for Words.decision), `at` when
    it was last decided, `policy` and `policy_version` the version that decided it (None: an
    operator's decision)."""

    decision: object
    order_id: str
    outcome: str
    at: object | None
    policy: str | None = None
    policy_version: int | None = None


@dataclass(frozen=True)
class CouponFacts:
    """The coupon's rows its answer is made of: every conflict case (newest first, as the
    model orders them), the successful redemption of a USED coupon, the latest RELEASE of
    an EXPIRED one or the VOID of a voided one, and the settlement of the presale order
    whose deposit locked it."""

    cases: Sequence
    redemption: object | None
    last_operation: CouponOperation | None
    settlement: PresaleSettlement | None = None


LAST_OPERATION = {CouponStatus.EXPIRED: OperationType.RELEASE,
                  CouponStatus.VOID: OperationType.VOID}


def _first_each(model, coupon_ids: list[int], order: str, **match) -> QuerySet:
    """The primary key of each coupon's first row of `model` in `order` that matches: a
    LIMIT 1 subquery a coupon on the model's coupon index, all in one query."""
    first = model.objects.filter(coupon=OuterRef("pk"), **match).order_by(order).values("pk")
    return UserCoupon.objects.filter(pk__in=coupon_ids).values(first=Subquery(first[:1]))


def coupons_facts(coupons: Sequence) -> dict[int, CouponFacts]:
    """{coupon id: its facts} for several coupons read at once: their cases and their presale
    settlements one query each, then the successful redemptions of the USED ones and the last
    operations of the EXPIRED and VOID ones one query each if there are any. At most four
    queries whatever the number of coupons or the histories' lengths."""
    ids = [coupon.pk for coupon in coupons]
    cases: dict[int, list] = {}
    for case in ConflictCase.objects.filter(coupon__in=ids):
        cases.setdefault(case.coupon_id, []).append(case)
    settlements = {settlement.coupon_id: settlement for settlement in
                   PresaleSettlement.objects.filter(
                       pk__in=_first_each(PresaleSettlement, ids, "-pk"))}
    used = [coupon.pk for coupon in coupons if coupon.status == CouponStatus.USED]
    redemptions = {redemption.coupon_id: redemption for redemption in Redemption.objects.filter(
        pk__in=_first_each(Redemption, used, "pk", succeeded=True))} if used else {}
    ended = Q()
    for status, op_type in LAST_OPERATION.items():
        of_status = [coupon.pk for coupon in coupons if coupon.status == status]
        if of_status:
            ended |= Q(pk__in=_first_each(CouponOperation, of_status, "-to_version",
                                          op_type=op_type))
    last = {op.coupon_id: op for op in CouponOperation.objects.filter(ended)} if ended else {}
    return {coupon.pk: CouponFacts(cases=cases.get(coupon.pk, []),
                                   redemption=redemptions.get(coupon.pk),
                                   last_operation=last.get(coupon.pk),
                                   settlement=settlements.get(coupon.pk))
            for coupon in coupons}


def coupon_facts(coupon) -> CouponFacts:
    """One coupon's facts: two queries, three for a USED, EXPIRED or VOID coupon."""
    return coupons_facts([coupon])[coupon.pk]


class Words:
    """How the API writes the facts of a sentence: as the data has them."""

    def say(self, sentence: str, **facts) -> str:
        return sentence % facts

    def join(self, sentences) -> str:
        return " ".join(sentences)

    def moment(self, moment) -> str:
        return iso(moment) or ""

    def order(self, order_id: str) -> str:
        return order_id

    def state(self, status: str) -> str:
        return status

    def case(self, case) -> str:
        return f"#{case.pk}"

    def recommendation(self, case) -> str:
        return case.recommendation

    def decision(self, decision) -> str:
        return f"#{decision.pk}"

    def action(self, action: str) -> str:
        return action

    def compensation(self, compensation) -> str:
        return f"#{compensation.pk}"

    def money(self, amount) -> str:
        return f"{amount:.2f}"


def coupon_diagnosis(coupon, now, words: Words | None = None, *, waiting: Waiting,
                     refund: RefundAnswer | None = None, facts: CouponFacts | None = None,
                     refund_decision=None) -> dict:
    """`facts`: the coupon's rows when the caller read them with its own (the console's
    page); read here otherwise. `refund`: after-sale's answer of the coupon's latest refund
    decision, None when no refund names the coupon (the API). `refund_decision`: the coupon's
    latest refund decision when the caller answers the refund question itself (the console,
    first in its panel): then the advice to go and look for one is not given."""
    words = words or Words()
    facts = facts or coupon_facts(coupon)
    verdict, action = _verdict(coupon, now, words, facts)
    if refund_decision is not None and coupon.status == CouponStatus.USED:
        action = words.say(_("Refund decision %(decision)s for order %(order)s answers whether "
                             "the coupon comes back: give the customer its reply."),
                           decision=words.decision(refund_decision),
                           order=words.order(refund_decision.order_id))
    cases = [case for case in reversed(facts.cases) if case.status == CaseStatus.OPEN]
    if cases:
        # Whole sentences joined by a space: each one is translated with its own placeholders.
        verdict = words.join([verdict, *(
            words.say(_("Conflict case %(case)s is open for order %(order)s: %(summary)s"),
                      case=words.case(case), order=words.order(case.order_id),
                      summary=case.summary_text)
            for case in cases)])
        action = words.join([words.say(
            _("An operator must resolve conflict case %(case)s (recommended: "
              "%(recommendation)s)."),
            case=words.case(cases[0]), recommendation=words.recommendation(cases[0])), action])
    return {
        "can_use_now": coupon.status == CouponStatus.AVAILABLE and _in_window(coupon, now),
        "verdict": verdict,
        "support_action": action,
        "pending": _pending(waiting, words),
        "open_case_ids": [case.pk for case in cases],
        "refund": _refund(refund, words),
        "presale": _presale(coupon, facts.settlement, words),
    }


def _refund(answer: RefundAnswer | None, words: Words) -> dict | None:
    """Does the coupon come back after the refund, and why: the latest decision's outcome."""
    if answer is None:
        return None
    say = words.say
    facts = {"decision": words.decision(answer.decision), "order": words.order(answer.order_id),
             "at": words.moment(answer.at)}
    if answer.policy is None:
        why = _("an operator decided it.")
    else:
        why = say(_("return policy %(policy)s, version %(number)s, decided it."),
                  policy=answer.policy, number=answer.policy_version)
    sentences = {
        RefundOutcome.AWAITING_PAYMENT: _(
            "Refund decision %(decision)s for order %(order)s: whether the coupon comes back "
            "is decided once the order's payment is settled."),
        RefundOutcome.IN_REVIEW: _(
            "Refund decision %(decision)s for order %(order)s waits for an operator: whether "
            "the coupon comes back is not decided yet."),
        RefundOutcome.RETURNED: _(
            "After the refund of order %(order)s the coupon was given back at %(at)s "
            "(decision %(decision)s): %(why)s"),
        RefundOutcome.FREED: _(
            "After the refund of order %(order)s the coupon's lease ended at %(at)s and it can "
            "be used again (decision %(decision)s)."),
        RefundOutcome.VOIDED: _(
            "After the refund of order %(order)s the coupon was voided at %(at)s (decision "
            "%(decision)s): %(why)s"),
        RefundOutcome.COMPENSATED: _(
            "After the refund of order %(order)s the customer is compensated instead of getting "
            "the coupon back (decision %(decision)s): %(why)s"),
        RefundOutcome.REJECTED: _(
            "After the refund of order %(order)s the coupon stays used: an operator rejected "
            "the policy's action at %(at)s (decision %(decision)s)."),
        RefundOutcome.STAYS_USED: _(
            "After the refund of order %(order)s the coupon stays used (decision "
            "%(decision)s): %(why)s"),
    }
    return {
        "decision_id": answer.decision.pk,
        "order_id": answer.order_id,
        "outcome": answer.outcome,
        "coupon_comes_back": RefundOutcome.COMES_BACK[answer.outcome],
        "answer": say(sentences[answer.outcome], why=why, **facts),
    }


def _presale(coupon, settlement: PresaleSettlement | None, words: Words) -> dict | None:
    """What the final payment of the presale order that locked the coupon did with it."""
    if settlement is None:
        return None
    say = words.say
    facts = {"order": words.order(settlement.order_id), "at": words.moment(settlement.settled_at),
             "end": words.moment(coupon.valid_until), "strategy": settlement.strategy,
             "discount": words.money(settlement.discount_amount)}
    result = settlement.result
    if result == SettlementResult.REDEEMED:
        answer = say(_("The final payment of presale order %(order)s used the coupon at %(at)s: "
                       "the order got its discount of %(discount)s."), **facts)
    elif result == SettlementResult.PAID_IN_FULL:
        answer = say(_("The final payment of presale order %(order)s came at %(at)s, after the "
                       "coupon's validity ended at %(end)s, so under %(strategy)s the coupon "
                       "gave no discount and the order paid full price."), **facts)
        if settlement.amount_charged is not None:
            answer = words.join([answer, say(_("The order service says it charged "
                                               "%(charged)s."),
                                             charged=words.money(settlement.amount_charged))])
    elif result == SettlementResult.SUBSTITUTED:
        answer = say(_("The final payment of presale order %(order)s came at %(at)s, after the "
                       "coupon's validity ended at %(end)s; under %(strategy)s coupon "
                       "%(substitute)s gave the order its discount of %(discount)s instead."),
                     substitute=f"#{settlement.substitute_id}", **facts)
    else:
        answer = say(_("The final payment of presale order %(order)s came at %(at)s, after the "
                       "coupon's validity ended at %(end)s; under %(strategy)s no other coupon "
                       "of the buyer fitted, so the order is owed its discount of %(discount)s "
                       "as a compensation."), **facts)
    return {
        "order_id": settlement.order_id,
        "result": result,
        "strategy": settlement.strategy,
        "discount_amount": f"{settlement.discount_amount:.2f}",
        "amount_charged": (None if settlement.amount_charged is None
                           else f"{settlement.amount_charged:.2f}"),
        "answer": answer,
    }


def _pending(waiting: Waiting, words: Words) -> list[str]:
    """One sentence per refund decision or compensation that waits for a person."""
    return [
        *(words.say(_("Refund decision %(decision)s for order %(order)s waits for an "
                      "operator's approval (the policy says: %(action)s)."),
                    decision=words.decision(d), order=words.order(d.order_id),
                    action=words.action(d.action))
          for d in waiting.decisions),
        *(words.say(_("Compensation %(compensation)s for order %(order)s was proposed by "
                      "%(person)s and waits for a second operator to approve it."),
                    compensation=words.compensation(c), order=words.order(c.order_id or "—"),
                    person=c.created_by)
          for c in waiting.compensations),
    ]


def _in_window(coupon, now) -> bool:
    started = coupon.valid_from is None or coupon.valid_from <= now
    return started and not is_past_validity(coupon, now)


def _verdict(coupon, now, words: Words, facts: CouponFacts) -> tuple[str, str]:
    status = coupon.status
    say, moment, order = words.say, words.moment, words.order
    if status == CouponStatus.AVAILABLE:
        if coupon.valid_from is not None and now < coupon.valid_from:
            return (say(_("Not usable yet: valid from %(start)s."),
                        start=moment(coupon.valid_from)),
                    _("Tell the customer when it starts."))
        if is_past_validity(coupon, now):
            return (say(_("Expired at %(end)s; the expiry scan has not marked it yet, and no "
                          "order can lock it."), end=moment(coupon.valid_until)),
                    say(_("Nothing to repair: it will show as %(state)s after the next expiry "
                          "scan."), state=words.state(CouponStatus.EXPIRED)))
        usable = (say(_("Usable now until %(end)s."), end=moment(coupon.valid_until))
                  if coupon.valid_until else _("Usable now."))
        return (usable,
                say(_("If checkout refuses it, check the order amount against the minimum "
                      "(%(minimum)s) and the customer id."),
                    minimum=coupon.template_version.min_order_amount))
    if status == CouponStatus.LOCKED:
        lease_end = moment(coupon.lock_expires_at)
        held_by = order(coupon.locked_order_id)
        if coupon.lock_expires_at and coupon.lock_expires_at <= now:
            return (say(_("Held by order %(order)s, whose lease ended at %(end)s; the lease "
                          "scan will release it unless that order was paid."),
                        order=held_by, end=lease_end),
                    say(_("Check order %(order)s: if it was abandoned, ask the order service "
                          "to close it, which releases the coupon at once."), order=held_by))
        return (say(_("Locked by order %(order)s until %(end)s."), order=held_by, end=lease_end),
                say(_("It frees itself if order %(order)s is closed or its payment fails; "
                      "otherwise it is used when that order is paid."), order=held_by))
    if status == CouponStatus.USED:
        redemption = facts.redemption
        if redemption is None:
            return (say(_("Marked %(state)s without a redemption record."),
                        state=words.state(CouponStatus.USED)),
                    _("Escalate: ledger and redemptions disagree (possible ghost redemption)."))
        return (say(_("Used by order %(order)s (payment %(payment)s) at %(at)s."),
                    order=order(redemption.order_id), payment=redemption.payment_id,
                    at=moment(redemption.created_at)),
                _("If that order was refunded, the refund decision says whether it comes back."))
    if status == CouponStatus.EXPIRED:
        how = facts.last_operation
        end = moment(coupon.valid_until)
        if how and how.to_state == CouponStatus.EXPIRED:
            verdict = say(_("Expired at %(end)s. It was released from order %(order)s after "
                            "its validity ended."), end=end, order=order(how.order_id))
        else:
            verdict = say(_("Expired at %(end)s."), end=end)
        return (verdict,
                _("It cannot be used again; a goodwill coupon is an operator's decision."))
    voided = facts.last_operation
    reason = reason_words(voided) if voided else ""
    when = moment(voided.created_at) if voided else ""
    if when and reason:
        verdict = say(_("Voided at %(at)s: %(reason)s."), at=when, reason=reason)
    elif when:
        verdict = say(_("Voided at %(at)s."), at=when)
    else:
        verdict = _("Voided.")
    return (verdict, _("It cannot be used again."))
