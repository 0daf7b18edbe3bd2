"""The search box: any id goes straight to its coupon when one matches, else a list."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse

from coupons.services import coupon_issue, coupon_redeem, coupon_release, template_create
from coupons.services.cases import case_open
from refunds.services.refund_receive import refund_receive
from tests.conftest import lock

pytestmark = pytest.mark.django_db

SEARCH = "/search/"


@pytest.fixture
def story(clock, coupon, ctx):
    """The incident on one coupon: order-A locked and released, order-B locked and redeemed,
    then refunded. Answers the ids support would type."""
    locked_a, proof_a = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof_a, ctx=ctx, reason="order closed")
    clock.advance(minutes=5)
    locked_b, proof_b = lock(coupon, ctx, order_id="order-B")
    coupon_redeem(coupon_id=coupon.pk, lease=proof_b, payment_id="pay-B", ctx=ctx)
    clock.advance(days=1)
    refund_receive(refund_id="refund-B", order_id="order-B", payment_id="pay-B",
                   refund_amount=Decimal("300.00"), refund_type="FULL", ctx=ctx)
    return {"coupon": coupon, "lock_a": locked_a.lock.pk, "lock_b": locked_b.lock.pk}


@pytest.fixture
def support(signed_in):
    return signed_in("support")


def coupon_ids_listed(answer) -> list[int]:
    listed = re.findall(r'<td><a href="/coupons/(\d+)/">', answer.content.decode())
    return [int(pk) for pk in listed]


@pytest.mark.parametrize("key", [
    "coupon id", "user id", "order id", "released order id", "payment id", "refund id",
    "lock id", "released lock id",
])
def test_each_kind_of_id_goes_straight_to_its_coupon(support, story, key):
    typed = {
        "coupon id": str(story["coupon"].pk), "user id": "u1", "order id": "order-B",
        # order-A lost the coupon to order-B: its lease still names the coupon.
        "released order id": "order-A", "payment id": "pay-B", "refund id": "refund-B",
        "lock id": str(story["lock_b"]), "released lock id": str(story["lock_a"]),
    }[key]

    answer = support.get(SEARCH, {"q": f"  {typed} "})

    assert answer.status_code == 302
    assert answer["Location"] == reverse("console:coupon", args=[story["coupon"].pk])


def test_a_presale_order_whose_deposit_could_not_lock_finds_the_coupon(support, story, send,
                                                                       ctx):
    # Order-C holds the coupon; this order's deposit fact asked for it and was refused.
    lock(story["coupon"], ctx, order_id="order-C")
    outcome = send("DepositPaid", order_id="order-late-deposit", coupon_id=story["coupon"].pk,
                   user_id="u1", order_amount="500.00",
                   final_payment_deadline="2026-07-01T00:00:00+00:00")
    assert outcome["outcome"]["action"] == "CASE_OPENED"

    answer = support.get(SEARCH, {"q": "order-late-deposit"})

    assert answer["Location"] == reverse("console:coupon", args=[story["coupon"].pk])


def test_a_deposit_naming_no_existing_coupon_finds_nothing(support, story, send):
    send("DepositPaid", order_id="order-ghost", coupon_id=999999, user_id="u1",
         order_amount="500.00", final_payment_deadline="2026-07-01T00:00:00+00:00")

    answer = support.get(SEARCH, {"q": "order-ghost"})

    assert answer.status_code == 200 and coupon_ids_listed(answer) == []


def test_an_id_matching_several_coupons_lists_them_and_says_how_each_matched(
        support, story, template, ctx):
    other = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    answer = support.get(SEARCH, {"q": "u1"})

    assert answer.status_code == 200
    assert coupon_ids_listed(answer) == [story["coupon"].pk, other.pk]
    page = answer.content.decode()
    assert "2 coupons matched as user id" in page
    assert page.count('<td class="matched">user id <code><mark>u1</mark></code></td>') == 2


def test_a_key_that_is_a_coupon_id_and_a_user_id_lists_both_kinds(support, template, ctx):
    first = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    by_user = coupon_issue(template_id=template.pk, user_id=str(first.pk), ctx=ctx).coupon

    answer = support.get(SEARCH, {"q": str(first.pk)})

    assert coupon_ids_listed(answer) == [first.pk, by_user.pk]
    assert "matched as coupon id, user id" in answer.content.decode()


def test_nothing_found_says_what_to_check(support, story):
    answer = support.get(SEARCH, {"q": "order-nobody"})

    assert answer.status_code == 200
    page = answer.content.decode()
    assert coupon_ids_listed(answer) == []
    assert "No coupon matches “order-nobody”" in page
    assert "Check the id for typos" in page


def test_an_empty_search_explains_what_the_box_takes(support):
    answer = support.get(SEARCH)

    assert answer.status_code == 200
    assert "a lease's <strong>lock id</strong>" in answer.content.decode()


@pytest.fixture
def wallet(clock, template, ctx):
    """Coupons of user w1: one per validity window, one locked, one with an open case."""
    later = template_create(code="later", name="Starts later", kind="AMOUNT_OFF",
                            face_value=Decimal("10.00"),
                            valid_from=clock.now() + timedelta(days=5),
                            valid_until=clock.now() + timedelta(days=50))
    short = template_create(code="short", name="Two days", kind="AMOUNT_OFF",
                            face_value=Decimal("5.00"), valid_days=2)
    issue = lambda t: coupon_issue(template_id=t.pk, user_id="w1", ctx=ctx).coupon  # noqa: E731
    coupons = {"valid": issue(template), "locked": issue(template), "future": issue(later),
               "lapsed": issue(short), "cased": issue(template)}
    lock(coupons["locked"], ctx, order_id="order-W")
    case_open(coupon=coupons["cased"], order_id="order-late", fact_type="PaymentSucceeded",
              payment_id="pay-late", evidence={})
    clock.advance(days=3)  # "lapsed" is past its two days now
    return {name: c.pk for name, c in coupons.items()}


@pytest.mark.parametrize("params,expected", [
    ({"status": "LOCKED"}, ["locked"]),
    ({"validity": "expired"}, ["lapsed"]),
    ({"validity": "not_yet"}, ["future"]),
    ({"validity": "now"}, ["valid", "locked", "cased"]),
    ({"open_case": "on"}, ["cased"]),
])
def test_filters_narrow_the_list(support, wallet, params, expected):
    answer = support.get(SEARCH, {"q": "w1", **params})

    assert answer.status_code == 200
    assert coupon_ids_listed(answer) == [wallet[name] for name in expected]


def test_at_the_instant_validity_ends_the_coupon_is_expired_not_valid(support, clock, ctx):
    # The same boundary the services use: a lock at valid_until is refused as expired.
    ends = clock.now() + timedelta(days=1)
    brief = template_create(code="brief", name="One day", kind="AMOUNT_OFF",
                            face_value=Decimal("5.00"), valid_until=ends)
    coupon = coupon_issue(template_id=brief.pk, user_id="w2", ctx=ctx).coupon
    clock.set(ends)

    expired = support.get(SEARCH, {"q": "w2", "validity": "expired"})
    valid = support.get(SEARCH, {"q": "w2", "validity": "now"})

    assert coupon_ids_listed(expired) == [coupon.pk]
    assert coupon_ids_listed(valid) == []


def test_the_template_filter_and_filters_without_an_id(support, wallet, template):
    answer = support.get(SEARCH, {"template": template.pk})

    assert coupon_ids_listed(answer) == [wallet["valid"], wallet["locked"], wallet["cased"]]


def test_one_match_left_by_a_filter_stays_a_list(support, wallet):
    answer = support.get(SEARCH, {"q": "w1", "status": "LOCKED"})

    assert answer.status_code == 200  # the person is browsing: no jump away from the filters


def test_columns_sort_both_ways(support, wallet):
    by_template = support.get(SEARCH, {"q": "w1", "sort": "template"})
    newest_first = support.get(SEARCH, {"q": "w1", "sort": "-id"})

    # later < off30 < short; ties by id.
    assert coupon_ids_listed(by_template) == [
        wallet["future"], wallet["valid"], wallet["locked"], wallet["cased"], wallet["lapsed"]]
    assert coupon_ids_listed(newest_first) == sorted(wallet.values(), reverse=True)
    page = by_template.content.decode()
    assert 'aria-sort="ascending"><a href="?q=w1&amp;sort=-template">Template' in page


def test_long_lists_are_paginated(support, template, ctx):
    ids = [coupon_issue(template_id=template.pk, user_id="many", ctx=ctx).coupon.pk
           for _ in range(30)]

    first = support.get(SEARCH, {"q": "many"})
    second = support.get(SEARCH, {"q": "many", "page": 2})

    assert coupon_ids_listed(first) == ids[:25]
    assert coupon_ids_listed(second) == ids[25:]
    assert "Page 2 of 2" in second.content.decode()
    assert 'href="?q=many&page=1" rel="prev"' in second.content.decode()


@pytest.mark.parametrize("params,message,status", [
    ({"q": "u1", "status": "NOPE"}, "NOPE is not one of the available choices", 400),
    ({"q": "u1", "page": "abc"}, "Enter a whole number", 400),
    ({"q": "u1", "sort": "secret_column"}, "secret_column is not one of", 400),
    ({"q": "u1", "template": "x"}, "x is not one of the available choices", 400),
    ({"q": "u1", "validity": "sometimes"}, "sometimes is not one of", 400),
    ({"q": "u1", "status": "USED", "page": "7"}, "There is no page 7", 404),
    ({"q": "x" * 200}, "at most 128 characters", 400),
])
def test_bad_input_answers_a_clear_message(support, story, params, message, status):
    answer = support.get(SEARCH, params)

    assert answer.status_code == status
    assert message in answer.content.decode()


def test_every_console_page_has_the_search_box(support, story):
    for url in ("/", SEARCH, reverse("console:coupon", args=[story["coupon"].pk])):
        page = support.get(url).content.decode()
        assert 'id="search-box"' in page and 'action="/search/"' in page, url


def test_search_makes_a_fixed_number_of_queries(support, template, ctx,
                                                django_assert_max_num_queries):
    for _ in range(40):
        coupon_issue(template_id=template.pk, user_id="bulk", ctx=ctx)

    # Session, user, their permissions (2) and groups (the header); templates for the
    # filter; whether a key other than the user id matches; the capped count and the page;
    # which kinds named the page's coupons; the kinds for the summary (3: user id, template
    # code, the others); staff notes that mention it, the person's saved filters and the view
    # log's INSERT.
    with django_assert_max_num_queries(16):
        answer = support.get(SEARCH, {"q": "bulk", "sort": "-updated"})
    assert len(coupon_ids_listed(answer)) == 25


@pytest.fixture
def demo_order(clock, template, ctx):
    """The demo's incident: a coupon whose lease and redemption name ORDER_DEMO_A."""
    coupon = coupon_issue(template_id=template.pk, user_id="User_Demo_7", ctx=ctx).coupon
    locked, proof = lock(coupon, ctx, order_id="ORDER_DEMO_A")
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="PAY_DEMO_A", ctx=ctx)
    return {"coupon": coupon, "lock_id": str(locked.lock.pk)}


@pytest.mark.parametrize("typed", [
    "ORDER_DEMO_A", "order_demo_a", "order_demo", "Order_Dem",  # any case, any beginning
    "pay_demo", "user_demo",
    "demo_a", "DER_DEM", "ser_demo_7",  # any part of it, as a customer reads an id's end
])
def test_ids_are_found_in_any_case_and_by_any_part(support, demo_order, typed):
    answer = support.get(SEARCH, {"q": typed})

    assert answer["Location"] == reverse("console:coupon", args=[demo_order["coupon"].pk])


@pytest.mark.parametrize("length", [8, 13, 36])
def test_a_lock_id_is_found_from_its_first_eight_characters_in_any_case(
        support, demo_order, length):
    typed = demo_order["lock_id"][:length]

    lower = support.get(SEARCH, {"q": typed})
    upper = support.get(SEARCH, {"q": typed.upper()})

    coupon_page = reverse("console:coupon", args=[demo_order["coupon"].pk])
    assert lower["Location"] == coupon_page and upper["Location"] == coupon_page


def test_the_list_says_which_field_matched_and_marks_the_fragment(
        support, demo_order, template, ctx):
    other = coupon_issue(template_id=template.pk, user_id="user_demo_a", ctx=ctx).coupon

    answer = support.get(SEARCH, {"q": "DEMO_A"})

    assert coupon_ids_listed(answer) == [demo_order["coupon"].pk, other.pk]
    page = answer.content.decode()
    assert "2 coupons matched as user id, order id, payment id" in page
    assert ('<td class="matched">order id <code>ORDER_<mark>DEMO_A</mark></code>; '
            'payment id <code>PAY_<mark>DEMO_A</mark></code></td>') in page
    assert '<td class="matched">user id <code>user_<mark>demo_a</mark></code></td>' in page


def test_two_characters_match_only_the_beginning_of_an_id(support, demo_order):
    # Shorter than a trigram, "any part" would name nearly every id.
    middle = support.get(SEARCH, {"q": "_A"})
    beginning = support.get(SEARCH, {"q": "or"})

    assert coupon_ids_listed(middle) == []
    assert beginning["Location"] == reverse("console:coupon", args=[demo_order["coupon"].pk])


def test_seven_characters_of_a_lock_id_are_not_a_lock_id(support, demo_order):
    answer = support.get(SEARCH, {"q": demo_order["lock_id"][:7]})

    assert answer.status_code == 200 and coupon_ids_listed(answer) == []


def test_a_template_code_lists_its_coupons_in_any_case(support, template, ctx):
    ids = [coupon_issue(template_id=template.pk, user_id=f"t{n}", ctx=ctx).coupon.pk
           for n in range(2)]

    answer = support.get(SEARCH, {"q": template.code.upper()})

    assert coupon_ids_listed(answer) == ids
    page = answer.content.decode()
    assert "2 coupons matched as template code" in page
    assert page.count(f'<td class="matched">template code <code><mark>{template.code}</mark>'
                      '</code></td>') == 2


def test_like_wildcards_in_the_typed_text_match_only_themselves(support, demo_order):
    # "%" and "_" are LIKE's wildcards: typed, they must not match every id.
    for typed in ("%", "ORDER%A", "_RDER_DEMO_A"):
        answer = support.get(SEARCH, {"q": typed})
        assert answer.status_code == 200 and coupon_ids_listed(answer) == [], typed


def test_each_text_key_has_a_trigram_index_for_any_part_of_it():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE indexdef LIKE "
                       "'%%gin_trgm_ops%%'")
        found = dict(cursor.fetchall())

    assert set(found) == {
        "coupon_user_trgm", "lock_order_trgm", "case_order_trgm", "case_payment_trgm",
        "redemption_payment_trgm", "order_fact_order_trgm", "refund_coupon_order_trgm",
        "refund_coupon_refund_trgm", "customer_nickname_trgm", "customer_user_trgm"}
    assert all("USING gin (upper(" in definition for definition in found.values())
