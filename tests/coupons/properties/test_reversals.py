"""Random command sequences with compensations mixed in keep every invariant (docs/design.md).

Orders lock, redeem and release; the coupon is voided and expired (also by a scanner whose
clock ran ahead); operators propose reversals and money for random ledger operations and
decide them, sometimes the proposer itself. After every step `coupon_check` replays the ledger,
REVERSE and COMPENSATE rows included, and finds nothing wrong; a refused command changed
nothing; an approval appended exactly one row; the proposer never decided.

Hypothesis settings: max_examples=25, stateful_step_count=30, deadline=None (about 60 s on
2 cores).
"""

import itertools
from collections import Counter
from datetime import timedelta
from decimal import Decimal

import pytest
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
from coupons.evidence.tips import journal_tip
from coupons.models import CouponOperation, CouponStatus, Redemption, UserCoupon
from coupons.services import (
    CommandContext,
    LeaseProof,
    coupon_expire,
    coupon_issue,
    coupon_lock,
    coupon_redeem,
    coupon_release,
    coupon_void,
    template_create,
)
from coupons.services.reversals import REVERSIBLE
from refunds.models import Compensation
from refunds.services.compensation_decide import compensation_approve, compensation_reject
from refunds.services.compensation_propose import compensation_propose

# derandomize: the same sequences every run, so the MUST_REACH coverage check below cannot
# flake on a shared CI machine (a random run misses a path about one time in twenty).
SETTINGS = settings(max_examples=25, stateful_step_count=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
ORDERS = ("order-A", "order-B")
OPERATORS = ("alice", "bob")
VALIDITY = timedelta(minutes=90)
TEMPLATE_CODES = (f"reversal-{n}" for n in itertools.count())
# Weighted by repetition and by the coupon's state (one rule drawing steps, not one rule per
# command: Hypothesis' swarm testing would switch whole rules off per example).
COMPENSATING = ["propose", "propose", "propose_older", "money", "approve", "approve",
                "approve", "reject"]
STEPS = {
    "AVAILABLE": st.sampled_from(["lock", "lock", "lock", "time", "void", "skewed_expire",
                                  "expire", *COMPENSATING]),
    "LOCKED": st.sampled_from(["redeem", "redeem", "redeem", "release", "void", "time",
                               *COMPENSATING]),
    "USED": st.sampled_from(["void", "void", *COMPENSATING, *COMPENSATING]),
    "FINAL": st.sampled_from(["time", *COMPENSATING, *COMPENSATING]),
}
# What a refused compensation command may answer; anything else is a bug.
REFUSALS = {
    "propose": {"OPERATION_NOT_REVERSIBLE", "VERSION_CONFLICT", "INVALID_STATE",
                "COMPENSATION_PENDING"},
    "approve": {"VERSION_CONFLICT", "INVALID_STATE", "SAME_OPERATOR"},
    "reject": {"SAME_OPERATOR"},
}


def counts(coupon_id) -> dict:
    coupon = UserCoupon.objects.get(pk=coupon_id)
    return {
        "row": (coupon.status, coupon.state_version, coupon.current_lock_id),
        "ledger": CouponOperation.objects.filter(coupon_id=coupon_id).count(),
        "redemptions": sorted(Redemption.objects.filter(coupon_id=coupon_id)
                              .values_list("pk", "succeeded")),
        "compensations": sorted(Compensation.objects.filter(coupon_id=coupon_id)
                                .values_list("pk", "status")),
    }


class ReversalMachine(RuleBasedStateMachine):
    clock = None
    outcomes: Counter = None

    @initialize()
    def issue(self):
        now = self.clock.now()
        template = template_create(
            code=next(TEMPLATE_CODES), name="10 off, 90 minutes", kind="AMOUNT_OFF",
            face_value=Decimal("10.00"), valid_from=now - timedelta(minutes=1),
            valid_until=now + VALIDITY,
        )
        self.system = CommandContext(actor="system:test")
        self.coupon_id = coupon_issue(template_id=template.pk, user_id="u1",
                                      ctx=self.system).coupon.pk
        self.lease = None  # the LockResult of the current lease

    @rule(data=st.data(), pick=st.integers(0, 50), who=st.sampled_from(OPERATORS))
    def next_step(self, data, pick, who):
        coupon = UserCoupon.objects.get(pk=self.coupon_id)
        step = data.draw(STEPS.get(coupon.status, STEPS["FINAL"]), label="step")
        if step == "time":
            self.clock.advance(minutes=5 + pick)
        elif step == "lock":
            self.run("LOCK", lambda: coupon_lock(
                coupon_id=coupon.pk, order_id=ORDERS[pick % 2], user_id="u1",
                order_amount=Decimal("100.00"), ctx=self.system), keep_lease=True)
        elif step in ("redeem", "release") and self.lease is not None:
            proof = LeaseProof.from_lock(self.lease.lock, expected_version=coupon.state_version)
            self.run(step.upper(), lambda: coupon_redeem(
                coupon_id=coupon.pk, lease=proof, payment_id=f"pay-{pick}", ctx=self.system,
            ) if step == "redeem" else coupon_release(
                coupon_id=coupon.pk, lease=proof, reason="order closed", ctx=self.system))
        elif step == "void":
            self.run("VOID", lambda: coupon_void(
                coupon_id=coupon.pk, expected_version=coupon.state_version, reason="risk",
                ctx=self.system))
        elif step in ("expire", "skewed_expire"):
            self.expire(coupon, skewed=step == "skewed_expire")
        elif step in ("propose", "money", "propose_older"):
            self.propose(coupon, pick, who, money=step == "money",
                         older=step == "propose_older")
        elif step in ("approve", "reject"):
            self.decide(pick, approve=step == "approve")

    def expire(self, coupon, *, skewed):
        real_now = self.clock.now()
        if skewed:  # a scanner whose clock runs past valid_until
            self.clock.set(max(real_now, coupon.valid_until + timedelta(minutes=1)))
        try:
            self.run("EXPIRE", lambda: coupon_expire(
                coupon_id=coupon.pk, expected_version=coupon.state_version, ctx=self.system))
        finally:
            self.clock.set(real_now)

    def propose(self, coupon, pick, who, *, money, older):
        operations = list(CouponOperation.objects.filter(coupon=coupon).order_by("to_version"))
        # Mostly the latest operation, the one a reversal can still undo; sometimes older ones,
        # or the newest reversible one the coupon has since moved on from.
        back = (0, 0, 1, 2)[pick % 4]
        operation = operations[max(0, len(operations) - 1 - back)]
        if older:
            operation = next((op for op in reversed(operations[:-1])
                              if op.op_type in REVERSIBLE), operation)
        self.compensation_command("propose", f"{operation.op_type}", lambda: compensation_propose(
            coupon_id=coupon.pk, operation_id=operation.pk, reason="random",
            amount=Decimal("1.50") if money else None, ctx=CommandContext(actor=f"user:{who}")))

    def decide(self, pick, *, approve):
        open_ones = list(Compensation.objects.filter(coupon_id=self.coupon_id,
                                                     status="PROPOSED").order_by("pk"))
        if not open_ones:
            return
        compensation = open_ones[-1 - pick % min(2, len(open_ones))]
        # One decision in four is tried by the proposer, who must be refused.
        same = pick % 4 == 0
        other = next(f"user:{name}" for name in OPERATORS
                     if f"user:{name}" != compensation.created_by)
        ctx = CommandContext(actor=compensation.created_by if same else other)
        label = f"{compensation.kind} of {compensation.operation.op_type}"
        seen = journal_tip(Compensation, compensation.pk)
        if approve:
            result = self.compensation_command("approve", label, lambda: compensation_approve(
                compensation_id=compensation.pk, seen_entry=seen, ctx=ctx), same_operator=same)
        else:
            result = self.compensation_command("reject", label, lambda: compensation_reject(
                compensation_id=compensation.pk, seen_entry=seen, note="no", ctx=ctx),
                same_operator=same)
        if result is not None and approve:
            row = result.resulting_operation
            assert row.original_operation_id == compensation.operation_id
            if row.op_type == "REVERSE":
                self.lease = None

    def compensation_command(self, command, label, call, *, same_operator=False):
        """Run a compensation command: a refusal changes nothing, an approval appends one
        ledger row, a proposal or a rejection none."""
        before = counts(self.coupon_id)
        try:
            result = call()
        except CouponError as error:
            self.outcomes[f"{command} {label} -> {error.code}"] += 1
            assert error.code in REFUSALS[command], error.as_body()
            assert not same_operator or error.code == "SAME_OPERATOR"
            after = counts(self.coupon_id)
            assert after == before, f"a refused {command} changed something"
            return None
        self.outcomes[f"{command} {label} -> ok"] += 1
        assert not same_operator, "the proposer decided their own compensation"
        after = counts(self.coupon_id)
        grew = 1 if command == "approve" else 0
        assert after["ledger"] == before["ledger"] + grew
        assert after["row"][1] == before["row"][1] + grew
        return result

    def run(self, op, call, *, keep_lease=False):
        before = counts(self.coupon_id)
        try:
            result = call()
        except CouponError as error:
            self.outcomes[f"{op} -> {error.code}"] += 1
            after = counts(self.coupon_id)
            # The one refusal with an effect: a STRICT redeem past the window; none here.
            assert after == before, f"a refused {op} changed something"
            return
        self.outcomes[f"{op} -> ok"] += 1
        self.lease = result if keep_lease else None

    @invariant()
    def every_invariant_holds_and_reversals_are_one_per_operation(self):
        coupon = UserCoupon.objects.get(pk=self.coupon_id)
        report = coupon_check(coupon)
        assert report.ok, report.violations
        originals = list(CouponOperation.objects.filter(coupon=coupon, op_type="REVERSE")
                         .values_list("original_operation_id", flat=True))
        assert len(originals) == len(set(originals)), "an operation reversed twice"
        for compensation in Compensation.objects.filter(coupon=coupon):
            decided = compensation.status != "PROPOSED"
            assert bool(compensation.decided_by) == decided
            assert (compensation.resulting_operation_id is not None) == (
                compensation.status == "APPROVED")
            assert compensation.decided_by != compensation.created_by
        if coupon.status == CouponStatus.USED:
            assert coupon.redemptions.filter(succeeded=True).count() == 1


MUST_REACH = (
    "approve REVERSE_OPERATION of REDEEM -> ok",
    "approve REVERSE_OPERATION of VOID -> ok",
    "approve MONEY of",
    "-> VERSION_CONFLICT",
    "-> SAME_OPERATOR",
    "-> OPERATION_NOT_REVERSIBLE",
)


@pytest.mark.django_db
def test_random_commands_and_reversals_keep_every_invariant(clock):
    outcomes = Counter()
    machine = type("BoundReversalMachine", (ReversalMachine,),
                   {"clock": clock, "outcomes": outcomes})
    run_state_machine_as_test(machine, settings=SETTINGS)
    for outcome, count in sorted(outcomes.items()):
        print(f"{count:5} {outcome}")
    missed = [path for path in MUST_REACH if not any(path in seen for seen in outcomes)]
    assert not missed, f"never reached {missed}: {dict(outcomes)}"
