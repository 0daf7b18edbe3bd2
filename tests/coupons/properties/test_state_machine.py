"""Random command sequences against coupons, checked against a model after every step.

A state property: random LOCK / RENEW / REDEEM / RELEASE / EXPIRE / VOID sequences, and refunds
through the refund service (RETURN when the order that redeemed is refunded in full), from several
orders with fresh, stale and wrong proofs while time moves; after every step the invariants
(docs/design.md) hold (coupons.evidence.replay.coupon_check), a refused command changed nothing, a
successful one moved the coupon exactly one version with one ledger row and one outbox row, the
ledger's versions are contiguous and there is at most one successful redemption.

Hypothesis settings (chosen to finish well under 90 s on 2 cores against PostgreSQL):
    max_examples=40, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]

The database is not rolled back between the examples of one test, so every example issues its
own coupons (from a template of its own, with a 40-minute validity window starting at the
example's clock; every other one STRICT, so a redeem past the window is refused and releases
to EXPIRED). When a coupon has sat in a final state (USED, EXPIRED, VOID) for a few steps the
example moves on to a fresh coupon, so its remaining steps still exercise leases.
"""

import itertools
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from uuid import UUID

import pytest
from django.db import connection
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from coupons.errors import CouponError
from coupons.evidence.replay import coupon_check
from coupons.models import (
    CommandRejection,
    CouponLock,
    CouponOperation,
    ExpiryDuringLock,
    LockStatus,
    OrderCoupon,
    OutboxEvent,
    Redemption,
    UserCoupon,
)
from coupons.services import (
    CommandContext,
    LeaseProof,
    coupon_expire,
    coupon_issue,
    coupon_lock,
    coupon_redeem,
    coupon_release,
    coupon_renew,
    coupon_void,
    template_create,
)
from coupons.write.tokens import hash_token, lease_token
from refunds.models import RefundCoupon
from refunds.services import refund_receive

# derandomize: the same sequences every run, so the MUST_REACH check below cannot flake (a
# random run of 40 examples missed "REDEEM AVAILABLE -> INVALID_STATE" in a full CI run).
SETTINGS = settings(
    derandomize=True,
    max_examples=40,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

OWNER = "u1"
ORDERS = ("order-A", "order-B", "order-C")
THRESHOLD = Decimal("200.00")
VALIDITY = timedelta(minutes=40)
# Every fourth coupon's window opens 10 minutes after issue, so LOCK meets
# COUPON_NOT_YET_VALID; time moves 5 to 40 minutes a step, so leases outlive the window and
# RELEASE ends EXPIRED.
OPENS_LATER_BY = timedelta(minutes=10)
FINAL_STATES = {"USED", "EXPIRED", "VOID"}
STEPS_IN_A_FINAL_STATE = 3
NEVER_ISSUED_TOKEN = "not-a-lease-token-at-all"
TEMPLATE_CODES = (f"short-window-{n}" for n in itertools.count())
REFUND_IDS = (f"refund-{n}" for n in itertools.count())
# A 300.00 order with the 30.00 coupon paid 270.00; a partial refund gives back a third.
PAID = Decimal("270.00")
PARTIAL = Decimal("90.00")

PROOFS = (
    "fresh",  # the current holder's order, token and version
    "stale_lease",  # an earlier lease's holder with the version it last knew (the incident's A)
    "stale_lease_new_version",  # an earlier lease's token, but the coupon's current version
    "wrong_token",  # a token no lease ever had
    "wrong_order",  # the current token presented for another order
    "stale_version",  # the current token and order with an outdated version
    "future_version",  # the current token and order with a version not yet reached
)


@dataclass(frozen=True)
class TimePasses:
    minutes: int


@dataclass(frozen=True)
class Lock:
    order: str
    who: str
    amount: str
    lease_seconds: int


@dataclass(frozen=True)
class LeaseHolderCommand:
    command: str  # RENEW, REDEEM or RELEASE
    proof: str  # one of PROOFS
    pick: int  # which earlier lease, other order or version offset the proof uses
    lease_seconds: int  # for RENEW


@dataclass(frozen=True)
class Expire:
    version_offset: int


@dataclass(frozen=True)
class Void:
    version_offset: int


@dataclass(frozen=True)
class Refund:
    whose: str  # "redeemer" (the order that redeemed, if any) or "other" (an order not holding it)
    full: bool
    pick: int


def weighted(*pairs):
    """sampled_from over repeated choices: weights that still shrink towards the first."""
    return st.sampled_from([choice for choice, weight in pairs for _ in range(weight)])


VERSION_OFFSETS = weighted((0, 3), (-1, 1), (1, 1))


def lease_holder_commands(*command_weights):
    return st.builds(
        LeaseHolderCommand,
        command=weighted(*command_weights),
        proof=weighted(("fresh", 6), *((kind, 1) for kind in PROOFS[1:])),
        pick=st.integers(0, 7),
        lease_seconds=st.sampled_from([60, 1800]),
    )


STEP_KINDS = {
    "lease": lease_holder_commands(("RELEASE", 2), ("RENEW", 2), ("REDEEM", 1)),
    # Past the window the late payment matters: STRICT refuses it, LOCK_HONORS takes it.
    "late lease": lease_holder_commands(("REDEEM", 3), ("RELEASE", 2), ("RENEW", 1)),
    "lock": st.builds(
        Lock, order=st.sampled_from(ORDERS), who=weighted(("owner", 7), ("stranger", 1)),
        amount=weighted(("300.00", 7), ("199.99", 1)),
        lease_seconds=st.sampled_from([60, 900, 3600]),
    ),
    "time": st.builds(TimePasses, minutes=st.integers(min_value=5, max_value=40)),
    "expire": st.builds(Expire, version_offset=VERSION_OFFSETS),
    # VOID is final: rare, so most coupons live long enough to race leases.
    "void": st.builds(Void, version_offset=VERSION_OFFSETS),
    # A refund under the default policy: the redeeming order's full refund returns the coupon,
    # a partial one keeps it USED until the refunds add up to what the order paid.
    "refund": st.builds(Refund, whose=weighted(("redeemer", 5), ("other", 1)),
                        full=weighted((True, 2), (False, 1)), pick=st.integers(0, 7)),
}
# Step weights by the coupon's state: mostly commands that can do something there, some that
# cannot (the refusals), and time moving in every state.
STEP_WEIGHTS = {
    "AVAILABLE": (("lock", 6), ("time", 3), ("lease", 2), ("expire", 1), ("void", 1)),
    "AVAILABLE, past its window": (("expire", 4), ("lock", 1), ("lease", 1), ("void", 1)),
    "LOCKED": (("lease", 6), ("time", 5), ("lock", 1), ("expire", 1), ("void", 1)),
    "LOCKED, past its window": (("late lease", 8), ("lock", 1), ("expire", 1), ("void", 1)),
    "USED": (("refund", 5), ("lease", 2), ("lock", 1), ("time", 1), ("expire", 1), ("void", 1)),
    "FINAL": (("lease", 2), ("lock", 1), ("time", 1), ("expire", 1), ("void", 1), ("refund", 1)),
}
STEPS = {
    state: weighted(*weights).flatmap(STEP_KINDS.__getitem__)
    for state, weights in STEP_WEIGHTS.items()
}


@dataclass
class Lease:
    """What one lease's holder (an order service) remembers."""

    lock_id: object
    order_id: str
    token: str
    known_version: int

    def proof(self, version=None) -> LeaseProof:
        return LeaseProof.from_token(
            order_id=self.order_id, lock_token=self.token,
            expected_version=self.known_version if version is None else version,
        )


@dataclass
class Model:
    """What the coupon should be, by the state machine (docs/design.md)."""

    opens_at: object
    closes_at: object
    strict: bool  # ExpiryDuringLock.STRICT: a redeem past the window releases to EXPIRED
    status: str = "AVAILABLE"
    version: int = 1
    current: Lease | None = None
    past: list[Lease] = field(default_factory=list)
    redeemed_by: str | None = None
    redeemed_with: LeaseProof | None = None  # the proof the successful redeem showed
    refunded: Counter = field(default_factory=Counter)  # order → refunded so far
    successes: int = 0
    steps_in_final_state: int = 0


# Raw SQL on purpose: the snapshot runs twice per step, and building the equivalent ORM
# queries cost more than the commands under test.
ROW_FIELDS = ("status", "state_version", "current_lock_id", "locked_order_id", "lock_token_hash",
              "lock_expires_at", "updated_at")
COUNTED = {"ledger": (CouponOperation, "coupon_id"), "outbox": (OutboxEvent, "coupon_id"),
           "order_links": (OrderCoupon, "coupon_id"),
           "rejections": (CommandRejection, "coupon_id_ref")}


def table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def row_and_counts_sql() -> str:
    counts = ", ".join(
        f"(SELECT COUNT(*) FROM {table(model)} h WHERE h.{column} = c.id)"
        for model, column in COUNTED.values()
    )
    return f"SELECT {', '.join(ROW_FIELDS)}, {counts} FROM {table(UserCoupon)} c WHERE c.id = %s"


def row_and_counts(coupon_id) -> dict:
    """The coupon row and how many history rows of each kind it has."""
    with connection.cursor() as cursor:
        cursor.execute(row_and_counts_sql(), [coupon_id])
        return dict(zip((*ROW_FIELDS, *COUNTED), cursor.fetchone(), strict=True))


def snapshot(coupon_id) -> dict:
    """Everything a command could change for one coupon."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, status, expires_at, ended_at FROM {table(CouponLock)} "
                       "WHERE coupon_id = %s ORDER BY locked_at, id", [coupon_id])
        locks = cursor.fetchall()
        cursor.execute(f"SELECT id, succeeded FROM {table(Redemption)} WHERE coupon_id = %s "
                       "ORDER BY id", [coupon_id])
        redemptions = cursor.fetchall()
    return {"row": row_and_counts(coupon_id), "locks": locks, "redemptions": redemptions}


class CouponLifecycle(RuleBasedStateMachine):
    """Bound to the test's clock and an outcome tally by `machine_for`."""

    clock = None
    outcomes: Counter = None  # "OP FROM -> outcome TO" over all examples, for the coverage check

    @initialize()
    def issue_a_fresh_coupon(self):
        self.ctx = CommandContext(actor="property-test")
        self.coupons_issued = 0
        self.issue_next_coupon()

    def issue_next_coupon(self):
        opens_at = self.now + (OPENS_LATER_BY if self.coupons_issued % 4 == 3 else timedelta())
        strict = self.coupons_issued % 2 == 1
        template = template_create(
            code=next(TEMPLATE_CODES), name="30 off 200 for 40 minutes", kind="AMOUNT_OFF",
            face_value=Decimal("30.00"), min_order_amount=THRESHOLD,
            valid_from=opens_at, valid_until=opens_at + VALIDITY,
            expiry_during_lock=ExpiryDuringLock.STRICT if strict else ExpiryDuringLock.LOCK_HONORS,
        )
        issued = coupon_issue(template_id=template.pk, user_id=OWNER, ctx=self.ctx)
        self.coupon_id = issued.coupon.pk
        self.coupons_issued += 1
        self.model = Model(opens_at=opens_at, closes_at=opens_at + VALIDITY, strict=strict)

    # -- the one rule ---------------------------------------------------------------------

    # A single rule drawing weighted steps rather than one rule per command: Hypothesis' swarm
    # testing switches whole rules off per example (an example without LOCK never leaves
    # AVAILABLE), and the weights here follow the coupon's state.
    @rule(data=st.data())
    def next_step(self, data):
        situation = self.model.status
        if situation in ("AVAILABLE", "LOCKED") and self.past_validity():
            situation += ", past its window"
        step = data.draw(STEPS.get(situation, STEPS["FINAL"]), label=f"step from {situation}")
        if isinstance(step, TimePasses):
            self.clock.advance(minutes=step.minutes)
        elif isinstance(step, Lock):
            self.lock(step)
        elif isinstance(step, LeaseHolderCommand):
            proof, holder = self.proof_for(step.proof, step.pick)
            if step.command == "RENEW":
                self.renew(proof, holder, step.lease_seconds)
            elif step.command == "REDEEM":
                self.redeem(proof, holder)
            else:
                self.release(proof, holder)
        elif isinstance(step, Expire):
            self.expire(step.version_offset)
        elif isinstance(step, Refund):
            self.refund(step)
        else:
            self.void(step.version_offset)
        self.move_on_from_a_finished_coupon()

    def move_on_from_a_finished_coupon(self):
        model = self.model
        if model.status in FINAL_STATES:
            model.steps_in_final_state += 1
            if model.steps_in_final_state > STEPS_IN_A_FINAL_STATE:
                self.issue_next_coupon()

    # -- the commands, each with the outcome the model expects --------------------------------

    def lock(self, step: Lock):
        model = self.model
        if model.status != "AVAILABLE":
            expected = "INVALID_STATE"
        elif step.who != "owner":
            expected = "NOT_COUPON_OWNER"
        elif self.now < model.opens_at:
            expected = "COUPON_NOT_YET_VALID"
        elif self.past_validity():
            expected = "COUPON_EXPIRED"
        elif Decimal(step.amount) < THRESHOLD:
            expected = "THRESHOLD_NOT_MET"
        else:
            expected = None
        order_id = self.order_id(step.order)
        result = self.run("LOCK", expected, lambda: coupon_lock(
            coupon_id=self.coupon_id, order_id=order_id,
            user_id=OWNER if step.who == "owner" else "someone-else",
            order_amount=Decimal(step.amount), lease_seconds=step.lease_seconds, ctx=self.ctx,
        ), to_state="LOCKED")
        if result is not None:
            assert result.state_version == model.version
            model.current = Lease(result.lock.pk, order_id, lease_token(result.lock.pk),
                                  result.state_version)

    def renew(self, proof, holder, lease_seconds):
        result = self.run("RENEW", self.expected_lease_refusal(proof), lambda: coupon_renew(
            coupon_id=self.coupon_id, lease=proof, lease_seconds=lease_seconds, ctx=self.ctx,
        ), to_state="LOCKED")
        if result is not None:
            holder.known_version = result.state_version
            assert result.expires_at == self.now + timedelta(seconds=lease_seconds)

    def redeem(self, proof, holder):
        model = self.model
        if model.status == "USED" and proof.order_id == model.redeemed_by:
            # ownership (docs/design.md): the order that redeemed gets its redemption back, with no
            # new effect, if it proves the lease that redemption consumed.
            result = self.run("REDEEM", self.expected_repeat_refusal(proof), lambda: coupon_redeem(
                coupon_id=self.coupon_id, lease=proof, payment_id=f"pay-{proof.order_id}",
                ctx=self.ctx,
            ), to_state="USED", no_effect=True)
            if result is not None:
                assert result.already_redeemed
                assert result.redemption.order_id == model.redeemed_by
            return
        expected = self.expected_lease_refusal(proof)
        if expected is None and model.strict and self.past_validity():
            # validity and presale (docs/design.md) STRICT: refused COUPON_EXPIRED, and the lease is
            # released to EXPIRED.
            self.run("REDEEM", "COUPON_EXPIRED", lambda: coupon_redeem(
                coupon_id=self.coupon_id, lease=proof, payment_id=f"pay-{proof.order_id}",
                ctx=self.ctx,
            ), to_state="EXPIRED", refusal_releases=True)
            self.end_lease()
            return
        result = self.run("REDEEM", expected, lambda: coupon_redeem(
            coupon_id=self.coupon_id, lease=proof, payment_id=f"pay-{proof.order_id}",
            ctx=self.ctx,
        ), to_state="USED")
        if result is not None:
            assert not result.already_redeemed
            # The holder keeps the version it sent: a retry repeats the request it made.
            model.redeemed_by, model.redeemed_with = proof.order_id, proof
            self.end_lease()

    def release(self, proof, holder):
        to_state = "EXPIRED" if self.past_validity() else "AVAILABLE"
        result = self.run("RELEASE", self.expected_lease_refusal(proof), lambda: coupon_release(
            coupon_id=self.coupon_id, lease=proof, reason="order closed", ctx=self.ctx,
        ), to_state=to_state)
        if result is not None:
            assert result.status == to_state
            holder.known_version = result.state_version
            self.end_lease()

    def expire(self, offset):
        model = self.model
        expected_version = max(1, model.version + offset)
        if model.status != "AVAILABLE":
            expected = "INVALID_STATE"
        elif expected_version != model.version:
            expected = "VERSION_CONFLICT"
        elif not self.past_validity():
            expected = "INVALID_STATE"
        else:
            expected = None
        self.run("EXPIRE", expected, lambda: coupon_expire(
            coupon_id=self.coupon_id, expected_version=expected_version, ctx=self.ctx,
        ), to_state="EXPIRED")

    def void(self, offset):
        model = self.model
        expected_version = max(1, model.version + offset)
        if model.status not in ("AVAILABLE", "LOCKED", "USED"):
            expected = "INVALID_STATE"
        elif expected_version != model.version:
            expected = "VERSION_CONFLICT"
        else:
            expected = None
        result = self.run("VOID", expected, lambda: coupon_void(
            coupon_id=self.coupon_id, expected_version=expected_version, reason="campaign closed",
            ctx=self.ctx,
        ), to_state="VOID")
        if result is not None and model.current is not None:
            self.end_lease()

    def refund(self, step: Refund):
        """RETURN through the refund service (a decision with a policy version, invariant 6)."""
        model = self.model
        holder = model.current.order_id if model.current else None
        if step.whose == "redeemer" and model.redeemed_by:
            order_id = model.redeemed_by
        else:
            others = [self.order_id(o) for o in ORDERS if self.order_id(o) != holder]
            order_id = others[step.pick % len(others)]
        amount = PAID if step.full else PARTIAL
        decided = model.status in ("USED", "VOID") and order_id == model.redeemed_by
        full = step.full or model.refunded[order_id] + amount >= PAID
        before = snapshot(self.coupon_id)
        decisions_before = RefundCoupon.objects.filter(coupon_id=self.coupon_id).count()
        receipt = refund_receive(
            refund_id=next(REFUND_IDS), order_id=order_id, payment_id=f"pay-{order_id}",
            refund_amount=amount, refund_type="FULL" if step.full else "PARTIAL", ctx=self.ctx,
        )
        mine = [d for d in receipt.decisions if d.coupon_id == self.coupon_id]
        assert len(mine) == int(decided)
        assert RefundCoupon.objects.filter(coupon_id=self.coupon_id).count() == (
            decisions_before + int(decided))
        if decided:
            model.refunded[order_id] += amount
        if decided and full and model.status == "USED":
            to_state = "EXPIRED" if self.past_validity() else "AVAILABLE"
            assert (mine[0].action, mine[0].status) == ("RETURN", "EXECUTED")
            self.outcomes[f"RETURN USED -> ok {to_state}"] += 1
            self.assert_one_transition(before["row"], to_state, refused=False)
            model.redeemed_by = None
            model.steps_in_final_state = 0
            return
        after = snapshot(self.coupon_id)
        if decided and full:  # VOID after its redemption: the RETURN is refused, a person decides
            assert (mine[0].action, mine[0].status) == ("RETURN", "PENDING_APPROVAL")
            self.outcomes["RETURN VOID -> INVALID_STATE"] += 1
            assert after["row"].pop("rejections") == before["row"].pop("rejections") + 1
        elif decided:
            assert (mine[0].action, mine[0].status) == ("KEEP_USED", "DECIDED")
            self.outcomes[f"REFUND {model.status} -> KEEP_USED"] += 1
        assert after == before, "a refund that returns nothing changed the coupon"

    # -- helpers ----------------------------------------------------------------------------

    def order_id(self, order: str) -> str:
        """Orders are per coupon, so a refund's order totals and bindings are this coupon's."""
        return f"{order}@{self.coupon_id}"

    @property
    def now(self):
        return self.clock.now()

    def past_validity(self) -> bool:
        return self.now >= self.model.closes_at

    def end_lease(self):
        self.model.past.append(self.model.current)
        self.model.current = None

    def proof_for(self, kind: str, pick: int) -> tuple[LeaseProof, Lease | None]:
        """A proof of the given kind, and the lease whose holder learns from its success."""
        model = self.model
        if kind in ("stale_lease", "stale_lease_new_version") and model.past:
            lease = model.past[pick % len(model.past)]
            version = model.version if kind == "stale_lease_new_version" else None
            return lease.proof(version), None
        holder = model.current or (model.past[-1] if model.past else None)
        if holder is None:  # nothing was ever locked: a caller inventing a lease
            return LeaseProof.from_token(order_id=ORDERS[pick % len(ORDERS)],
                                         lock_token=NEVER_ISSUED_TOKEN,
                                         expected_version=model.version), None
        if kind == "wrong_token":
            return LeaseProof.from_token(order_id=holder.order_id, lock_token=NEVER_ISSUED_TOKEN,
                                         expected_version=model.version), None
        if kind == "wrong_order":
            others = [order for order in ORDERS if order != holder.order_id]
            return LeaseProof.from_token(order_id=others[pick % len(others)],
                                         lock_token=holder.token,
                                         expected_version=model.version), None
        if kind == "stale_version":
            return holder.proof(max(1, model.version - 1 - pick % 3)), None
        if kind == "future_version":
            return holder.proof(model.version + 1 + pick % 3), None
        # fresh, or a stale kind before any lease ended: the holder with the current version
        return holder.proof(model.version), holder

    def expected_lease_refusal(self, proof: LeaseProof) -> str | None:
        """The check order of coupons.services: status, then token, order, version."""
        model = self.model
        if model.status != "LOCKED":
            return "INVALID_STATE"
        if proof.token_hash != hash_token(model.current.token):
            return "TOKEN_MISMATCH"
        if proof.order_id != model.current.order_id:
            return "ORDER_MISMATCH"
        if proof.expected_version != model.version:
            return "VERSION_CONFLICT"
        return None

    def expected_repeat_refusal(self, proof: LeaseProof) -> str | None:
        """A repeated redeem shows the consumed lease's token, then the version it redeemed at."""
        redeemed = self.model.redeemed_with
        if proof.token_hash != redeemed.token_hash:
            return "TOKEN_MISMATCH"
        if proof.expected_version != redeemed.expected_version:
            return "VERSION_CONFLICT"
        return None

    def run(self, op, expected_code, command, *, to_state, no_effect=False,
            refusal_releases=False):
        """Run one command: its outcome must be the model's; a refusal must change nothing.

        The one refusal with an effect is a STRICT redeem past the window (refusal_releases):
        it commits a RELEASE to EXPIRED, which must look like any other transition.
        """
        model = self.model
        from_state = model.status
        before = snapshot(self.coupon_id)
        try:
            result = command()
        except CouponError as error:
            self.outcomes[f"{op} {from_state} -> {error.code}"] += 1
            assert error.code == expected_code, (
                f"{op} refused {error.code}; the model expected {expected_code or 'success'}"
            )
            if refusal_releases:
                self.assert_one_transition(before["row"], to_state, refused=True)
                return None
            after = snapshot(self.coupon_id)
            assert after["row"].pop("rejections") == before["row"].pop("rejections") + 1
            assert after == before, f"a refused {op} changed the coupon"
            return None
        self.outcomes[f"{op} {from_state} -> ok {to_state}"] += 1
        assert expected_code is None, f"{op} succeeded; the model expected {expected_code}"
        if no_effect:
            assert snapshot(self.coupon_id) == before, f"{op} answered from history but wrote"
            return result
        self.assert_one_transition(before["row"], to_state, refused=False)
        return result

    def assert_one_transition(self, before, to_state, *, refused):
        after = row_and_counts(self.coupon_id)
        assert (after["status"], after["state_version"]) == (to_state, before["state_version"] + 1)
        assert after["ledger"] == before["ledger"] + 1, "a state change without one ledger row"
        assert after["outbox"] == before["outbox"] + 1, "a state change without one outbox row"
        assert after["rejections"] == before["rejections"] + refused
        model = self.model
        model.status = to_state
        model.version += 1
        model.successes += 1

    # -- after every step -------------------------------------------------------------------

    @invariant()
    def coupon_keeps_spec_invariants_and_matches_the_model(self):
        coupon = UserCoupon.objects.get(pk=self.coupon_id)
        report = coupon_check(coupon)
        assert report.ok, report.violations
        model, lease = self.model, self.model.current
        assert (coupon.status, coupon.state_version) == (model.status, model.version)
        assert (coupon.current_lock_id, coupon.locked_order_id) == (
            (lease.lock_id, lease.order_id) if lease else (None, None)
        )
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id FROM {table(CouponLock)} WHERE coupon_id = %s "
                           "AND status = %s", [self.coupon_id, LockStatus.ACTIVE])
            active = [UUID(str(lock_id)) for (lock_id,) in cursor.fetchall()]
            cursor.execute(f"SELECT order_id FROM {table(Redemption)} WHERE coupon_id = %s "
                           "AND succeeded = %s", [self.coupon_id, True])
            redeemed = [order_id for (order_id,) in cursor.fetchall()]
            cursor.execute(f"SELECT from_version, to_version FROM {table(CouponOperation)} "
                           "WHERE coupon_id = %s ORDER BY to_version", [self.coupon_id])
            steps = [tuple(step) for step in cursor.fetchall()]
        assert active == ([lease.lock_id] if lease else [])
        # At most one successful redemption, and it is the model's.
        assert redeemed == ([model.redeemed_by] if model.redeemed_by else [])
        # Contiguous versions, one ledger row per success (coupon_check: each has its event).
        assert steps == [(v, v + 1) for v in range(model.version)]
        assert len(steps) == 1 + model.successes


def machine_for(clock, outcomes):
    return type("BoundCouponLifecycle", (CouponLifecycle,),
                {"clock": clock, "outcomes": outcomes})


# Paths the generator must reach, or the property says little: the incident's stale lease on a
# newer lease, release to EXPIRED, a STRICT redeem past the window, the scanner's EXPIRE, and
# a real redemption.
MUST_REACH = (
    "LOCK AVAILABLE -> ok LOCKED",
    "REDEEM LOCKED -> COUPON_EXPIRED",
    "REDEEM LOCKED -> ok USED",
    "RELEASE LOCKED -> ok AVAILABLE",
    "RELEASE LOCKED -> ok EXPIRED",
    "EXPIRE AVAILABLE -> ok EXPIRED",
    "REDEEM AVAILABLE -> INVALID_STATE",
    "RETURN USED -> ok AVAILABLE",
    "RETURN USED -> ok EXPIRED",
    "REFUND USED -> KEEP_USED",
)


@pytest.mark.django_db
def test_random_command_sequences_keep_every_invariant(clock):
    outcomes = Counter()
    run_state_machine_as_test(machine_for(clock, outcomes), settings=SETTINGS)
    for outcome, count in sorted(outcomes.items()):
        print(f"{count:5} {outcome}")
    missed = [path for path in MUST_REACH if not outcomes[path]]
    stale_token_refusals = sum(
        count for outcome, count in outcomes.items() if outcome.endswith("LOCKED -> TOKEN_MISMATCH")
    )
    assert not missed and stale_token_refusals, f"never reached {missed}: {dict(outcomes)}"
