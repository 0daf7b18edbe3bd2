"""A template's scope over the API: the stores and the channel its coupons apply to, written
with the template, refused when unknown, and the lists of templates and coupons filtered by
where they apply (`?store=`, `?channel=`)."""

import json

import pytest
from django.db import connection

from coupons import selectors
from coupons.api.filters import CouponFilter, TemplateFilter
from coupons.models import CouponTemplate, CouponTemplateVersion
from tests.api.test_commands_api import TEMPLATE, error, ok, post
from tests.api.test_lookup_indexes import scans
from tests.api.test_templates_api import patch

pytestmark = pytest.mark.django_db


def template(api, code, **scope) -> dict:
    return ok(post(api, "templates", {**TEMPLATE, "code": code, **scope}), 201)


def codes(api, **query) -> list[str]:
    return [row["code"] for row in ok(api.get("/api/v1/templates", query))["results"]]


def test_a_template_without_a_scope_applies_everywhere(api):
    body = template(api, "everywhere")

    assert (body["stores"], body["channel"]) == ([], "")


def test_the_scope_is_kept_as_a_set_and_answered(api):
    body = template(api, "two-stores", stores=["S2", "S1", "S2"], channel="DELIVERY")

    assert (body["stores"], body["channel"]) == (["S1", "S2"], "DELIVERY")
    assert ok(api.get(f"/api/v1/templates/{body['id']}")) == body
    version = CouponTemplateVersion.objects.get(template_id=body["id"])
    assert (version.stores, version.channel) == (["S1", "S2"], "DELIVERY")


def test_an_edit_of_the_scope_is_a_new_version_and_issued_coupons_keep_theirs(api):
    created = template(api, "edit-scope", stores=["S1"])
    coupon = ok(post(api, "coupons", {"template_id": created["id"], "user_id": "u1"}), 201)

    body = ok(patch(api, created["id"], {"stores": [], "channel": "TAKEAWAY"}))

    assert (body["version"], body["stores"], body["channel"]) == (2, [], "TAKEAWAY")
    assert [row["id"] for row in ok(api.get("/api/v1/coupons", {"store": "S9"}))["results"]
            ] == []  # the coupon keeps version 1: S1 only
    assert ok(api.get("/api/v1/coupons", {"store": "S1"}))["results"][0]["id"] == coupon["id"]


def test_reordering_the_stores_is_no_new_version(api):
    created = template(api, "same-set", stores=["S1", "S2"])

    assert ok(patch(api, created["id"], {"stores": ["S2", "S1"]}))["version"] == 1


@pytest.mark.parametrize(("scope", "field"), [
    ({"channel": "DRIVE_THRU"}, "channel"),
    ({"channel": "dine_in"}, "channel"),
    ({"channel": None}, "channel"),
    ({"stores": "S1"}, "stores"),
    ({"stores": [1]}, "stores"),
    ({"stores": [" S1"]}, "stores"),
    ({"stores": ["x" * 65]}, "stores"),
])
def test_an_unknown_scope_is_a_400_naming_the_field_and_creates_nothing(api, scope, field):
    details = error(post(api, "templates", {**TEMPLATE, **scope}), 400, "VALIDATION_ERROR")

    assert field in details
    assert not CouponTemplate.objects.exists()


def test_an_edit_to_an_unknown_channel_is_a_400_and_changes_nothing(api):
    created = template(api, "keep", channel="DINE_IN")

    details = error(patch(api, created["id"], {"channel": "DRONE"}), 400, "VALIDATION_ERROR")

    assert "channel" in details
    assert ok(api.get(f"/api/v1/templates/{created['id']}")) == created
    assert CouponTemplateVersion.objects.filter(template_id=created["id"]).count() == 1


@pytest.fixture
def scoped(api):
    template(api, "all")
    template(api, "s1-delivery", stores=["S1"], channel="DELIVERY")
    template(api, "s1-s2", stores=["S1", "S2"])
    template(api, "s2-dine-in", stores=["S2"], channel="DINE_IN")
    template(api, "takeaway", channel="TAKEAWAY")


@pytest.mark.parametrize(("query", "expected"), [
    ({}, ["all", "s1-delivery", "s1-s2", "s2-dine-in", "takeaway"]),
    ({"store": "S1"}, ["all", "s1-delivery", "s1-s2", "takeaway"]),
    ({"store": "S3"}, ["all", "takeaway"]),
    ({"channel": "DINE_IN"}, ["all", "s1-s2", "s2-dine-in"]),
    ({"channel": "DELIVERY", "store": "S1"}, ["all", "s1-delivery", "s1-s2"]),
    ({"channel": "TAKEAWAY", "store": "S2"}, ["all", "s1-s2", "takeaway"]),
])
def test_templates_are_filtered_by_where_they_apply(api, scoped, query, expected):
    assert codes(api, **query) == expected


@pytest.mark.parametrize(("query", "expected"), [
    ({"store": "S1"}, ["all", "s1-delivery", "s1-s2", "takeaway"]),
    ({"channel": "DINE_IN", "store": "S2"}, ["all", "s1-s2", "s2-dine-in"]),
    ({"channel": "DELIVERY", "user_id": "u-s1-delivery"}, ["s1-delivery"]),
])
def test_coupons_are_filtered_by_where_their_template_version_applies(api, scoped, query,
                                                                     expected):
    for row in CouponTemplate.objects.all():
        ok(post(api, "coupons", {"template_id": row.pk, "user_id": f"u-{row.code}"}), 201)

    found = ok(api.get("/api/v1/coupons", query))["results"]

    assert sorted(row["user_id"].removeprefix("u-") for row in found) == expected


@pytest.mark.parametrize("query", [{"channel": "DRONE"}, {"store": ""},
                                   {"store": " S1"}])
@pytest.mark.parametrize("path", ["templates", "coupons"])
def test_an_unknown_scope_filter_is_a_400_naming_it(api, path, query):
    details = error(api.get(f"/api/v1/{path}", query), 400, "VALIDATION_ERROR")

    assert set(details) == set(query)


@pytest.mark.parametrize(("query", "indexes"), [
    ({"store": "S1"}, {"template_stores_gin"}),
    ({"channel": "DELIVERY"}, {"template_channel"}),
])
def test_the_template_scope_filters_are_answered_from_their_indexes(query, indexes):
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    [plan] = json.loads(TemplateFilter(query, queryset=selectors.template_list()).qs
                        .explain(format="json"))

    assert {node["Index Name"] for node in scans(plan["Plan"]) if "Index Name" in node
            } == indexes


def test_the_coupon_scope_filters_read_the_versions_by_their_indexes():
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    query = {"store": "S1", "channel": "DELIVERY"}
    [plan] = json.loads(CouponFilter(query, queryset=selectors.coupon_list()).qs
                        .explain(format="json"))

    used = {node.get("Index Name") for node in scans(plan["Plan"])}
    assert used & {"template_version_stores_gin", "template_version_channel"}


def test_the_schema_declares_the_scope_and_its_filters(api):
    schema = api.get("/api/v1/schema/", {"format": "json"}).json()
    components = schema["components"]["schemas"]

    # A closed set, as a coupon's kind is: a client sends and reads only these.
    assert components["ChannelEnum"]["enum"] == ["DINE_IN", "DELIVERY", "TAKEAWAY"]
    for component in ["TemplateOutput", "TemplateInputRequest",
                      "PatchedTemplateEditInputRequest"]:
        channel = components[component]["properties"]["channel"]
        assert channel["oneOf"] == [{"$ref": "#/components/schemas/ChannelEnum"},
                                    {"$ref": "#/components/schemas/BlankEnum"}]
        assert components[component]["properties"]["stores"]["type"] == "array"
    assert {"stores", "channel"} <= set(components["TemplateOutput"]["required"])
    for path in ["/api/v1/templates", "/api/v1/coupons"]:
        parameters = {p["name"]: p["schema"] for p in schema["paths"][path]["get"]["parameters"]}
        assert set(parameters["channel"]["enum"]) == {"DINE_IN", "DELIVERY", "TAKEAWAY"}
        assert parameters["store"]["maxLength"] == 64
