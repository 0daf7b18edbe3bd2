"""Real races on PostgreSQL: threads on their own connections, released by one barrier."""

from collections import Counter

import pytest

from coupons.evidence.tips import journal_tip
from coupons.models import CouponOperation, OperationType, Redemption, UserCoupon
from coupons.services import CommandContext, coupon_void
from refunds.models import Compensation
from refunds.services.compensation_decide import compensation_approve
from refunds.services.compensation_propose import compensation_propose
from tests.coupons.concurrency.threads import race

pytestmark = pytest.mark.django_db(transaction=True)


def as_user(name):
    return CommandContext(actor=f"user:{name}")


@pytest.fixture
def proposal(redeemed):
    return compensation_propose(coupon_id=redeemed.coupon_id, operation_id=redeemed.pk,
                                reason="redeemed by mistake", ctx=as_user("alice"))


def reversals(coupon_id):
    return CouponOperation.objects.filter(coupon_id=coupon_id, op_type=OperationType.REVERSE)


def test_two_operators_approving_at_once_append_exactly_one_reverse(proposal):
    seen = journal_tip(Compensation, proposal.pk)
    outcomes = race(*[
        lambda name=name: compensation_approve(compensation_id=proposal.pk, ctx=as_user(name),
                                               seen_entry=seen)
        for name in ("bob", "carol", "dave", "erin")
    ])

    assert Counter(kind for kind, _ in outcomes) == {"ok": 1, "refused": 3}
    assert {value for kind, value in outcomes if kind == "refused"} == {"INVALID_STATE"}
    winner = next(value for kind, value in outcomes if kind == "ok")
    assert list(reversals(proposal.coupon_id).values_list("pk", "actor")) == [
        (winner.resulting_operation_id, winner.decided_by),
    ]
    decided = Compensation.objects.get(pk=proposal.pk)
    assert (decided.status, decided.decided_by) == ("APPROVED", winner.decided_by)
    coupon = UserCoupon.objects.get(pk=proposal.coupon_id)
    assert (coupon.status, coupon.state_version) == ("AVAILABLE", 4)


def test_an_approval_racing_a_void_lets_exactly_one_through(proposal):
    outcomes = race(
        lambda: compensation_approve(compensation_id=proposal.pk, ctx=as_user("bob"),
                                     seen_entry=journal_tip(Compensation, proposal.pk)),
        lambda: coupon_void(coupon_id=proposal.coupon_id, expected_version=3, reason="risk",
                            ctx=as_user("risk")),
    )

    kinds = [kind for kind, _ in outcomes]
    assert sorted(kinds) == ["ok", "refused"]
    coupon = UserCoupon.objects.get(pk=proposal.coupon_id)
    assert coupon.state_version == 4
    if kinds[0] == "ok":  # the reversal won: the void's expected version is stale
        assert outcomes[1] == ("refused", "VERSION_CONFLICT")
        assert coupon.status == "AVAILABLE"
        assert not Redemption.objects.filter(coupon=coupon, succeeded=True).exists()
    else:  # the void won: the coupon moved on, the proposal stays open
        assert outcomes[0] == ("refused", "VERSION_CONFLICT")
        assert coupon.status == "VOID"
        assert Compensation.objects.get(pk=proposal.pk).status == "PROPOSED"


def test_two_operators_proposing_for_one_operation_at_once_make_one_proposal(redeemed):
    outcomes = race(*[
        lambda name=name: compensation_propose(
            coupon_id=redeemed.coupon_id, operation_id=redeemed.pk, reason=f"seen by {name}",
            ctx=as_user(name))
        for name in ("alice", "bob", "carol")
    ])

    assert Counter(kind for kind, _ in outcomes) == {"ok": 1, "refused": 2}
    assert {value for kind, value in outcomes if kind == "refused"} == {"COMPENSATION_PENDING"}
    assert Compensation.objects.filter(operation=redeemed).count() == 1
