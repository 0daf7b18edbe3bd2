"""A command that crashes part-way leaves no trace: all its writes are one transaction.

For every command and every write it makes, the write is let through and then the process
"crashes" (the patched step raises right after the real write). Afterwards the coupon row, its
history (ledger, outbox, leases, order links, redemptions), the rejection log and the caller's
Idempotency-Key claim must be exactly as before; and the same command run again succeeds, so a
crash never leaves a half-written state in the way of a retry.
"""

from datetime import timedelta
from decimal import Decimal
from pkgutil import resolve_name
from unittest import mock

import pytest

from coupons.models import (
    CommandRejection,
    CouponLock,
    CouponOperation,
    IdempotencyRecord,
    OrderCoupon,
    OutboxEvent,
    Redemption,
    UserCoupon,
)
from coupons.services import (
    coupon_expire,
    coupon_issue,
    coupon_lock,
    coupon_redeem,
    coupon_release,
    coupon_renew,
    coupon_void,
)
from coupons.write.idempotency import run_once
from tests.conftest import lock

pytestmark = pytest.mark.django_db


class InjectedCrash(RuntimeError):
    """Raised right after a real write, as if the worker died there."""


class CrashAfter:
    """One injected crash: which write it follows, and how often it fired."""

    def __init__(self, label):
        self.label = label
        self.fired = 0

    def __repr__(self):
        return self.label


def after_call(target: str):
    """A module attribute such as coupons.services.lock.idempotency_complete."""

    def patch(step):
        real = resolve_name(target)

        def crashing(*args, **kwargs):
            real(*args, **kwargs)
            step.fired += 1
            raise InjectedCrash(step.label)

        return mock.patch(target, crashing)

    return patch


def after_create(model):
    """model.objects.create: the insert of an evidence row."""

    def patch(step):
        real = model.objects.create

        def crashing(**kwargs):
            real(**kwargs)
            step.fired += 1
            raise InjectedCrash(step.label)

        return mock.patch.object(model.objects, "create", crashing)

    return patch


# The compare-and-set and every row of a transition are one statement
# (coupons/sql/transitions.py); the crash comes right after it. run_once stores every answer.
ANSWER = {"stored answer": after_call("coupons.write.idempotency.idempotency_complete")}
ONE = {"coupon compare-and-set": after_call("coupons.write.transitions.appended"), **ANSWER}
WRITE_STEPS = {
    # issue writes its rows itself, one statement each.
    "issue": {"coupon row": after_create(UserCoupon),
              "ledger row": after_call("coupons.services.issue.append_operation"),
              "outbox row": after_call("coupons.services.issue.append_outbox"), **ANSWER},
    **{command: ONE for command in ("lock", "renew", "redeem", "release", "void", "expire")},
}


def write_step(command, step):
    """`step` of `command`, or the one statement it is part of."""
    steps = WRITE_STEPS[command]
    return steps.get(step) or steps["coupon compare-and-set"]


CASES = [(command, step) for command, steps in WRITE_STEPS.items() for step in steps]


def world(coupon_id=None) -> dict:
    """Every row a coupon command can write: the coupon (every coupon, for issue) and counts
    or lists of all history rows, the rejection log and the Idempotency-Key records."""
    coupons = UserCoupon.objects.all() if coupon_id is None else UserCoupon.objects.filter(
        pk=coupon_id
    )
    return {
        "coupons": list(coupons.order_by("pk").values(
            "pk", "status", "state_version", "current_lock_id", "locked_order_id",
            "lock_token_hash", "lock_expires_at", "updated_at",
        )),
        "ledger": CouponOperation.objects.count(),
        "outbox": OutboxEvent.objects.count(),
        "leases": list(CouponLock.objects.order_by("locked_at", "pk")
                       .values_list("pk", "status", "expires_at", "ended_at")),
        "order_links": OrderCoupon.objects.count(),
        "redemptions": list(Redemption.objects.order_by("pk").values_list("pk", "succeeded")),
        "rejections": CommandRejection.objects.count(),
        "idempotency": list(IdempotencyRecord.objects.order_by("pk").values_list(
            "pk", "status", "response_status", "response_body", "completed_at",
        )),
    }


def keyed(command, call):
    """`call(ctx)` under an Idempotency-Key of its own, as run_command runs it."""
    return run_once(scope="client:1", key=f"fault-{command}", request_hash=f"hash-{command}",
                    actor="client:order-service", command=call)


def prepare(command, template, coupon, ctx, clock):
    """The coupon state each command needs, and the call that runs the command once."""
    if command == "issue":
        return lambda run_ctx: coupon_issue(template_id=template.pk, user_id="u2", ctx=run_ctx)
    if command == "lock":
        return lambda run_ctx: coupon_lock(coupon_id=coupon.pk, order_id="order-A",
                                           user_id="u1", order_amount=Decimal("300.00"),
                                           ctx=run_ctx)
    if command == "expire":
        clock.advance(days=31)  # the template's coupons are valid 30 days
        return lambda run_ctx: coupon_expire(coupon_id=coupon.pk, expected_version=1, ctx=run_ctx)
    _, proof = lock(coupon, ctx, order_id="order-A")
    clock.advance(minutes=5)
    if command == "renew":
        return lambda run_ctx: coupon_renew(coupon_id=coupon.pk, lease=proof, lease_seconds=600,
                                            ctx=run_ctx)
    if command == "redeem":
        return lambda run_ctx: coupon_redeem(coupon_id=coupon.pk, lease=proof,
                                             payment_id="pay-A", ctx=run_ctx)
    if command == "release":
        return lambda run_ctx: coupon_release(coupon_id=coupon.pk, lease=proof,
                                              reason="order closed", ctx=run_ctx)
    return lambda run_ctx: coupon_void(coupon_id=coupon.pk, expected_version=2,
                                       reason="risk", ctx=run_ctx)


@pytest.mark.parametrize(("command", "step"), CASES, ids=[f"{c}-{s}" for c, s in CASES])
def test_a_crash_right_after_any_write_leaves_nothing_behind(
    command, step, template, coupon, ctx, clock
):
    run = prepare(command, template, coupon, ctx, clock)
    coupon_id = None if command == "issue" else coupon.pk
    before = world(coupon_id)
    crash = CrashAfter(f"{command}: {step}")

    with WRITE_STEPS[command][step](crash), pytest.raises(InjectedCrash):
        keyed(command, lambda run_ctx: run(run_ctx).payload())

    assert crash.fired == 1, f"the {step} write never happened in {command}"
    assert world(coupon_id) == before  # the key's claim rolled back with the rest

    # The crash left nothing in the way: the same command, same key, now goes through once.
    clock.advance(seconds=1)
    assert not keyed(command, lambda run_ctx: run(run_ctx).payload()).replayed
    [claim] = IdempotencyRecord.objects.filter(key=f"fault-{command}")
    assert claim.status == IdempotencyRecord.Status.COMPLETED
    assert CouponOperation.objects.count() == before["ledger"] + 1


@pytest.mark.parametrize("step", [step for step in ("coupon compare-and-set", "ledger row")
                                  if step in WRITE_STEPS["void"]])
def test_a_crashed_void_of_an_available_coupon_leaves_it_available(step, coupon):
    before = world(coupon.pk)
    crash = CrashAfter(f"void: {step}")

    with WRITE_STEPS["void"][step](crash), pytest.raises(InjectedCrash):
        keyed("void", lambda run_ctx: coupon_void(coupon_id=coupon.pk, expected_version=1,
                                                  reason="risk", ctx=run_ctx))

    assert crash.fired == 1
    assert world(coupon.pk) == before
    assert UserCoupon.objects.get(pk=coupon.pk).status == "AVAILABLE"


def test_lock_crash_after_writes_can_be_retried_by_another_order(coupon, ctx, clock):
    """A crashed LOCK must not leave an active lease that blocks the next order."""
    crash = CrashAfter("lock: ledger row")
    with write_step("lock", "ledger row")(crash), pytest.raises(InjectedCrash):
        keyed("lock", lambda run_ctx: lock(coupon, run_ctx, order_id="order-A"))

    clock.advance(minutes=1)
    result, _ = lock(coupon, ctx, order_id="order-B")

    assert result.lock.order_id == "order-B"
    assert CouponLock.objects.filter(coupon=coupon).count() == 1
    assert result.lock.expires_at == clock.now() + timedelta(seconds=900)


def test_a_crash_behind_the_api_frees_the_idempotency_key_for_the_retry(api, coupon):
    body = {"order_id": "order-A", "user_id": "u1", "order_amount": "300.00"}
    url = f"/api/v1/coupons/{coupon.pk}/lock"
    before = world(coupon.pk)
    crash = CrashAfter("lock: outbox row")

    with write_step("lock", "outbox row")(crash), pytest.raises(InjectedCrash):
        api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="quote-A")

    assert crash.fired == 1
    assert world(coupon.pk) == before  # the claim was dropped along with everything else
    retry = api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="quote-A")
    assert retry.status_code == 200, retry.json()
    assert "Idempotent-Replayed" not in retry.headers
    assert CouponOperation.objects.filter(coupon=coupon, op_type="LOCK").count() == 1
