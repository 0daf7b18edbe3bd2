"""GET /api/v1/cases and POST /api/v1/cases/{id}/resolve: operators only."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from coupons.models import CommandRejection, ConflictCase, CouponOperation, FactType, Redemption
from coupons.services import coupon_issue, coupon_void
from coupons.services.cases import case_open
from refunds.models import Compensation
from tests.command_checks import ledger, world
from tests.conftest import lock

pytestmark = pytest.mark.django_db

def staff_client(username, *, can_resolve) -> APIClient:
    user = User.objects.create_user(username, password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name="operator" if can_resolve else "support"))
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def operator(db):
    return staff_client("alice", can_resolve=True)


@pytest.fixture
def plain_staff(db):
    return staff_client("bob", can_resolve=False)


@pytest.fixture
def late_payment(coupon, ctx, send):
    """Order A locked, was closed (coupon released), and then its payment arrived."""

    def make(before_payment=None, *, coupon=coupon, order_id="A"):
        lock(coupon, ctx, order_id=order_id)
        send("OrderClosed", order_id=order_id)
        if before_payment is not None:
            before_payment(coupon)
        outcome = send("PaymentSucceeded", order_id=order_id,
                       payment_id=f"P-{order_id}")["outcome"]
        assert outcome["action"] == "CASE_OPENED"
        return ConflictCase.objects.get(pk=outcome["case_id"])

    return make


@pytest.fixture
def compensating_case(late_payment):
    return late_payment()


@pytest.fixture
def refund_case(late_payment, ctx):
    return late_payment(lambda coupon: lock(coupon, ctx, order_id="B"))


@pytest.fixture
def manual_case(late_payment, ctx):
    return late_payment(lambda coupon: coupon_void(
        coupon_id=coupon.pk, expected_version=3, reason="risk", ctx=ctx))


def resolve(client, case, key="resolve-1", **body):
    return client.post(f"/api/v1/cases/{case.pk}/resolve", body, format="json",
                       HTTP_IDEMPOTENCY_KEY=key)


def reloaded(case) -> ConflictCase:
    case.refresh_from_db()
    return case


# --- listing ------------------------------------------------------------------------------


def test_operator_lists_cases_newest_first_with_their_evidence(
    operator, clock, compensating_case, late_payment, template, ctx,
):
    clock.advance(minutes=10)
    second = coupon_issue(template_id=template.pk, user_id="u2", ctx=ctx).coupon
    newer = late_payment(coupon=second, order_id="C")

    response = operator.get("/api/v1/cases")

    assert response.status_code == 200, response.json()
    results = response.json()["results"]
    assert [row["id"] for row in results] == [newer.pk, compensating_case.pk]
    row = results[1]
    assert (row["coupon"], row["order_id"], row["payment_id"], row["fact_type"]) == (
        compensating_case.coupon_id, "A", "P-A", "PaymentSucceeded",
    )
    assert (row["status"], row["recommendation"]) == ("OPEN", "COMPENSATING_REDEEM")
    assert row["evidence"]["refused_with"] == "INVALID_STATE"
    assert row["resolved_by"] == ""


def test_a_cases_fact_is_one_of_the_fact_types_the_schema_declares(coupon):
    schema = APIClient().get("/api/v1/schema/?format=json").json()["components"]["schemas"]

    assert schema["CaseOutput"]["properties"]["fact_type"] == {
        "$ref": "#/components/schemas/FactTypeEnum"}
    assert schema["FactTypeEnum"]["enum"] == FactType.values
    with pytest.raises(ValueError, match="PAYMENT_SUCCEEDED"):
        case_open(coupon=coupon, order_id="A", fact_type="PAYMENT_SUCCEEDED", evidence={})
    assert not ConflictCase.objects.exists()


def test_cases_filter_by_status_order_and_coupon(
    operator, clock, compensating_case, late_payment, template, ctx,
):
    second = coupon_issue(template_id=template.pk, user_id="u2", ctx=ctx).coupon
    other = late_payment(coupon=second, order_id="C")
    resolve(operator, other, action="DISMISS", note="customer paid full price; no claim")

    def ids(query):
        response = operator.get(f"/api/v1/cases?{query}")
        assert response.status_code == 200, response.json()
        return [row["id"] for row in response.json()["results"]]

    assert ids("status=OPEN") == [compensating_case.pk]
    assert ids("status=DISMISSED") == [other.pk]
    assert ids("order_id=C") == [other.pk]
    assert ids(f"coupon_id={compensating_case.coupon_id}") == [compensating_case.pk]
    assert ids(f"coupon_id={second.pk}&status=OPEN") == []
    assert ids("order_id=nobody") == []


def test_case_list_refuses_a_bad_filter(operator, compensating_case):
    response = operator.get("/api/v1/cases?status=MAYBE")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("who", ["service_client", "staff_without_permission"])
def test_case_list_is_for_operators_only(api, plain_staff, compensating_case, who):
    client = {"service_client": api, "staff_without_permission": plain_staff}[who]

    response = client.get("/api/v1/cases")

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "PERMISSION_DENIED"


def test_case_list_needs_a_signed_in_caller(compensating_case):
    response = APIClient().get("/api/v1/cases")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "NOT_AUTHENTICATED"


# --- who may resolve ----------------------------------------------------------------------


@pytest.mark.parametrize("who", ["service_client", "staff_without_permission"])
def test_resolve_is_for_operators_only(api, plain_staff, compensating_case, who):
    client = {"service_client": api, "staff_without_permission": plain_staff}[who]
    before = world()

    response = resolve(client, compensating_case, action="APPLY")

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "PERMISSION_DENIED"
    assert reloaded(compensating_case).status == "OPEN"
    assert world() == before


# --- APPLY --------------------------------------------------------------------------------


def test_apply_compensating_redeem_locks_and_redeems_for_the_paid_order(
    operator, compensating_case,
):
    coupon = compensating_case.coupon

    response = resolve(operator, compensating_case, key="apply-1", action="APPLY")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["id"], body["status"], body["resolution"]) == (
        compensating_case.pk, "RESOLVED", "COMPENSATING_REDEEM",
    )
    assert body["resolved_by"] == "user:alice"
    assert ledger(coupon) == [
        ("ISSUE", "", "AVAILABLE", 0, 1),
        ("LOCK", "AVAILABLE", "LOCKED", 1, 2),
        ("RELEASE", "LOCKED", "AVAILABLE", 2, 3),
        ("LOCK", "AVAILABLE", "LOCKED", 3, 4),
        ("REDEEM", "LOCKED", "USED", 4, 5),
    ]
    by_operator = CouponOperation.objects.filter(coupon=coupon, to_version__gte=4)
    assert set(by_operator.values_list("actor", "order_id", "idempotency_key")) == {
        ("user:alice", "A", "apply-1"),
    }
    redemption = Redemption.objects.get()
    assert (redemption.coupon, redemption.order_id, redemption.payment_id) == (
        coupon, "A", "P-A",
    )
    assert redemption.discount_amount == Decimal("30.00")
    case = reloaded(compensating_case)
    assert (case.status, case.resolved_by, case.resolution) == (
        "RESOLVED", "user:alice", "COMPENSATING_REDEEM",
    )
    assert case.resolved_at is not None


def test_apply_order_discount_refund_records_a_compensation_for_the_orders_discount(
    operator, refund_case,
):
    before = world()

    response = resolve(operator, refund_case, action="APPLY", note="refund the 30")

    assert response.status_code == 200, response.json()
    assert (response.json()["status"], response.json()["resolution"]) == (
        "RESOLVED", "ORDER_DISCOUNT_REFUND",
    )
    compensation = Compensation.objects.get()
    assert (compensation.kind, compensation.status) == ("ORDER_DISCOUNT_REFUND", "PROPOSED")
    assert (compensation.order_id, compensation.coupon_id, compensation.amount) == (
        "A", refund_case.coupon_id, Decimal("30.00"),
    )
    assert compensation.created_by == "user:alice"
    assert f"conflict case {refund_case.pk}" in compensation.reason
    assert world() == before  # order B keeps its lease
    assert reloaded(refund_case).resolution_note == "refund the 30"


def test_apply_manual_review_is_refused_and_the_case_stays_open(operator, manual_case):
    response = resolve(operator, manual_case, action="APPLY")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert reloaded(manual_case).status == "OPEN"


def test_apply_when_the_coupon_was_taken_meanwhile_is_a_conflict_and_the_case_stays_open(
    operator, compensating_case, ctx,
):
    lock(compensating_case.coupon, ctx, order_id="B")
    before = world()

    response = resolve(operator, compensating_case, action="APPLY")

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "INVALID_STATE"
    assert (error["details"]["current_state"], error["details"]["current_version"]) == (
        "LOCKED", 4,
    )
    case = reloaded(compensating_case)
    assert (case.status, case.resolved_by, case.resolution) == ("OPEN", "", "")
    assert world() == before
    assert not CouponOperation.objects.filter(actor="user:alice").exists()


# --- RESOLVE and DISMISS ------------------------------------------------------------------


@pytest.mark.parametrize(("action", "status", "resolution"), [
    ("RESOLVE", "RESOLVED", "MANUAL"),
    ("DISMISS", "DISMISSED", "DISMISSED"),
])
def test_resolve_or_dismiss_by_hand_records_the_note_and_touches_no_coupon(
    operator, manual_case, action, status, resolution,
):
    before = world()

    response = resolve(operator, manual_case, action=action, note="called the customer")

    assert response.status_code == 200, response.json()
    case = reloaded(manual_case)
    assert (case.status, case.resolution, case.resolution_note, case.resolved_by) == (
        status, resolution, "called the customer", "user:alice",
    )
    assert world() == before
    assert not Compensation.objects.exists()


@pytest.mark.parametrize("action", ["RESOLVE", "DISMISS"])
@pytest.mark.parametrize("note", [None, "", "   "], ids=["missing", "empty", "blank"])
def test_resolve_or_dismiss_without_a_note_is_refused(operator, manual_case, action, note):
    body = {"action": action} if note is None else {"action": action, "note": note}

    response = resolve(operator, manual_case, **body)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert reloaded(manual_case).status == "OPEN"


def test_resolve_refuses_an_unknown_action(operator, manual_case):
    response = resolve(operator, manual_case, action="ESCALATE", note="x")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("first_action", ["APPLY", "DISMISS"])
def test_resolving_a_closed_case_is_a_conflict(operator, compensating_case, first_action):
    resolve(operator, compensating_case, key="first", action=first_action, note="done")
    before = (world(), reloaded(compensating_case).resolution)

    response = resolve(operator, compensating_case, key="second", action="APPLY")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "INVALID_STATE"
    closed_as = "RESOLVED" if first_action == "APPLY" else "DISMISSED"
    assert response.json()["error"]["details"] == {"current_state": closed_as}
    assert (world(), reloaded(compensating_case).resolution) == before


def test_resolve_an_unknown_case_is_not_found(operator):
    response = operator.post("/api/v1/cases/999999/resolve", {"action": "APPLY"},
                             format="json", HTTP_IDEMPOTENCY_KEY="k")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


# --- Idempotency-Key ----------------------------------------------------------------------


def test_resolve_needs_an_idempotency_key(operator, compensating_case):
    response = operator.post(f"/api/v1/cases/{compensating_case.pk}/resolve",
                             {"action": "APPLY"}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "IDEMPOTENCY_KEY_MISSING"
    assert reloaded(compensating_case).status == "OPEN"


def test_resolve_replayed_with_the_same_key_answers_the_same_without_a_second_effect(
    operator, clock, compensating_case,
):
    first = resolve(operator, compensating_case, key="apply-1", action="APPLY")
    before = world()
    clock.advance(minutes=1)

    again = resolve(operator, compensating_case, key="apply-1", action="APPLY")

    assert (again.status_code, again.json()) == (first.status_code, first.json())
    assert again.headers["Idempotent-Replayed"] == "true"
    assert world() == before
    assert Redemption.objects.count() == 1


def test_a_refused_resolve_replays_its_refusal(operator, compensating_case, ctx):
    lock(compensating_case.coupon, ctx, order_id="B")
    first = resolve(operator, compensating_case, key="apply-1", action="APPLY")
    rejections = CommandRejection.objects.count()

    again = resolve(operator, compensating_case, key="apply-1", action="APPLY")

    assert (again.status_code, again.json()) == (409, first.json())
    assert CommandRejection.objects.count() == rejections


def test_resolve_with_a_reused_key_and_another_body_is_refused(operator, manual_case):
    resolve(operator, manual_case, key="k-1", action="DISMISS", note="duplicate report")

    response = resolve(operator, manual_case, key="k-1", action="RESOLVE", note="other")

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert reloaded(manual_case).status == "DISMISSED"


def test_a_payment_redelivered_after_its_case_was_settled_does_not_reopen_it(
    operator, refund_case, send,
):
    assert resolve(operator, refund_case, action="APPLY").status_code == 200

    again = send("PaymentSucceeded", order_id=refund_case.order_id,
                 payment_id=refund_case.payment_id)["outcome"]

    assert (again["action"], again["case_id"]) == ("CASE_ALREADY_CLOSED", refund_case.pk)
    assert ConflictCase.objects.count() == 1
    assert Compensation.objects.count() == 1
