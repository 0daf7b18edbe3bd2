"""PATCH /api/v1/templates/{id}: a partial edit behind an Idempotency-Key, as a new version."""

import pytest

from coupons.models import CouponTemplate, CouponTemplateVersion
from tests.api.test_commands_api import TEMPLATE, error, ok, post

pytestmark = pytest.mark.django_db


def patch(client, template_id, body, *, key="edit-1"):
    return client.patch(f"/api/v1/templates/{template_id}", body, format="json",
                        HTTP_IDEMPOTENCY_KEY=key)


@pytest.fixture
def created(api):
    return ok(post(api, "templates", {**TEMPLATE, "returnable": False}), 201)


def versions(template_id) -> list:
    return list(CouponTemplateVersion.objects.filter(template_id=template_id)
                .order_by("version").values_list("version", "face_value", "name"))


def test_an_edit_answers_the_new_version_and_keeps_the_terms_not_sent(api, created, clock):
    clock.advance(hours=1)

    body = ok(patch(api, created["id"], {"face_value": "35.00", "name": "35 off 200"}))

    assert (body["version"], body["face_value"], body["name"]) == (2, "35.00", "35 off 200")
    # Terms not sent stay as they were; the create's defaults do not come back.
    assert (body["returnable"], body["min_order_amount"], body["valid_days"]) == (
        False, "200.00", 30)
    assert body["updated_at"] != created["updated_at"]
    assert ok(api.get(f"/api/v1/templates/{created['id']}")) == body
    assert [(v, str(value), name) for v, value, name in versions(created["id"])] == [
        (1, "30.00", "30 off 200"), (2, "35.00", "35 off 200"),
    ]


def test_coupons_already_issued_keep_their_template_version(api, created):
    before = ok(post(api, "coupons", {"template_id": created["id"], "user_id": "u1"}), 201)

    ok(patch(api, created["id"], {"face_value": "50.00", "valid_days": 90}))
    after = ok(post(api, "coupons", {"template_id": created["id"], "user_id": "u2"}), 201)

    assert ok(api.get(f"/api/v1/coupons/{before['id']}"))["template_version"] == 1
    assert after["template_version"] == 2
    assert before["valid_until"] < after["valid_until"]


def test_a_replayed_edit_answers_the_same_version_without_another(api, created):
    first = patch(api, created["id"], {"face_value": "40.00"}, key="same")
    again = patch(api, created["id"], {"face_value": "40.00"}, key="same")

    assert again.json() == ok(first)
    assert again["Idempotent-Replayed"] == "true"
    assert len(versions(created["id"])) == 2


def test_each_edit_under_its_own_key_is_a_new_version(api, created):
    ok(patch(api, created["id"], {"face_value": "40.00"}, key="edit-1"))
    body = ok(patch(api, created["id"], {"min_order_amount": "250.00"}, key="edit-2"))

    assert body["version"] == 3
    assert (body["face_value"], body["min_order_amount"]) == ("40.00", "250.00")


def test_an_edit_that_changes_nothing_makes_no_version(api, created):
    body = ok(patch(api, created["id"], {"face_value": "30.00"}))

    assert body["version"] == 1
    assert len(versions(created["id"])) == 1


def test_the_key_of_another_edit_is_refused(api, created):
    ok(patch(api, created["id"], {"face_value": "40.00"}, key="k"))

    error(patch(api, created["id"], {"face_value": "45.00"}, key="k"), 422,
          "IDEMPOTENCY_KEY_REUSED")
    response = api.patch(f"/api/v1/templates/{created['id']}", {"name": "x"}, format="json")
    error(response, 400, "IDEMPOTENCY_KEY_MISSING")
    assert CouponTemplate.objects.get().face_value == 40


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        pytest.param({"face_value": "-1"}, {"face_value"}, id="negative-value"),
        pytest.param({"kind": "FREE"}, {"kind"}, id="unknown-kind"),
        pytest.param({"code": "renamed"}, {"code"}, id="code-never-changes"),
    ],
)
def test_an_invalid_edit_is_a_400_naming_the_fields_and_changes_nothing(
    api, created, body, fields
):
    assert set(error(patch(api, created["id"], body), 400, "VALIDATION_ERROR")) == fields
    assert versions(created["id"]) == [(1, 30, "30 off 200")]
    assert ok(api.get(f"/api/v1/templates/{created['id']}")) == created


@pytest.mark.parametrize(
    ("body", "field"),
    [
        pytest.param({"kind": "PERCENT_OFF"}, "percent_off", id="terms-that-cannot-price"),
        pytest.param({"valid_until": "2026-07-01T00:00:00Z"}, "valid_until",
                     id="window-beside-the-stored-days"),
        pytest.param({"valid_days": None}, "valid_until", id="no-validity-left"),
    ],
)
def test_an_edit_valid_alone_that_breaks_the_stored_terms_is_a_409_naming_the_field(
    api, created, body, field
):
    details = error(patch(api, created["id"], body), 409, "TERMS_CONFLICT")

    assert details == {field: [details[field][0]], "current_version": 1}
    assert versions(created["id"]) == [(1, 30, "30 off 200")]
    assert ok(api.get(f"/api/v1/templates/{created['id']}")) == created


def test_an_unknown_return_policy_is_a_404_naming_what_was_sent(api, created):
    details = error(post(api, "templates", {**TEMPLATE, "code": "other",
                                            "return_policy": "NO-SUCH"}), 404, "NOT_FOUND")
    assert details == {"return_policy": "NO-SUCH"}
    assert error(patch(api, created["id"], {"return_policy": 99999}), 404,
                 "NOT_FOUND") == {"return_policy": 99999}
    assert CouponTemplate.objects.count() == 1
    assert versions(created["id"]) == [(1, 30, "30 off 200")]


def test_an_edit_of_an_unknown_template_is_404(api, clock):
    assert error(patch(api, 9999, {"name": "x"}), 404, "NOT_FOUND") == {"template_id": 9999}
