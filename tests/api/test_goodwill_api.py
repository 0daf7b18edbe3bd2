"""The goodwill coupon's API twin: support proposes, another person approves and the coupon is
issued with its ISSUE ledger row and outbox event; refusals answer stable codes."""

import itertools

import pytest

from coupons.models import CouponOperation, GoodwillProposal, OutboxEvent
from coupons.services.templates import template_set_issuable
from tests.api.roles import person, signed_in

pytestmark = pytest.mark.django_db

_keys = itertools.count(1)


@pytest.fixture
def sam(db):
    return signed_in(person("sam", group="support"))


@pytest.fixture
def olga(db):
    return signed_in(person("olga", group="operator"))


def post(client, path, key=None, **body):
    return client.post(f"/api/v1/{path}", body, format="json",
                       HTTP_IDEMPOTENCY_KEY=key or f"key-{next(_keys)}")


def propose(client, template, key=None, **body):
    body = {"template_id": template.pk, "user_id": "u9", "answers": "order-7",
            "reason": "the order arrived cold", **body}
    return post(client, "goodwill", key, **body)


def seen(client, goodwill_id) -> str:
    return ok(client.get(f"/api/v1/goodwill/{goodwill_id}"))["journal_tip"]


def decide(client, goodwill_id, action="approve", key=None, **body):
    body.setdefault("seen_entry", seen(client, goodwill_id))
    return post(client, f"goodwill/{goodwill_id}/{action}", key, **body)


def ok(response, status=200) -> dict:
    assert response.status_code == status, response.content
    return response.json()


def error(response, status, code) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"]["code"] == code, body
    return body["error"]["details"]


def test_support_proposes_an_operator_approves_and_the_coupon_is_issued(sam, olga, template):
    proposal = ok(propose(sam, template), 201)
    assert (proposal["status"], proposal["proposed_by"], proposal["issued_coupon_id"]) == (
        "PROPOSED", "user:sam", None)
    error(decide(sam, proposal["id"]), 403, "PERMISSION_DENIED")  # support cannot decide

    approved = ok(decide(olga, proposal["id"], note="sorry about that"))

    assert (approved["status"], approved["decided_by"]) == ("APPROVED", "user:olga")
    coupon = ok(olga.get(f"/api/v1/coupons/{approved['issued_coupon_id']}"))
    assert (coupon["user_id"], coupon["status"], coupon["template_id"]) == (
        "u9", "AVAILABLE", template.pk)
    issue = CouponOperation.objects.get(coupon_id=coupon["id"])
    assert (issue.op_type, issue.actor) == ("ISSUE", "user:olga")
    assert issue.reason == (f"goodwill coupon {proposal['id']} for order-7, issued from "
                            f"{template.code} v1")
    assert OutboxEvent.objects.filter(operation=issue, event_type="CouponIssued").exists()


def test_the_proposer_is_refused_even_as_an_operator(olga, template):
    proposal = ok(propose(olga, template), 201)

    details = error(decide(olga, proposal["id"]), 403, "SAME_OPERATOR")

    assert details == {"goodwill_id": proposal["id"], "proposed_by": "user:olga"}
    assert GoodwillProposal.objects.get().status == "PROPOSED"


def test_an_inactive_template_is_refused(sam, template):
    template_set_issuable(template_id=template.pk, issuable=False)

    details = error(propose(sam, template), 422, "TEMPLATE_INACTIVE")

    assert details["template_id"] == template.pk
    assert not GoodwillProposal.objects.exists()


def test_a_second_for_the_same_case_is_refused_until_one_is_rejected(sam, olga, template):
    first = ok(propose(sam, template), 201)
    details = error(propose(sam, template, reason="again"), 409, "GOODWILL_ALREADY_GIVEN")
    assert details["goodwill_id"] == first["id"]

    ok(decide(olga, first["id"], "reject", note="a voucher went out by mail"))
    second = ok(propose(sam, template), 201)
    ok(decide(olga, second["id"]))
    error(propose(sam, template), 409, "GOODWILL_ALREADY_GIVEN")


def test_a_retry_with_the_same_key_answers_the_first_result(sam, olga, template):
    first = propose(sam, template, key="gw-1")
    again = propose(sam, template, key="gw-1")

    assert again.status_code == 201 and again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert GoodwillProposal.objects.count() == 1

    goodwill_id = first.json()["id"]
    tip = seen(olga, goodwill_id)
    approved = decide(olga, goodwill_id, key="ok-1", seen_entry=tip)
    replayed = decide(olga, goodwill_id, key="ok-1", seen_entry=tip)
    assert replayed.json() == approved.json()
    assert CouponOperation.objects.filter(coupon__user_id="u9").count() == 1
    error(propose(sam, template, key="gw-1", answers="order-8"), 422, "IDEMPOTENCY_KEY_REUSED")


def test_proposed_from_a_coupon_it_goes_to_the_coupon_s_owner(sam, coupon, template):
    proposal = ok(post(sam, "goodwill", template_id=template.pk, coupon_id=coupon.pk,
                       answers="order-7", reason="cold"), 201)
    assert (proposal["user_id"], proposal["coupon_id"]) == (coupon.user_id, coupon.pk)


def test_a_missing_customer_case_or_template_is_a_clear_error(sam, template):
    details = error(post(sam, "goodwill", template_id=template.pk, answers="o", reason="r"),
                    400, "VALIDATION_ERROR")
    assert "user_id" in details
    error(propose(sam, template, template_id=99999), 404, "NOT_FOUND")


def test_the_list_filters_by_status_and_customer(sam, olga, template):
    first = ok(propose(sam, template), 201)
    ok(propose(sam, template, user_id="u10"), 201)
    ok(decide(olga, first["id"]))

    waiting = ok(olga.get("/api/v1/goodwill?status=PROPOSED"))["results"]
    mine = ok(olga.get("/api/v1/goodwill?user_id=u9"))["results"]

    assert [p["user_id"] for p in waiting] == ["u10"]
    assert [(p["id"], p["status"]) for p in mine] == [(first["id"], "APPROVED")]
    assert all(len(p["journal_tip"]) == 64 for p in [*waiting, *mine])


def test_the_new_codes_are_in_the_error_reference(client):
    page = client.get("/api/v1/errors/").content.decode()
    assert 'id="goodwill_already_given"' in page and 'id="template_inactive"' in page
