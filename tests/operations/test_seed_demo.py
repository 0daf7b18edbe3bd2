"""`manage.py seed_demo` builds its demo through the services: every state, the late-payment
incident."""

from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from coupons.models import (
    CommandRejection,
    CouponOperation,
    CouponStatus,
    CouponTemplate,
    CustomerProfile,
    InboxMessage,
    Redemption,
    ServiceClient,
    UserCoupon,
)
from coupons.phones import phone_hash

pytestmark = pytest.mark.django_db

INCIDENT_USER = "user_demo_1001"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # The demo logins get real passwords; the default hasher would make each seed take seconds.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.COUPONS_DEMO = True


def test_seed_demo_refuses_without_coupons_demo(settings):
    settings.COUPONS_DEMO = False
    with pytest.raises(CommandError, match="COUPONS_DEMO=1"):
        seed()
    assert not get_user_model().objects.exists()


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def test_seed_demo_leaves_a_coupon_in_every_state():
    seed()

    states = set(UserCoupon.objects.values_list("status", flat=True))
    assert states == set(CouponStatus.values)


def test_seed_demo_expires_both_ways():
    seed()

    expired = UserCoupon.objects.filter(status=CouponStatus.EXPIRED)
    last_ops = {coupon.operations.order_by("-to_version").first().op_type for coupon in expired}
    # One by the expiry scanner's command, one by a release that landed past valid_until.
    assert {"EXPIRE", "RELEASE"} <= last_ops


def test_seed_demo_replays_the_incident_with_the_late_redeem_refused():
    seed()

    coupon = UserCoupon.objects.get(user_id=INCIDENT_USER)
    ledger = list(coupon.operations.order_by("to_version"))
    assert [op.op_type for op in ledger] == ["ISSUE", "LOCK", "RELEASE", "LOCK", "REDEEM"]
    assert [op.to_version for op in ledger] == [1, 2, 3, 4, 5]
    assert [op.order_id for op in ledger[1:]] == [
        "order_demo_A", "order_demo_A", "order_demo_B", "order_demo_B",
    ]
    assert coupon.status == CouponStatus.USED

    refusals = CommandRejection.objects.filter(coupon_id_ref=coupon.pk)
    assert [(r.op_type, r.order_id, r.error_code) for r in refusals] == [
        ("REDEEM", "order_demo_A", "TOKEN_MISMATCH")
    ]
    # The refusal came between B's LOCK and B's REDEEM, as in the incident's timeline.
    assert ledger[3].created_at < refusals[0].created_at < ledger[4].created_at

    redemption = Redemption.objects.get(coupon=coupon)
    assert (redemption.order_id, redemption.succeeded) == ("order_demo_B", True)


def test_seed_demo_makes_console_users_and_a_service_client():
    output = seed()

    users = {u.username: u for u in get_user_model().objects.all()}
    assert users["admin"].is_superuser and users["admin"].check_password("admin-demo")
    assert users["support"].is_staff and not users["support"].is_superuser
    assert users["operator"].is_staff and users["operator"].check_password("operator-demo")
    client = ServiceClient.objects.get(name="demo-order-service")
    # The key is printed last, once; only its hash is kept.
    key = output.strip().splitlines()[-1]
    assert client.key_prefix == key[:8] and client.key_hash != key


def test_seed_demo_twice_does_not_duplicate():
    seed()
    counts = (UserCoupon.objects.count(), CouponOperation.objects.count(),
              CouponTemplate.objects.count(), CommandRejection.objects.count(),
              get_user_model().objects.count(), ServiceClient.objects.count())

    output = seed()

    assert "already there" in output
    assert counts == (UserCoupon.objects.count(), CouponOperation.objects.count(),
                      CouponTemplate.objects.count(), CommandRejection.objects.count(),
                      get_user_model().objects.count(), ServiceClient.objects.count())


def test_seed_demo_shows_refund_decisions_under_the_default_policy():
    from refunds.models import RefundCoupon

    seed()

    decisions = {d.order_id: d for d in RefundCoupon.objects.select_related("coupon")}
    full, partial = decisions["order_demo_1701"], decisions["order_demo_1702"]
    exchange, deposit = decisions["order_demo_1801"], decisions["order_demo_1802"]
    waiting = decisions["order_demo_1901"]
    # A full refund returns the coupon; the RETURN names the REDEEM and the refund.
    assert (full.action, full.status, full.coupon.status) == ("RETURN", "EXECUTED", "AVAILABLE")
    assert full.operation.original_operation.op_type == "REDEEM"
    assert full.operation.refund_id == "refund_order_demo_1701"
    # A partial refund keeps it USED; its share of the 50.00 discount is pro-rated (100/350).
    assert (partial.action, partial.coupon.status) == ("KEEP_USED", "USED")
    assert partial.coupon_share == Decimal("14.29")
    # An exchange coupon is one-time.
    assert (exchange.action, exchange.coupon.status) == ("KEEP_USED", "USED")
    assert exchange.rule_label == "Exchange coupons are one-time: they stay used"
    # The refunded presale deposit freed its coupon at once.
    assert (deposit.action, deposit.status, deposit.coupon.status) == (
        "RELEASE_LOCK", "EXECUTED", "AVAILABLE")
    assert deposit.operation.op_type == "RELEASE"
    # A risk-flagged refund waits for an operator.
    assert (waiting.action, waiting.status, waiting.coupon.status) == (
        "MANUAL_REVIEW", "PENDING_APPROVAL", "USED")
    assert {d.policy_version.number for d in decisions.values() if d.policy_version} == {1}


def test_seed_demo_leaves_a_mistaken_redeem_proposed_for_reversal():
    from refunds.models import Compensation

    seed()

    proposal = Compensation.objects.get(kind="REVERSE_OPERATION")
    assert (proposal.status, proposal.created_by, proposal.operation.op_type) == (
        "PROPOSED", "user:admin", "REDEEM",
    )
    assert proposal.operation.actor == "user:operator"  # the operator's mistaken redeem
    assert proposal.coupon.status == CouponStatus.USED


def test_seed_demo_sends_the_incident_as_facts_and_opens_its_case():
    from coupons.models import ConflictCase, InboxMessage

    seed()

    coupon = UserCoupon.objects.get(user_id=INCIDENT_USER)
    facts = InboxMessage.objects.filter(order_id__in=["order_demo_A", "order_demo_B"])
    assert [(m.fact_type, m.order_id) for m in facts.order_by("received_at", "id")] == [
        ("OrderClosed", "order_demo_A"),
        ("PaymentSucceeded", "order_demo_A"),
        ("PaymentSucceeded", "order_demo_B"),
    ]
    case = ConflictCase.objects.get(coupon=coupon)
    assert (case.order_id, case.payment_id, case.status, case.recommendation) == (
        "order_demo_A", "payment_demo_PA", "OPEN", "ORDER_DISCOUNT_REFUND")
    assert case.evidence["refused_with"] == "TOKEN_MISMATCH"
    # The coordinator released A on the close and redeemed B on its payment.
    assert [op.actor for op in coupon.operations.filter(op_type__in=["RELEASE", "REDEEM"])] == [
        "system:coordinator", "system:coordinator"]


def test_seed_demo_settles_a_presale_under_each_strategy():
    from coupons.models import PresaleSettlement

    seed()

    settled = {(s.strategy, s.result) for s in PresaleSettlement.objects.all()}
    assert {
        ("STRICT", "REDEEMED"), ("LOCK_HONORS", "REDEEMED"), ("STRICT", "PAID_IN_FULL"),
        ("SUBSTITUTE", "SUBSTITUTED"), ("SUBSTITUTE", "COMPENSATED"),
    } <= settled


def test_seed_demo_leaves_work_in_every_operator_queue():
    from coupons.models import ConflictCase
    from refunds.models import Compensation, RefundCoupon

    seed()

    assert ConflictCase.objects.filter(status="OPEN").count() >= 1
    assert RefundCoupon.objects.filter(status="PENDING_APPROVAL").count() >= 2
    proposed = set(Compensation.objects.filter(status="PROPOSED").values_list("kind", flat=True))
    assert {"REVERSE_OPERATION", "PRESALE_EXPIRED_COUPON"} <= proposed


def test_seed_demo_sends_the_customers_profiles_through_the_inbox():
    seed()

    incident = CustomerProfile.objects.get(user_id=INCIDENT_USER)
    assert (incident.nickname, incident.phone_masked) == ("王小明", "138****5678")
    assert incident.phone_hash == phone_hash("+8613812345678")
    assert InboxMessage.objects.filter(fact_type="CustomerProfileUpdated").count() == (
        CustomerProfile.objects.count())


def test_seed_demo_gives_some_templates_a_scope_and_the_substitute_still_covers_it():
    from coupons.models import PresaleSettlement

    seed()

    scopes = {t.code: (t.stores, t.channel) for t in CouponTemplate.objects.all()}
    assert scopes["demo-free-xiaolongbao"] == (
        ["store_demo_laojie_01", "store_demo_laojie_02"], "DINE_IN")
    assert scopes["demo-15pct-cap-50"] == ([], "DELIVERY")
    assert scopes["demo-30-off-200"] == ([], "")
    substituted = PresaleSettlement.objects.get(result="SUBSTITUTED")
    assert (substituted.coupon.template_version.channel,
            substituted.substitute.template_version.channel) == ("DELIVERY", "")
