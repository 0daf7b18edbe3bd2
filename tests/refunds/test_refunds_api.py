"""POST refunds, the RefundSucceeded fact, approvals, rejections and the timeline, over HTTP."""

from datetime import timedelta

import pytest

from coupons.models import CouponOperation, UserCoupon
from coupons.services import coupon_release, service_client_create
from refunds.models import RefundCoupon
from tests.conftest import START, lock
from tests.refunds.conftest import redeem, refund, shown

pytestmark = pytest.mark.django_db

Status = RefundCoupon.Status


def post_refund(api, refund_id="r-1", order_id="order-A", amount="270.00", refund_type="FULL",
                key=None, **extra):
    return api.post(
        "/api/v1/refunds",
        {"refund_id": refund_id, "order_id": order_id, "payment_id": f"pay-{order_id}",
         "refund_amount": amount, "refund_type": refund_type, **extra},
        format="json", HTTP_IDEMPOTENCY_KEY=key or f"refund-{refund_id}",
    )


def send_refund(send, refund_id="r-1", order_id="order-A", amount="270.00", refund_type="FULL",
                **extra):
    return send("RefundSucceeded", order_id=order_id, payment_id=f"pay-{order_id}",
                refund_id=refund_id, refund_amount=amount, refund_type=refund_type, **extra)


def coupon_row(coupon):
    row = UserCoupon.objects.get(pk=coupon.pk)
    return row.status, row.state_version


def test_post_refund_answers_201_with_both_decisions(api, coupon, ctx):
    redeem(coupon, ctx)

    answer = post_refund(api)

    assert answer.status_code == 201, answer.json()
    [decision] = answer.json()["decisions"]
    assert decision["status"] == "EXECUTED"
    assert decision["money_decision"]["coupon_share"] == "30.00"
    assert decision["coupon_decision"]["action"] == "RETURN"
    assert decision["coupon_decision"]["policy"] == "default"
    assert decision["coupon_decision"]["policy_version"] == 1
    assert decision["coupon_decision"]["facts"]["refund_type"] == "FULL"
    assert decision["operation_id"] == CouponOperation.objects.get(op_type="RETURN").pk
    assert coupon_row(coupon) == ("AVAILABLE", 4)

    fetched = api.get(f"/api/v1/refunds/{decision['id']}").json()
    assert fetched == {**decision, "journal_tip": shown(decision["id"])}
    listed = api.get("/api/v1/refunds", {"order_id": "order-A", "status": "EXECUTED"}).json()
    assert [d["id"] for d in listed["results"]] == [decision["id"]]
    assert api.get("/api/v1/refunds", {"coupon_id": coupon.pk + 1}).json()["results"] == []


def test_a_refund_of_an_order_that_used_no_coupon_answers_200_with_no_decision(api, coupon):
    answer = post_refund(api, order_id="order-no-coupon")

    assert answer.status_code == 200
    assert answer.json()["decisions"] == []
    assert RefundCoupon.objects.count() == 0


def test_post_refund_needs_an_idempotency_key_and_valid_input(api, coupon, ctx):
    redeem(coupon, ctx)

    missing = api.post("/api/v1/refunds", {"refund_id": "r-1"}, format="json")
    bad = post_refund(api, amount="-5", refund_type="SOME")

    assert missing.status_code == 400
    assert missing.json()["error"]["code"] == "IDEMPOTENCY_KEY_MISSING"
    assert bad.status_code == 400
    assert set(bad.json()["error"]["details"]) == {"refund_amount", "refund_type"}
    assert RefundCoupon.objects.count() == 0 and coupon_row(coupon) == ("USED", 3)


def test_the_same_refund_by_api_and_by_fact_decides_once(api, send, coupon, ctx):
    redeem(coupon, ctx)

    by_api = post_refund(api).json()["decisions"]
    by_fact = send_refund(send)["outcome"]
    by_api_again = post_refund(api, key="another-key").json()["decisions"]

    assert by_fact["action"] == "REFUND_DECIDED"
    assert [d["id"] for d in by_fact["decisions"]] == [by_api[0]["id"]]
    assert by_api_again == by_api
    assert RefundCoupon.objects.count() == 1
    assert CouponOperation.objects.filter(op_type="RETURN").count() == 1


def test_a_refund_id_reused_for_another_amount_is_refused(api, coupon, ctx):
    redeem(coupon, ctx)
    post_refund(api, amount="100.00", refund_type="PARTIAL")

    answer = post_refund(api, amount="200.00", refund_type="PARTIAL", key="other")

    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "REFUND_ID_REUSED"
    assert RefundCoupon.objects.get().refund_amount == 100


def test_the_refund_fact_before_the_payment_fact_is_decided_when_the_coupon_is_redeemed(
    send, coupon, ctx, clock
):
    locked, _ = lock(coupon, ctx)
    waiting = send_refund(send)["outcome"]
    assert [d["status"] for d in waiting["decisions"]] == ["AWAITING_REDEMPTION"]

    clock.advance(minutes=2)
    paid = send("PaymentSucceeded", order_id="order-A", payment_id="pay-order-A")

    assert paid["outcome"]["action"] == "REDEEMED"
    decision = RefundCoupon.objects.get()
    assert (decision.status, decision.action) == (Status.EXECUTED, "RETURN")
    assert coupon_row(coupon) == ("AVAILABLE", 4)


def deposit(send, coupon, order_id="PS-1", deadline=START + timedelta(days=40)):
    return send("DepositPaid", order_id=order_id, coupon_id=coupon.pk, user_id=coupon.user_id,
                order_amount="1000.00", final_payment_deadline=deadline.isoformat())


@pytest.mark.parametrize(("days_later", "ends"), [(3, "AVAILABLE"), (31, "EXPIRED")])
def test_a_refunded_presale_deposit_releases_its_coupon_at_once(
    send, coupon, clock, days_later, ends
):
    deposit(send, coupon)
    clock.advance(days=days_later)  # the coupon is valid for 30 days

    outcome = send_refund(send, order_id="PS-1", amount="100.00", refund_type="FULL")["outcome"]

    decision = RefundCoupon.objects.get()
    assert [d["id"] for d in outcome["decisions"]] == [decision.pk]
    assert (decision.action, decision.status) == ("RELEASE_LOCK", Status.EXECUTED)
    assert "presale deposit of order PS-1 refunded" in decision.reason
    assert coupon_row(coupon) == (ends, 3)
    release = CouponOperation.objects.get(coupon=coupon, op_type="RELEASE")
    assert (decision.operation_id, release.to_state) == (release.pk, ends)
    # The lease did not wait for its end (deadline + grace): the coupon is free now.
    assert UserCoupon.objects.get(pk=coupon.pk).lock_expires_at is None


def test_a_refund_after_the_order_let_its_coupon_go_decides_nothing(api, coupon, ctx):
    locked, proof = lock(coupon, ctx)
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx, reason="order closed")

    answer = post_refund(api)

    assert answer.status_code == 201
    assert answer.json()["decisions"] == []
    assert "nothing to decide" in answer.json()["notes"][0]["note"]


# -- approvals ---------------------------------------------------------------------------


def pending(coupon, ctx, clock=None):
    redeem(coupon, ctx)
    if clock is not None:
        clock.advance(days=1)
    [decision] = refund(ctx, "r-risk", risk_flag=True).decisions
    assert decision.status == Status.PENDING_APPROVAL
    return decision


def test_an_operator_approves_a_manual_review_with_the_action_to_apply(operator, coupon, ctx):
    decision = pending(coupon, ctx)
    read = operator.get(f"/api/v1/refunds/{decision.pk}").json()

    answer = operator.post(f"/api/v1/refunds/{decision.pk}/approve",
                           {"note": "customer verified", "action": "RETURN",
                            "seen_entry": read["journal_tip"]},
                           format="json", HTTP_IDEMPOTENCY_KEY="approve-1")

    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert (body["status"], body["executed_action"]) == ("EXECUTED", "RETURN")
    assert body["review"]["by"] == "user:operator"
    assert body["review"]["note"] == "customer verified"
    assert coupon_row(coupon) == ("AVAILABLE", 4)
    again = operator.post(f"/api/v1/refunds/{decision.pk}/approve",
                          {"note": "customer verified", "action": "RETURN",
                           "seen_entry": read["journal_tip"]},
                          format="json", HTTP_IDEMPOTENCY_KEY="approve-1")
    assert again.json() == body and again.headers["Idempotent-Replayed"] == "true"
    twice = operator.post(f"/api/v1/refunds/{decision.pk}/approve",
                          {"action": "RETURN", "seen_entry": shown(decision.pk)},
                          format="json", HTTP_IDEMPOTENCY_KEY="approve-2")
    assert twice.status_code == 409
    assert twice.json()["error"]["details"]["current_state"] == "EXECUTED"


def test_a_manual_review_cannot_be_approved_without_an_action(operator, coupon, ctx):
    decision = pending(coupon, ctx)

    answer = operator.post(f"/api/v1/refunds/{decision.pk}/approve",
                           {"note": "ok", "seen_entry": shown(decision.pk)},
                           format="json", HTTP_IDEMPOTENCY_KEY="approve-1")

    assert answer.status_code == 400
    decision.refresh_from_db()
    assert decision.status == Status.PENDING_APPROVAL and coupon_row(coupon) == ("USED", 3)


def test_an_operator_rejects_with_a_note_and_the_coupon_stays_used(operator, coupon, ctx):
    decision = pending(coupon, ctx)

    no_note = operator.post(f"/api/v1/refunds/{decision.pk}/reject",
                            {"seen_entry": shown(decision.pk)},
                            format="json", HTTP_IDEMPOTENCY_KEY="reject-0")
    answer = operator.post(f"/api/v1/refunds/{decision.pk}/reject",
                           {"note": "refund abuse pattern", "seen_entry": shown(decision.pk)},
                           format="json", HTTP_IDEMPOTENCY_KEY="reject-1")

    assert no_note.status_code == 400
    assert answer.status_code == 200
    assert answer.json()["status"] == "REJECTED"
    assert answer.json()["review"] == {"by": "user:operator", "at": answer.json()["review"]["at"],
                                       "note": "refund abuse pattern"}
    assert coupon_row(coupon) == ("USED", 3)


def test_support_cannot_approve(support, coupon, ctx):
    decision = pending(coupon, ctx)

    answer = support.post(f"/api/v1/refunds/{decision.pk}/approve", {"action": "RETURN"},
                          format="json", HTTP_IDEMPOTENCY_KEY="a")

    assert answer.status_code == 403
    assert answer.json()["error"]["details"]["capability"] == "approve_refunds"
    assert support.get(f"/api/v1/refunds/{decision.pk}").status_code == 200


def test_a_service_client_can_never_approve_even_with_the_capability(api, coupon, ctx):
    decision = pending(coupon, ctx)
    _, key = service_client_create(name="rogue", capabilities=["approve_refunds", "read_coupons"])
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    approve = api.post(f"/api/v1/refunds/{decision.pk}/approve", {"action": "RETURN"},
                       format="json", HTTP_IDEMPOTENCY_KEY="a")
    reject = api.post(f"/api/v1/refunds/{decision.pk}/reject", {"note": "no"},
                      format="json", HTTP_IDEMPOTENCY_KEY="b")

    assert (approve.status_code, reject.status_code) == (403, 403)
    decision.refresh_from_db()
    assert decision.status == Status.PENDING_APPROVAL


def test_a_client_without_send_refunds_cannot_post_refunds(api, coupon):
    _, key = service_client_create(name="payments", capabilities=["read_coupons"])
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    answer = post_refund(api)

    assert answer.status_code == 403
    assert answer.json()["error"]["details"]["capability"] == "send_refunds"


def test_the_timeline_shows_the_refund_its_approval_and_the_return_in_order(
    api, operator, coupon, ctx, clock
):
    decision = pending(coupon, ctx, clock)
    clock.advance(hours=1)
    operator.post(f"/api/v1/refunds/{decision.pk}/approve",
                  {"action": "RETURN", "note": "ok", "seen_entry": shown(decision.pk)},
                  format="json", HTTP_IDEMPOTENCY_KEY="approve-1")

    page = api.get(f"/api/v1/coupons/{coupon.pk}/timeline").json()
    titles = [e["title"] for e in page["results"]]

    assert titles[-5:] == [
        "REDEEM LOCKED→USED (v3)",
        "Refund r-risk received (FULL, 270.00)",
        "Refund decision: MANUAL_REVIEW, for an operator",
        "Refund decision approved: RETURN",
        "RETURN USED→AVAILABLE (v4)",
    ]


def test_the_schema_documents_the_refund_endpoints_and_their_errors(api):
    paths = api.get("/api/v1/schema/?format=json").json()["paths"]

    approve = paths["/api/v1/refunds/{decision_id}/approve"]["post"]
    assert {"200", "400", "403", "404", "409"} <= set(approve["responses"])
    assert "Idempotency-Key" in {p["name"] for p in approve["parameters"]}
    assert {"200", "201", "400", "403"} <= set(paths["/api/v1/refunds"]["post"]["responses"])
    preview = "/api/v1/return-policies/{policy_id}/versions/{number}/preview"
    assert "404" in paths[preview]["post"]["responses"]
