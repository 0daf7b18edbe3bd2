"""Support starts from the caller: found by phone, nickname or user id, then one page for
everything they hold."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import translation

from coupons.services import coupon_issue
from tests.timeline import queue_objects
from tests.timeline.customers import customer
from tests.timeline.history import long_history
from timeline.models import ViewRecord

pytestmark = pytest.mark.django_db


def text_of(answer) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode()))


@pytest.mark.parametrize("typed", ["13812345678", "138 1234 5678", "138-1234-5678",
                                   "+86 138 1234 5678", "+8613812345678", "0086 13812345678"])
def test_a_phone_in_any_common_spelling_finds_the_customer(signed_in, typed):
    customer("u-7")
    customer("u-8", phone="13900001111", nickname="老李")

    answer = signed_in("support").get(reverse("console:search"), {"q": typed})

    found = text_of(answer)
    assert answer.status_code == 200
    assert "小王 (u-7) · matched by phone 138****5678" in found
    assert "u-8" not in found
    assert reverse("console:customer", args=["u-7"]) in answer.content.decode()


def test_the_search_says_what_matched_in_chinese(signed_in):
    customer("u-7")
    client = signed_in("support")

    with translation.override("zh-hans"):
        answer = client.get(reverse("console:search"), {"q": "13812345678"},
                            HTTP_ACCEPT_LANGUAGE="zh-hans")

    assert "手机号 138****5678" in text_of(answer)


def test_a_nickname_or_a_user_id_finds_the_customer(signed_in):
    customer("u-7", nickname="王小明")
    client = signed_in("support")

    by_name = text_of(client.get(reverse("console:search"), {"q": "王小"}))
    by_id = text_of(client.get(reverse("console:search"), {"q": "u-7"}))

    assert "matched by nickname 王小明" in by_name
    assert "matched by user id u-7" in by_id


def test_a_phone_nobody_has_finds_no_customer(signed_in):
    customer("u-7")

    answer = signed_in("support").get(reverse("console:search"), {"q": "13700000000"})

    assert "found-customers" not in answer.content.decode()


def test_the_customer_page_shows_every_coupon_what_holds_it_and_what_waits(
        signed_in, template):
    customer("u1")
    held = queue_objects.fresh_coupon(template)
    queue_objects.late_payment_case(held, order_id="order-A")
    waiting = queue_objects.pending_decision(queue_objects.fresh_coupon(template))
    free = queue_objects.fresh_coupon(template)
    other = queue_objects.fresh_coupon(template, user_id="u2")

    answer = signed_in("support").get(reverse("console:customer", args=["u1"]))

    page = text_of(answer)
    assert answer.status_code == 200
    assert "Customer 小王" in page and "138****5678" in page
    assert "13812345678" not in answer.content.decode()
    for coupon in (held, waiting.coupon, free):
        assert f'href="/coupons/{coupon.pk}/"' in answer.content.decode()
    assert f'href="/coupons/{other.pk}/"' not in answer.content.decode()
    assert "4 coupons" not in page and "3 coupons" in page
    assert "Why can't this coupon be used?" in page
    assert "Waiting for a person now" in page
    assert f"#{waiting.pk}" in page  # the refund decision waiting for an operator
    assert "waits for an operator" in page  # the conflict case
    assert "Timeline across the customer's coupons" in page
    assert f"Coupon {free.pk}" in page


def test_the_customer_page_in_chinese(signed_in, template):
    customer("u1")
    queue_objects.fresh_coupon(template)
    client = signed_in("support")

    answer = client.get(reverse("console:customer", args=["u1"]), HTTP_ACCEPT_LANGUAGE="zh-hans")

    page = text_of(answer)
    assert "客户 小王" in page
    assert "手机号" in page and "等待处理" in page


def test_a_user_id_without_a_profile_or_a_coupon_is_not_found(signed_in):
    assert signed_in("support").get(reverse("console:customer", args=["nobody"])).status_code \
        == 404


def test_a_user_id_with_coupons_but_no_profile_has_a_page(signed_in, coupon):
    answer = signed_in("support").get(reverse("console:customer", args=[coupon.user_id]))

    assert answer.status_code == 200
    assert "The user service has sent no profile" in text_of(answer)


def test_every_view_of_a_customer_page_is_a_view_record(signed_in, coupon):
    customer(coupon.user_id)
    client = signed_in("support", "sam")

    client.get(reverse("console:customer", args=[coupon.user_id]))
    client.head(reverse("console:customer", args=[coupon.user_id]))

    assert list(ViewRecord.objects.order_by("pk").values_list("actor", "page", "path")) == [
        ("user:sam", "customer", f"/customers/{coupon.user_id}/")] * 2


def test_the_coupon_page_links_to_its_customer(signed_in, coupon):
    answer = signed_in("support").get(reverse("console:coupon", args=[coupon.pk]))

    assert f'href="/customers/{coupon.user_id}/"' in answer.content.decode()


def test_the_merged_timeline_pages_across_coupons(signed_in, template, ctx, clock):
    customer("u1")
    first = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    long_history(first, clock, ledger_rows=90)
    clock.advance(seconds=5)
    second = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    client = signed_in("support")

    latest = client.get(reverse("console:customer", args=["u1"]))
    earlier_link = re.search(r'href="([^"]+)" rel="prev"', latest.content.decode()).group(1)
    earlier = client.get(earlier_link.replace("&amp;", "&"))

    assert f"Coupon {second.pk}" in text_of(latest)  # the newest entry is the second's issue
    assert earlier.status_code == 200
    assert f'href="/coupons/{first.pk}/"' in earlier.content.decode()
    assert 'rel="next"' in earlier.content.decode()


@pytest.mark.parametrize("ledger_rows", [21, 301])
def test_the_customer_page_s_queries_stay_flat_in_history(
        signed_in, template, ctx, clock, ledger_rows, django_assert_max_num_queries):
    customer("u1")
    coupons = [coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
               for _ in range(3)]
    long_history(coupons[0], clock, ledger_rows=ledger_rows)
    queue_objects.pending_decision(coupons[1])
    client = signed_in("support")
    client.get(reverse("console:customer", args=["u1"]))  # warm: the session, the clients

    # The session, the user, the profile, the coupons; the timeline page's keys and one query
    # for each kind of row on it; what waits for a person (2); the cases and settlements (2);
    # the view record: the kinds on the page set it, not the history's length.
    with django_assert_max_num_queries(14):
        answer = client.get(reverse("console:customer", args=["u1"]))

    assert answer.status_code == 200


def test_the_customer_page_s_queries_stay_flat_in_the_number_of_coupons(
        signed_in, template, ctx):
    customer("u1")
    client = signed_in("support")
    counts = []
    for held in (3, 30):
        coupons = [coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
                   for _ in range(held - len(counts) * 3)]
        queue_objects.pending_decision(coupons[-1], order_id=f"order-{held}")
        client.get(reverse("console:customer", args=["u1"]))  # warm: the session, the clients
        with CaptureQueriesContext(connection) as queries:
            answer = client.get(reverse("console:customer", args=["u1"]))
        assert f"{held} coupons" in text_of(answer)
        counts.append(len(queries))

    assert counts[0] == counts[1]


def test_a_customer_with_many_coupons_has_a_page(signed_in, template, ctx):
    customer("u1")
    coupons = [coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
               for _ in range(30)]
    queue_objects.pending_decision(coupons[-1])

    answer = signed_in("support").get(reverse("console:customer", args=["u1"]))

    assert answer.status_code == 200
    assert "30 coupons" in text_of(answer)
