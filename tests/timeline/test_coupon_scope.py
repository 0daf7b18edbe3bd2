"""A coupon's scope on the console: the coupon page says where it applies (the stores and
channel of the version it was issued from), in English and in Chinese, and the search lists
coupons by the store or channel they apply at."""

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from coupons.services import CommandContext, coupon_issue, template_create, template_update
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
SEARCH = "/search/"


def issued(code, user_id="u1", **scope):
    template = template_create(code=code, name=code, kind="AMOUNT_OFF",
                               face_value=Decimal("10.00"), valid_days=30, **scope)
    return coupon_issue(template_id=template.pk, user_id=user_id,
                        ctx=CommandContext(actor="test")).coupon


def scope_text(client, coupon, **headers) -> str:
    page = client.get(reverse("console:coupon", args=[coupon.pk]), **headers)
    assert page.status_code == 200
    [scope] = re.findall(r'<dd id="coupon-scope">(.*?)</dd>', page.content.decode(), re.S)
    return " ".join(re.sub(r"<[^>]+>", "", scope).split())


@pytest.fixture
def support(signed_in):
    return signed_in("support")


@pytest.mark.parametrize(("scope", "english", "chinese"), [
    ({}, "All stores; Every channel", "全部门店；全部渠道"),
    ({"stores": ["S2", "S1"], "channel": "DELIVERY"}, "Stores S1, S2; delivery DELIVERY",
     "门店 S1、S2；外卖 DELIVERY"),
    ({"channel": "DINE_IN"}, "All stores; dine-in DINE_IN", "全部门店；堂食 DINE_IN"),
    ({"stores": ["S9"], "channel": "TAKEAWAY"}, "Stores S9; takeaway TAKEAWAY",
     "门店 S9；自提 TAKEAWAY"),
])
def test_the_coupon_page_says_where_the_coupon_applies(
        zh, support, clock, scope, english, chinese):  # noqa: F811
    coupon = issued("scoped", **scope)

    assert scope_text(support, coupon) == english
    assert scope_text(support, coupon, **CHINESE) == chinese


def test_the_page_shows_the_scope_the_coupon_was_issued_with(support, clock):
    coupon = issued("narrow", stores=["S1"], channel="DELIVERY")
    template_update(template_id=coupon.template_id, stores=[], channel="")

    assert scope_text(support, coupon) == "Stores S1; delivery DELIVERY"


@pytest.fixture
def wallet(clock):
    return {
        "all": issued("all"),
        "s1-delivery": issued("s1-delivery", stores=["S1"], channel="DELIVERY"),
        "s2-dine-in": issued("s2-dine-in", stores=["S2"], channel="DINE_IN"),
    }


def listed(answer) -> list[int]:
    assert answer.status_code == 200
    return [int(pk) for pk in re.findall(r'<td><a href="/coupons/(\d+)/">',
                                         answer.content.decode())]


@pytest.mark.parametrize(("query", "expected"), [
    ({"store": "S1"}, ["all", "s1-delivery"]),
    ({"store": "S3"}, ["all"]),
    ({"channel": "DINE_IN"}, ["all", "s2-dine-in"]),
    ({"store": "S2", "channel": "DELIVERY"}, ["all"]),
    ({"q": "u1", "channel": "DELIVERY"}, ["all", "s1-delivery"]),
])
def test_the_search_lists_coupons_by_where_they_apply(support, wallet, query, expected):
    assert listed(support.get(SEARCH, query)) == [wallet[name].pk for name in expected]


def test_an_unknown_channel_in_the_search_is_named_and_lists_nothing(support, wallet):
    answer = support.get(SEARCH, {"channel": "DRONE"})

    assert answer.status_code == 400
    assert "<strong>channel</strong> “DRONE”" in answer.content.decode()
    assert listed_or_none(answer) == []


def listed_or_none(answer) -> list[str]:
    return re.findall(r'<td><a href="/coupons/(\d+)/">', answer.content.decode())


def test_the_search_filters_are_in_chinese(zh, support, wallet):  # noqa: F811
    page = support.get(SEARCH, {"channel": "TAKEAWAY"}, **CHINESE).content.decode()

    assert 'aria-label="渠道"' in page and 'placeholder="门店 ID"' in page
    assert "任意渠道" in page and "自提 (TAKEAWAY)" in page
