"""Cursor pages with `Link` (docs/api.md, Pages and cursors): a walk with `?cursor=` sees every
row once in the list's order, rows added meanwhile do not shift it, and a cursor that was
changed or belongs to another list is a 400 INVALID_CURSOR."""

import re
import uuid
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from coupons.services import coupon_issue
from tests.api.roles import person, signed_in

pytestmark = pytest.mark.django_db

LISTS = ["coupons", "templates", "cases", "refunds", "compensations", "reconciliation",
         "return-policies"]


def walk(api, url) -> tuple[list, list]:
    """Every page from `url` on, following `next`; answers the rows and the responses."""
    rows, answers = [], []
    while url:
        response = api.get(url)
        assert response.status_code == 200, response.json()
        answers.append(response)
        rows += response.json()["results"]
        url = response.json()["next"]
    return rows, answers


def links(response) -> dict:
    return {rel: url for url, rel in re.findall(r'<([^>]*)>; rel="(\w+)"',
                                                 response.get("Link", ""))}


def cursor_of(response) -> str:
    return parse_qs(urlsplit(response.json()["next"]).query)["cursor"][0]


@pytest.fixture
def coupons(template, ctx):
    return [coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
            for _ in range(7)]


def test_a_cursor_walk_sees_every_coupon_once_in_the_pages_order(api, coupons):
    by_pages = api.get("/api/v1/coupons?page_size=200").json()["results"]
    rows, answers = walk(api, "/api/v1/coupons?cursor=&page_size=3")

    assert [row["id"] for row in rows] == [row["id"] for row in by_pages]
    assert len(answers) == 3
    for answer in answers:
        assert answer.json()["count"] == 7
        assert answer.json()["previous"] is None
        assert links(answer).get("next") == answer.json()["next"]
    assert "Link" not in answers[-1]


def test_rows_added_during_a_walk_do_not_repeat_or_hide_one(api, coupons, template, ctx):
    first = api.get("/api/v1/coupons?cursor=&page_size=4").json()
    coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx)
    rest, _answers = walk(api, first["next"])

    seen = [row["id"] for row in first["results"] + rest]
    assert len(seen) == len(set(seen)) == 8


def test_the_filters_stay_with_the_cursor(api, coupons, template, ctx):
    coupon_issue(template_id=template.pk, user_id="someone-else", ctx=ctx)
    rows, _answers = walk(api, "/api/v1/coupons?user_id=u1&cursor=&page_size=2")

    assert {row["user_id"] for row in rows} == {"u1"}
    assert len(rows) == 7


@pytest.mark.parametrize("change", [
    lambda cursor: cursor[:-1] + ("A" if cursor[-1] != "A" else "B"),
    lambda cursor: cursor[:10],
    lambda cursor: "not-a-cursor",
])
def test_a_changed_cursor_is_refused(api, coupons, change):
    cursor = cursor_of(api.get("/api/v1/coupons?cursor=&page_size=2"))

    response = api.get(f"/api/v1/coupons?page_size=2&cursor={quote(change(cursor))}")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_CURSOR", response.json()


def test_a_cursor_of_another_list_is_refused(api, coupons):
    ledger = f"/api/v1/coupons/{coupons[0].pk}/operations"
    cursor = cursor_of(api.get("/api/v1/coupons?cursor=&page_size=2"))

    response = api.get(f"{ledger}?cursor={quote(cursor)}")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_CURSOR"


def test_beside_a_cursor_the_page_is_ignored(api, coupons):
    both = api.get("/api/v1/coupons?page=2&cursor=&page_size=3")
    cursor = api.get("/api/v1/coupons?cursor=&page_size=3")

    assert both.status_code == 200
    assert both.json()["results"] == cursor.json()["results"]
    assert "page=" not in both.json()["next"]


def test_page_numbers_stay_the_default_and_send_link_too(api, coupons):
    middle = api.get("/api/v1/coupons?page=2&page_size=3")

    assert middle.json()["count"] == 7
    assert links(middle) == {"next": middle.json()["next"], "prev": middle.json()["previous"]}
    assert "page=3" in links(middle)["next"]


def test_the_timeline_walked_by_cursor_is_the_timeline_by_pages(api, coupon, clock):
    path = f"/api/v1/coupons/{coupon.pk}"
    for n in range(3):
        lease = api.post(f"{path}/lock", {"order_id": f"o{n}", "user_id": "u1",
                                          "order_amount": "300.00"},
                         format="json", HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4())).json()
        api.post(f"{path}/release", {"order_id": f"o{n}", "lock_token": lease["lock_token"],
                                     "expected_version": lease["state_version"],
                                     "reason": "closed"},
                 format="json", HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))
    by_pages = api.get(f"{path}/timeline?page_size=200").json()

    rows, answers = walk(api, f"{path}/timeline?cursor=&page_size=2")

    assert rows == by_pages["results"]
    assert len(rows) >= 7 and len(answers) == (len(rows) + 1) // 2
    assert {answer.json()["count"] for answer in answers} == {by_pages["count"]}


def test_the_ledger_walked_by_cursor_is_every_version_once(api, coupon, clock):
    path = f"/api/v1/coupons/{coupon.pk}"
    for n in range(2):
        lease = api.post(f"{path}/lock", {"order_id": f"o{n}", "user_id": "u1",
                                          "order_amount": "300.00"},
                         format="json", HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4())).json()
        api.post(f"{path}/release", {"order_id": f"o{n}", "lock_token": lease["lock_token"],
                                     "expected_version": lease["state_version"],
                                     "reason": "closed"},
                 format="json", HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))

    rows, _answers = walk(api, f"{path}/operations?cursor=&page_size=2")

    assert [row["to_version"] for row in rows] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("name", LISTS)
def test_every_list_takes_a_cursor(coupons, name):
    operator = signed_in(person("olive", group="operator"))

    response = operator.get(f"/api/v1/{name}?cursor=&page_size=1")

    assert response.status_code == 200, response.json()
    assert set(response.json()) == {"count", "next", "previous", "results"}
