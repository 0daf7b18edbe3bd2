"""/api/v1/return-policies: policy admins write, everyone who reads may look, nothing else
changes a published version."""

import uuid

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from refunds.models import ReturnPolicy, ReturnPolicyVersion

pytestmark = pytest.mark.django_db

BASE = "/api/v1/return-policies"
SEVEN_DAYS = [
    {"label": "exchange coupons never return", "when": {"template_kind": ["EXCHANGE"]},
     "action": "KEEP_USED"},
    {"label": "partial refunds keep it used", "when": {"refund_type": "PARTIAL"},
     "action": "KEEP_USED"},
    {"label": "full refund within 7 days returns it",
     "when": {"refund_type": "FULL", "days_since_redemption_max": 7}, "action": "RETURN"},
    {"label": "otherwise it stays used", "when": {}, "action": "KEEP_USED"},
]


def member_of(group: str) -> APIClient:
    user = User.objects.create_user(f"{group}-user", password="pw")
    user.groups.add(Group.objects.get(name=group))
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def admin_api(db, clock):
    return member_of("policy_admin")


def write(client, method, path, body=None, *, key=None):
    return getattr(client, method)(f"{BASE}{path}", body or {}, format="json",
                                   HTTP_IDEMPOTENCY_KEY=key or str(uuid.uuid4()))


def ok(response, status=200) -> dict:
    assert response.status_code == status, response.content
    return response.json()


def error(response, status, code) -> dict:
    assert response.status_code == status, response.content
    body = response.json()["error"]
    assert body["code"] == code
    return body["details"]


@pytest.fixture
def policy(admin_api) -> dict:
    return ok(write(admin_api, "post", "", {"code": "seven-days", "name": "Seven days",
                                           "rules": SEVEN_DAYS}), 201)


def default_id() -> int:
    return ReturnPolicy.objects.get(code="default").pk


# --- reading ------------------------------------------------------------------------------


def test_support_reads_policies_and_versions(db, clock):
    support = member_of("support")

    listed = ok(support.get(BASE))["results"]
    assert [(p["code"], p["current_version"], p["draft_version"]) for p in listed] == [
        ("default", 1, None)]
    versions = ok(support.get(f"{BASE}/{default_id()}/versions"))["results"]
    assert [(v["number"], v["status"], v["published_by"]) for v in versions] == [
        (1, "PUBLISHED", "migration")]
    one = ok(support.get(f"{BASE}/{default_id()}/versions/1"))
    assert one["rules"][-1]["when"] == {}
    assert ok(support.get(f"{BASE}/{default_id()}"))["code"] == "default"


def test_unknown_policy_or_version_is_404(admin_api):
    assert error(admin_api.get(f"{BASE}/999999"), 404, "NOT_FOUND")
    error(admin_api.get(f"{BASE}/999999/versions"), 404, "NOT_FOUND")
    error(admin_api.get(f"{BASE}/{default_id()}/versions/2"), 404, "NOT_FOUND")
    error(admin_api.get(f"{BASE}/{default_id()}/versions/999999999999999999"), 404,
          "NOT_FOUND")
    error(write(admin_api, "post", f"/{default_id()}/versions/7/publish"), 404, "NOT_FOUND")


def test_anonymous_callers_are_refused(db):
    error(APIClient().get(BASE), 401, "NOT_AUTHENTICATED")


# --- who may write ------------------------------------------------------------------------


@pytest.mark.parametrize("group", ["support", "operator"])
def test_only_policy_admins_write(db, clock, group):
    client = member_of(group)
    path = f"/{default_id()}/versions"

    for response in (
        write(client, "post", "", {"code": "x", "name": "X"}),
        write(client, "post", path),
        write(client, "patch", f"{path}/1", {"rules": SEVEN_DAYS}),
        write(client, "post", f"{path}/1/publish"),
    ):
        assert error(response, 403, "PERMISSION_DENIED") == {"capability": "edit_policies"}
    assert ReturnPolicyVersion.objects.count() == 1
    assert ok(client.get(BASE))["count"] == 1  # reading is still fine


def test_service_clients_never_edit_policies(api):
    response = write(api, "post", "", {"code": "x", "name": "X"})

    assert error(response, 403, "PERMISSION_DENIED") == {"capability": "edit_policies"}


# --- writing ------------------------------------------------------------------------------


def test_policy_admin_creates_a_policy_with_a_first_draft(admin_api, policy):
    assert (policy["code"], policy["current_version"], policy["draft_version"]) == (
        "seven-days", None, 1)
    draft = ok(admin_api.get(f"{BASE}/{policy['id']}/versions/1"))
    assert (draft["status"], draft["created_by"], draft["based_on"]) == (
        "DRAFT", "user:policy_admin-user", None)
    assert draft["rules"][2] == {
        "label": "full refund within 7 days returns it", "action": "RETURN",
        "requires_approval": False, "compensation": {},
        "when": {"refund_type": "FULL", "days_since_redemption_max": 7}}


def test_writes_need_an_idempotency_key_and_replay_their_answer(admin_api):
    response = admin_api.post(BASE, {"code": "k", "name": "K"}, format="json")
    error(response, 400, "IDEMPOTENCY_KEY_MISSING")

    first = write(admin_api, "post", "", {"code": "k", "name": "K"}, key="make-k")
    again = write(admin_api, "post", "", {"code": "k", "name": "K"}, key="make-k")
    assert ok(first, 201) == ok(again, 201)
    assert again["Idempotent-Replayed"] == "true"
    assert ReturnPolicy.objects.filter(code="k").count() == 1
    error(write(admin_api, "post", "", {"code": "k2", "name": "K"}, key="make-k"), 422,
          "IDEMPOTENCY_KEY_REUSED")


def test_bad_input_is_a_field_level_validation_error(admin_api, policy):
    path = f"/{policy['id']}/versions/1"
    bad = [dict(rule) for rule in SEVEN_DAYS]
    bad[2] = {**bad[2], "when": {"refunded_share_min": 3}}

    details = error(write(admin_api, "patch", path, {"rules": bad}), 400, "VALIDATION_ERROR")

    assert details == {"rules": {"2": {"when": {
        "refunded_share_min": ["must be between 0 and 1"]}}}}
    assert error(write(admin_api, "patch", path, {}), 400, "VALIDATION_ERROR") == {
        "rules": ["This field is required."]}
    assert error(write(admin_api, "post", "", {"code": "no spaces", "name": "X"}), 400,
                 "VALIDATION_ERROR")["code"]
    assert ok(admin_api.get(f"{BASE}{path}"))["rules"][2]["when"]["refund_type"] == "FULL"


def test_duplicate_code_is_refused(admin_api, policy):
    details = error(write(admin_api, "post", "", {"code": "seven-days", "name": "Again"}), 400,
                    "VALIDATION_ERROR")

    assert details == {"code": ["already taken"]}


def test_draft_edit_publish_then_the_version_is_frozen(admin_api, policy):
    path = f"/{policy['id']}/versions/1"
    edited = [*SEVEN_DAYS[:-1], {"label": "otherwise an operator looks", "when": {},
                                 "action": "MANUAL_REVIEW"}]

    assert ok(write(admin_api, "patch", path, {"rules": edited}))["rules"][-1]["action"] == (
        "MANUAL_REVIEW")
    published = ok(write(admin_api, "post", f"{path}/publish"))
    assert (published["status"], published["published_by"]) == (
        "PUBLISHED", "user:policy_admin-user")

    details = error(write(admin_api, "patch", path, {"rules": SEVEN_DAYS}), 409,
                    "INVALID_STATE")
    assert details == {"current_state": "PUBLISHED", "current_version": 1,
                       "policy": "seven-days"}
    error(write(admin_api, "post", f"{path}/publish"), 409, "INVALID_STATE")
    assert ReturnPolicyVersion.objects.get(policy__code="seven-days").rules[-1]["action"] == (
        "MANUAL_REVIEW")


def test_new_draft_comes_from_the_latest_version_one_at_a_time(admin_api):
    path = f"/{default_id()}/versions"

    draft = ok(write(admin_api, "post", path), 201)
    assert (draft["number"], draft["status"], draft["based_on"]) == (
        2, "DRAFT", {"policy_id": default_id(), "number": 1})
    assert draft["rules"] == ok(admin_api.get(f"{BASE}{path}/1"))["rules"]

    details = error(write(admin_api, "post", path), 409, "INVALID_STATE")
    assert (details["current_state"], details["current_version"]) == ("DRAFT", 2)

    # Unchanged, the draft is refused: it would publish a version identical to v1.
    details = error(write(admin_api, "post", f"{path}/2/publish"), 409, "INVALID_STATE")
    assert (details["current_state"], details["same_as"]) == ("DRAFT", 1)
    rules = ok(admin_api.get(f"{BASE}{path}/2"))["rules"]
    rules[-1]["label"] = "Otherwise it stays used"
    ok(write(admin_api, "patch", f"{path}/2", {"rules": rules}))
    ok(write(admin_api, "post", f"{path}/2/publish"))
    third = ok(write(admin_api, "post", path, {"rules": SEVEN_DAYS}), 201)
    assert (third["number"], third["rules"][0]["label"]) == (3, "exchange coupons never return")
    listed = ok(admin_api.get(BASE))["results"][0]
    assert (listed["current_version"], listed["draft_version"]) == (2, 3)


# --- templates name their policy ----------------------------------------------------------


def test_template_api_takes_the_policy_by_code_or_id(admin_api, api, policy):
    template = {"name": "30 off", "kind": "AMOUNT_OFF", "face_value": "30.00",
                "valid_days": 30}
    error(api.post("/api/v1/templates", {**template, "code": "a", "return_policy": "seven-days"},
                   format="json", HTTP_IDEMPOTENCY_KEY="t-a"), 400, "VALIDATION_ERROR")
    ok(write(admin_api, "post", f"/{policy['id']}/versions/1/publish"))

    by_code = ok(api.post("/api/v1/templates",
                          {**template, "code": "a", "return_policy": "seven-days"},
                          format="json", HTTP_IDEMPOTENCY_KEY="t-b"), 201)
    by_id = ok(api.post("/api/v1/templates",
                        {**template, "code": "b", "return_policy": policy["id"]},
                        format="json", HTTP_IDEMPOTENCY_KEY="t-c"), 201)
    default = ok(api.post("/api/v1/templates", {**template, "code": "c"},
                          format="json", HTTP_IDEMPOTENCY_KEY="t-d"), 201)

    assert by_code["return_policy"] == by_id["return_policy"] == policy["id"]
    assert default["return_policy"] is None
    assert default["issuable"] is True
