"""Errors as RFC 9457 problem details for a client that asks (docs/api.md, Problem details);
today's envelope for one that does not; every code documented once in docs/api.md."""

import re
import uuid
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator

from api.error_serializers import ERROR_CODES
from api.problems import TITLES, wants_problem
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

PROBLEM = {"HTTP_ACCEPT": "application/problem+json"}
DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
LOCK = {"order_id": "A", "user_id": "u1", "order_amount": "300.00"}


def lock(api, coupon, body=LOCK, **headers):
    return api.post(f"/api/v1/coupons/{coupon.pk}/lock", body, format="json",
                    HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()), **headers)


def test_a_refusal_is_problem_details_with_the_envelope_beside_it(api, coupon, clock):
    response = lock(api, coupon, {**LOCK, "order_amount": "100.00"}, **PROBLEM)

    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == "/api/v1/errors/#threshold_not_met"
    assert body["title"] == "Threshold not met"
    assert body["status"] == 422
    assert body["code"] == "THRESHOLD_NOT_MET"
    assert body["detail"] == body["error"]["message"]
    assert body["details"] == body["error"]["details"]
    assert body["error"]["code"] == "THRESHOLD_NOT_MET"


def test_without_asking_the_answer_is_todays_envelope(api, coupon, clock):
    response = lock(api, coupon, {**LOCK, "order_amount": "100.00"})

    assert response.status_code == 422
    assert response["Content-Type"] == "application/json"
    assert set(response.json()) == {"error"}
    assert "Accept" in response["Vary"]


@pytest.mark.parametrize("accept", ["*/*", "application/json",
                                    "application/problem+json;q=0, application/json"])
def test_only_naming_problem_json_outright_asks_for_it(api, accept):
    response = api.get("/api/v1/coupons/999999", HTTP_ACCEPT=accept)

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_every_error_source_answers_problem_details(api, client):
    # DRF's handler, the middleware's unrouted 404 and malformed id, and a 401 before any view.
    answers = {
        "NOT_FOUND": api.get("/api/v1/coupons/999999", **PROBLEM),
        "VALIDATION_ERROR": api.get("/api/v1/coupons/%201", **PROBLEM),
        "NOT_AUTHENTICATED": client.get("/api/v1/coupons", **PROBLEM),
        "METHOD_NOT_ALLOWED": api.delete("/api/v1/coupons", **PROBLEM),
    }
    answers["NOT_FOUND unrouted"] = api.get("/api/v1/no-such-thing", **PROBLEM)
    for code, response in answers.items():
        code = code.split()[0]
        assert response["Content-Type"] == "application/problem+json", code
        assert response.json()["code"] == code
        assert response.json()["status"] == response.status_code
        assert response.json()["type"].endswith("#" + code.lower())


def test_asking_for_problem_details_alone_still_gets_json_answers(api, coupon, clock):
    response = api.get(f"/api/v1/coupons/{coupon.pk}", **PROBLEM)

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json()["id"] == coupon.pk


def test_a_replayed_refusal_is_negotiated_like_the_first(api, coupon, clock):
    body, key = {**LOCK, "order_amount": "100.00"}, str(uuid.uuid4())
    path = f"/api/v1/coupons/{coupon.pk}/lock"
    first = api.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY=key)
    replay = api.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY=key, **PROBLEM)

    assert first["Content-Type"] == "application/json"
    assert replay["Content-Type"] == "application/problem+json"
    assert replay.json()["error"] == first.json()["error"]


@pytest.mark.usefixtures("zh")
def test_the_title_and_detail_are_in_the_readers_language(api):
    response = api.get("/api/v1/coupons/999999", HTTP_ACCEPT_LANGUAGE="zh-hans", **PROBLEM)

    assert response.json()["title"] == "未找到"
    assert response.json()["detail"] == "优惠券不存在。"
    assert response.json()["code"] == "NOT_FOUND"


def test_the_accept_header_is_read_as_a_list_of_media_ranges():
    assert wants_problem("application/json, application/problem+json")
    assert wants_problem("Application/Problem+JSON; q=0.5")
    assert not wants_problem("application/problem+json; q=0")
    assert not wants_problem("application/problem+json;q=0.0")
    assert not wants_problem("*/*")
    assert not wants_problem("")


def test_every_code_has_a_title_and_its_type_names_its_heading():
    # tests/contract/test_schema_agrees.py: each code has one heading in docs/api.md.
    headings = re.findall(r"^#### `([A-Z_]+)`$", DOCS.read_text(), flags=re.MULTILINE)

    assert sorted(TITLES) == ERROR_CODES == sorted(headings)


def test_the_schema_declares_problem_details_beside_every_error_envelope():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    answers = [(path, status, answer) for path, item in schema["paths"].items()
               for operation in item.values()
               for status, answer in operation["responses"].items() if int(status) >= 400]

    assert answers
    for path, status, answer in answers:
        assert answer["content"]["application/problem+json"]["schema"] == {
            "$ref": "#/components/schemas/ProblemOutput"}, (path, status)
    problem = schema["components"]["schemas"]["ProblemOutput"]
    assert {"type", "title", "status", "detail", "code", "error"} <= set(problem["required"])


def test_the_problem_type_resolves_on_the_instance_to_the_codes_entry(api, client):
    """The `type` of a problem is a page the instance serves, public, with an entry per code
    at the anchor the URI names."""
    problem = api.get("/api/v1/coupons/0", HTTP_ACCEPT="application/problem+json").json()
    page, anchor = problem["type"].split("#")

    reference = client.get(page)

    assert reference.status_code == 200
    assert reference["Content-Type"].startswith("text/html")
    html = reference.content.decode()
    assert f'id="{anchor}"' in html and anchor == "not_found"
    for code in ERROR_CODES:
        assert f'id="{code.lower()}"' in html, code
    assert "HTTP status 404" in html


def test_the_problem_type_follows_api_error_docs_url_as_docs_deploy_says(api, settings):
    """An instance that publishes docs/api.md elsewhere points `type` there; docs/deploy.md
    names the variable with the default the server takes."""
    deploy = (Path(__file__).resolve().parents[2] / "docs" / "deploy.md").read_text()
    settings.API_ERROR_DOCS_URL = "https://docs.example.com/api/errors/"

    problem = api.get("/api/v1/coupons/0", HTTP_ACCEPT="application/problem+json").json()

    assert problem["type"] == "https://docs.example.com/api/errors/#not_found"
    assert "| `API_ERROR_DOCS_URL` | `/api/v1/errors/` |" in deploy
