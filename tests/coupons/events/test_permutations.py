"""Two orders contend for one coupon; facts arrive in every order, once or twice.

Order A locks the coupon first. A's facts (PaymentSucceeded, PaymentFailed, OrderClosed) and
B's story (B's checkout tries to LOCK, then PaymentSucceeded and a full RefundSucceeded in
either order: a refund may overtake its payment) are interleaved in every way, with one
lease-expiry scan (time moves past every lease, then scan_leases runs) at every position:
3! × 2! × C(6,3) × 7 = 1,680 orderings. Each ordering is delivered in 12 ways: every fact once;
every fact twice in a row with the same message id; and, for each of its five facts, once more
at the end, with the same or with a new message id.
That makes 20,160 sequences.

The sequences are walked depth first and every step runs in a savepoint that is rolled back
once its subtree is done, so a shared prefix runs once and sequences never see each other.

After every sequence: the invariants (docs/design.md) (ledger replay, one active lock, at most one
redemption, no command made with a lease that was not current, no RETURN without its refund
decision), every refused command was refused as stale with the code its case calls for
(STALE_REFUSALS, docs/design.md "Stale commands"), repeated message ids were acknowledged as
DUPLICATE with no effect, a refund redelivered under a new message id decided nothing twice, no
order that never paid holds the redemption, and every order that paid with the coupon applied
holds the redemption, had it given back by its refund, or has an open conflict case.
"""

from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from decimal import Decimal

import pytest
from django.db import transaction

from coupons.errors import CouponError
from coupons.events.inbox import inbox_receive
from coupons.evidence.replay import coupon_check
from coupons.models import CommandRejection, ConflictCase, OrderCoupon, Redemption
from coupons.services import coupon_issue, coupon_lock
from operations.scanners import scan_leases
from refunds.models import RefundCoupon

pytestmark = pytest.mark.django_db

FACT_TYPES = {"PS": "PaymentSucceeded", "PF": "PaymentFailed", "OC": "OrderClosed",
               "RF": "RefundSucceeded"}
ORDERS = {"A": "order-A", "B": "order-B"}
# (command, the coupon's state when it was refused) → the one code the refusal carries; why
# each is the right answer for its case: docs/design.md, "Stale commands".
STALE_REFUSALS = {
    ("REDEEM", "LOCKED"): "TOKEN_MISMATCH",  # another order's lease is the current one
    ("REDEEM", "AVAILABLE"): "INVALID_STATE",  # no lease at all: released, or given back
    ("REDEEM", "USED"): "INVALID_STATE",  # another order's payment consumed it
    # B's checkout is no stale command but a contender: a coupon locks only when AVAILABLE.
    ("LOCK", "LOCKED"): "INVALID_STATE",
    ("LOCK", "USED"): "INVALID_STATE",
}
LEASE_SECONDS = 900


@dataclass(frozen=True)
class Story:
    """Where a sequence stands: what is left to happen and what has been delivered."""

    a_left: tuple = ("PS", "PF", "OC")
    b_left: tuple = ("LOCK", "PS", "RF")
    scanned: bool = False
    delivered: tuple = ()  # (who, fact, message id) in delivery order
    paid: frozenset = frozenset()

    def next_steps(self):
        for fact in self.a_left:
            yield "A", fact, replace(self, a_left=tuple(f for f in self.a_left if f != fact))
        if self.b_left[:1] == ("LOCK",):
            yield "B", "LOCK", replace(self, b_left=self.b_left[1:])
        else:
            for fact in self.b_left:
                yield "B", fact, replace(self, b_left=tuple(f for f in self.b_left if f != fact))
        if not self.scanned:
            yield "*", "SCAN", replace(self, scanned=True)


class World:
    def __init__(self, coupon, clock, ctx):
        self.coupon, self.clock, self.ctx = coupon, clock, ctx
        # Every fact says it happened at the start, whenever it is delivered: a redelivery
        # must repeat what its message said (or be MESSAGE_ID_REUSED), and the coordinator
        # never reads the time.
        self.occurred_at = clock.now()
        self.sequences = 0
        self.failures = []

    @contextmanager
    def rolled_back(self):
        moment = self.clock.now()
        with transaction.atomic():
            yield
            transaction.set_rollback(True)
        self.clock.set(moment)

    def deliver(self, story, who, fact, message_id) -> Story:
        order_id = ORDERS[who]
        payload = {"order_id": order_id}
        if fact in ("PS", "RF"):
            payload["payment_id"] = f"pay-{order_id}"
        if fact == "RF":
            # Full: 300.00 less the template's 30.00 off, within the default policy's 30 days.
            payload.update(refund_id=f"refund-{order_id}", refund_amount="270.00",
                           refund_type="FULL")
        result = inbox_receive(
            message_id=message_id, fact_type=FACT_TYPES[fact], order_id=order_id,
            occurred_at=self.occurred_at, payload=payload, sender="test",
            sender_scope="test",
        )
        repeated = any(message_id == seen for *_, seen in story.delivered)
        assert result.status == ("DUPLICATE" if repeated else "PROCESSED"), message_id
        paid = story.paid | {order_id} if fact == "PS" else story.paid
        return replace(story, delivered=(*story.delivered, (who, fact, message_id)), paid=paid)

    def step(self, story, who, what, doubled) -> Story:
        if what == "SCAN":
            self.clock.advance(seconds=LEASE_SECONDS + 1)
            scan_leases(batch=10)
            return story
        if what == "LOCK":
            # When the coupon is taken, B's checkout goes on without it and pays full price.
            with suppress(CouponError):
                coupon_lock(coupon_id=self.coupon.pk, order_id=ORDERS[who], user_id="u1",
                            order_amount=Decimal("300.00"), lease_seconds=LEASE_SECONDS,
                            ctx=self.ctx)
            return story
        message_id = f"{who}-{what}"
        story = self.deliver(story, who, what, message_id)
        return self.deliver(story, who, what, message_id) if doubled else story

    def walk(self, story, path=(), doubled=False):
        steps = list(story.next_steps())
        if not steps:
            self.finish(story, path, doubled)
            return
        for who, what, after in steps:
            with self.rolled_back():
                self.walk(self.step(after, who, what, doubled), (*path, f"{who}:{what}"),
                          doubled)

    def finish(self, story, path, doubled):
        if doubled:
            self.check(story, (*path, "(each fact twice in a row)"))
            return
        self.check(story, path)
        for who, fact, message_id in story.delivered:  # each fact again, late
            for again in (message_id, message_id + "-new"):
                with self.rolled_back():
                    late = self.deliver(story, who, fact, again)
                    self.check(late, (*path, f"{who}:{fact} again as {again}"))

    def check(self, story, path):
        self.sequences += 1
        try:
            self.assert_invariants(story)
        except AssertionError as failure:
            self.failures.append(f"{' → '.join(path)}: {failure}")

    def assert_invariants(self, story):
        coupon = self.coupon
        coupon.refresh_from_db()
        report = coupon_check(coupon)
        assert report.ok, report.violations
        redeemed = set(Redemption.objects.filter(coupon=coupon, succeeded=True)
                       .values_list("order_id", flat=True))
        refusals = {(op_type, details.get("current_state"), code) for op_type, details, code
                    in CommandRejection.objects.filter(coupon_id_ref=coupon.pk)
                    .values_list("op_type", "details", "error_code")}
        unexpected = {r for r in refusals if STALE_REFUSALS.get(r[:2]) != r[2]}
        assert not unexpected, f"refused otherwise than STALE_REFUSALS says: {unexpected}"
        # A refund received again (same or new message id) answers the decisions it made.
        decided = list(RefundCoupon.objects.filter(coupon=coupon)
                       .values_list("refund_id", flat=True))
        assert len(decided) == len(set(decided)), f"a refund decided twice: {decided}"
        given_back = set(RefundCoupon.objects.filter(coupon=coupon, executed_action="RETURN")
                         .values_list("order_id", flat=True))
        assert redeemed <= story.paid, f"{redeemed} redeemed without paying"
        with_coupon = set(OrderCoupon.objects.filter(coupon=coupon)
                          .values_list("order_id", flat=True))
        in_case = set(ConflictCase.objects.filter(coupon=coupon, status="OPEN")
                      .values_list("order_id", flat=True))
        for order_id in story.paid & with_coupon:
            assert order_id in redeemed | given_back | in_case, (
                f"{order_id} paid with the coupon but holds neither the redemption, nor a "
                f"refund that gave it back, nor a case (coupon {coupon.status})"
            )


def sequences_after(story, doubled) -> int:
    """How many sequences continue from `story`, counted without a database."""
    steps = list(story.next_steps())
    if not steps:
        return 1 if doubled else 1 + 2 * 5  # once, then each of the 5 facts again, 2 ways
    return sum(sequences_after(after, doubled) for *_, after in steps)


# The walk is split by its first two steps so pytest-xdist can spread it over the cores in
# pieces small enough that no one of them is left running alone at the end of the suite.
def first_two_steps():
    for who, what, after in Story().next_steps():
        for then_who, then_what, _ in after.next_steps():
            yield (who, what), (then_who, then_what)


SPLITS = [(first, second, doubled) for doubled in (False, True)
          for first, second in first_two_steps()]


def after_step(story, step) -> Story:
    """Where `story` stands once `step` (who, what) was taken: what is left to happen."""
    return next(after for who, what, after in story.next_steps() if (who, what) == step)


def after_steps(*steps) -> Story:
    story = Story()
    for step in steps:
        story = after_step(story, step)
    return story


def test_the_walk_covers_twenty_thousand_sequences():
    total = sum(sequences_after(after_steps(first, second), doubled)
                for first, second, doubled in SPLITS)
    assert total == 20_160


@pytest.mark.parametrize(("first", "second", "doubled"), SPLITS,
                         ids=[f"{w}:{s}-{w2}:{s2}{'-twice' if d else ''}"
                              for (w, s), (w2, s2), d in SPLITS])
def test_every_ordering_and_redelivery_keeps_the_invariants(template, clock, ctx, first, second,
                                                            doubled):
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    coupon_lock(coupon_id=coupon.pk, order_id=ORDERS["A"], user_id="u1",
                order_amount=Decimal("300.00"), lease_seconds=LEASE_SECONDS, ctx=ctx)
    world = World(coupon, clock, ctx)
    with world.rolled_back():
        story = world.step(after_step(Story(), first), *first, doubled)
        story = world.step(after_step(story, second), *second, doubled)
        world.walk(story, (":".join(first), ":".join(second)), doubled)
    assert not world.failures, f"{len(world.failures)} failing sequences, e.g.:\n" + "\n".join(
        world.failures[:5]
    )
    assert world.sequences == sequences_after(after_steps(first, second), doubled)
