"""The coupon page: who holds the coupon, its timeline and ledger, and whether it adds up."""

import re

import pytest
from django.urls import reverse

from coupons.models import ConflictCase, CouponOperation
from coupons.services import CommandContext, coupon_release
from coupons.services.cases import case_resolve
from tests.conftest import lock
from tests.coupons.safety import breakage
from tests.timeline.history import long_history
from tests.timeline.incident import incident_coupon

pytestmark = pytest.mark.django_db

NOTE = "Customer called, promised 30.00 back on card ending 4242"


def page_of(client, coupon, **query) -> str:
    answer = client.get(reverse("console:coupon", args=[coupon.pk]), query)
    assert answer.status_code == 200
    return answer.content.decode()


def section(page: str, name: str) -> str:
    return page.split(f'<section id="{name}"', 1)[1].split("</section>", 1)[0]


BADGE = re.compile(r'(?:[^\s<>→∅:][^<>→∅:]*? )?<span class="(?:code-badge|badge badge-\w+)">'
                   r'<abbr title="[^"]*">(\w+)</abbr></span>')


def codes(html: str) -> str:
    """`issue <badge>ISSUE</badge>` read as its code: what the title says, language aside."""
    return BADGE.sub(r"\1", html)


def timeline_titles(page: str) -> list[str]:
    return [codes(title) for title in
            re.findall(r'class="tl-title">(.*?)</strong>', section(page, "timeline"))]


def timeline_rows(page: str) -> list[dict]:
    """Per entry: its order, the lane it sits in, its colour and its version step."""
    rows = []
    for item in re.findall(r"<li id=\"t-[^\"]+\" (.*?)</li>", section(page, "timeline"), re.S):
        order = re.search(r'data-order="([^"]*)" style="--c: (#[0-9a-f]{6})"', item)
        lanes = re.findall(r'<span class="lane( here)?"', item)
        step = re.search(r'class="tl-version">([^<]*)<', item)
        rows.append({"order": order and order[1], "colour": order and order[2],
                     "lane": [i for i, here in enumerate(lanes) if here],
                     "step": step and step[1]})
    return rows


def test_header_shows_status_version_owner_and_the_order_holding_it(signed_in, coupon, ctx):
    lock(coupon, ctx, order_id="order-A")
    page = signed_in("support").get(reverse("console:coupon", args=[coupon.pk])).content.decode()
    assert f"Coupon {coupon.pk}" in page
    assert 'locked <span class="badge badge-locked"><abbr title="Held by an order' in page
    assert "v2" in page and coupon.user_id in page
    assert "order <strong>order-A</strong>" in page
    assert "off30" in page and "version 1" in page
    assert "15\xa0minutes left" in page


def test_header_says_when_a_lease_has_run_out(signed_in, coupon, ctx, clock):
    lock(coupon, ctx, order_id="order-A")
    clock.advance(minutes=20)
    assert "ended 5\xa0minutes ago" in page_of(signed_in("support"), coupon)


def test_unknown_coupon_is_a_404(signed_in):
    client = signed_in("support")
    assert client.get(reverse("console:coupon", args=[999999])).status_code == 404
    for part in ("console:coupon_timeline", "console:coupon_ledger"):
        assert client.get(reverse(part, args=[999999]), HTTP_HX_REQUEST="true").status_code == 404


def test_the_incident_reads_in_order_with_the_late_redeem_refused(signed_in, template, clock):
    coupon = incident_coupon(template, clock)

    page = page_of(signed_in("support"), coupon)

    assert timeline_titles(page) == [
        "ISSUE ∅→AVAILABLE (v1)",
        "LOCK AVAILABLE→LOCKED (v2)",
        "RELEASE LOCKED→AVAILABLE (v3)",
        "LOCK AVAILABLE→LOCKED (v4)",
        "REDEEM refused: TOKEN_MISMATCH",
        "REDEEM LOCKED→USED (v5)",
    ]
    assert [(row["order"], row["step"]) for row in timeline_rows(page)] == [
        (None, "v0 → v1"),
        ("order_demo_A", "v1 → v2"),
        ("order_demo_A", "v2 → v3"),
        ("order_demo_B", "v3 → v4"),
        ("order_demo_A", "at v4"),
        ("order_demo_B", "v4 → v5"),
    ]
    assert "by system:coordinator" in section(page, "timeline")
    assert '<tr id="op-5">' in section(page, "ledger")


def test_two_orders_get_their_own_lanes_and_colours(signed_in, template, clock):
    coupon = incident_coupon(template, clock)

    rows = timeline_rows(page_of(signed_in("support"), coupon))

    lanes = {row["order"]: (tuple(row["lane"]), row["colour"]) for row in rows if row["order"]}
    assert lanes["order_demo_A"][0] != lanes["order_demo_B"][0]
    assert lanes["order_demo_A"][1] != lanes["order_demo_B"][1]
    # Every entry of one order sits in the same lane, in the same colour.
    for order in lanes:
        assert {(tuple(r["lane"]), r["colour"]) for r in rows if r["order"] == order} == {
            lanes[order]}


def test_each_entry_has_a_deep_link_that_opens_its_page(signed_in, template, clock):
    coupon = incident_coupon(template, clock)
    client = signed_in("support")
    page = page_of(client, coupon)
    [(link, anchor)] = re.findall(r'href="\?from=([^"#]+)#t-([^"]+)"', section(
        page, "timeline"))[4:5]
    assert link == anchor

    linked = page_of(client, coupon, **{"from": link})

    assert f'<li id="t-{anchor}"' in linked
    assert timeline_titles(linked) == ["REDEEM refused: TOKEN_MISMATCH", "REDEEM LOCKED→USED (v5)"]


def test_check_panel_says_an_honest_coupon_holds_every_invariant(signed_in, template, clock):
    coupon = incident_coupon(template, clock)

    check = page_of(signed_in("support"), coupon).split('aria-labelledby="check-title"')[1]

    # The state in words, its code in a badge.
    assert "✓ Ledger replays to used USED v5; every invariant holds." in re.sub(
        r"<[^>]+>", "", check)
    assert ('Used by order <a href="/search/?q=order_demo_B">order_demo_B</a> '
            "(payment payment_demo_PB)") in check
    assert 'class="bad"' not in check.split("</section>")[0]


def test_check_panel_names_the_broken_invariant(signed_in, template, ctx, broken_on_purpose):
    coupon = breakage.version_bumped_without_ledger_row(template, ctx)
    broken_on_purpose.add(coupon.pk)

    check = page_of(signed_in("support"), coupon).split('aria-labelledby="check-title"')[1]

    assert "✗ The ledger replays to available AVAILABLE v1" in re.sub(r"<[^>]+>", "", check)
    [broken] = re.findall(r'<li class="bad">✗ (\d)\. ', check)
    assert broken == "7"
    assert "ledger replays to AVAILABLE v1, row says AVAILABLE v2" in check


def test_check_panel_names_a_row_missing_from_the_journal(signed_in, template, ctx,
                                                          broken_on_purpose):
    coupon = breakage.refusal_written_past_the_journal(template, ctx)
    broken_on_purpose.add(coupon.pk)

    check = page_of(signed_in("support"), coupon).split('aria-labelledby="check-title"')[1]

    [broken] = re.findall(r'<li class="bad">✗ (\d)\. ', check)
    assert broken == "9"
    assert re.search(r"command rejection \d+: has no journal entry", check)


def test_check_panel_tells_support_why_a_locked_coupon_cannot_be_used(signed_in, coupon, ctx):
    lock(coupon, ctx, order_id="order-A")
    check = page_of(signed_in("support"), coupon).split('aria-labelledby="check-title"')[1]
    assert 'Locked by order <a href="/search/?q=order-A">order-A</a> until <time' in check
    assert 'It frees itself if order <a href="/search/?q=order-A">order-A</a> is closed' in check


def test_state_picture_draws_the_path_the_coupon_took(signed_in, template, clock):
    coupon = incident_coupon(template, clock)
    page = page_of(signed_in("support"), coupon)
    taken = re.findall(r'class="sm-edge taken"[^>]*><title>([^<]*)<', page)
    # Each step in words, its code in the tooltip; the states in words too.
    assert sorted(taken) == ["issue (ISSUE)", "lock (LOCK)", "redeem (REDEEM)",
                             "release (RELEASE)"]
    assert re.search(r'<g class="sm-node visited current">\s*<title>used \(USED\)</title>'
                     r'\s*<rect[^>]*/>\s*<text[^>]*>used<', page)


@pytest.fixture
def settled_case(coupon, ctx, send):
    """Order A paid after its coupon went to order B; an operator refunded A's discount."""
    lock(coupon, ctx, order_id="A")
    send("OrderClosed", order_id="A")
    lock(coupon, ctx, order_id="B")
    case_id = send("PaymentSucceeded", order_id="A", payment_id="P-A")["outcome"]["case_id"]
    case_resolve(case_id=case_id, action="APPLY", note=NOTE,
                 ctx=CommandContext(actor="user:olga", idempotency_key="apply"))
    return ConflictCase.objects.get(pk=case_id)


def test_support_sees_cases_and_compensations_without_notes_or_amounts(signed_in, settled_case):
    timeline = section(page_of(signed_in("support"), settled_case.coupon), "timeline")

    assert f"Conflict case #{settled_case.pk} resolved" in timeline
    assert "Compensation order discount refund" in timeline
    assert ">ORDER_DISCOUNT_REFUND</abbr>" in timeline
    assert "Customer called" not in timeline
    assert "resolution_note" not in timeline
    assert 'title="amount"' not in timeline


def test_an_operator_sees_the_note_and_the_amount(signed_in, settled_case):
    timeline = section(page_of(signed_in("operator"), settled_case.coupon), "timeline")

    assert NOTE in timeline
    assert '<span class="muted"><span title="amount">amount</span></span> <code>30.00</code>' \
        in timeline


def test_the_ledger_table_comes_in_pages_newest_page_first(signed_in, coupon, ctx, clock):
    for n in range(30):
        _, proof = lock(coupon, ctx, order_id=f"order-{n}")
        coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)
        clock.advance(seconds=1)
    client = signed_in("support")

    latest = section(page_of(client, coupon), "ledger")
    first = section(page_of(client, coupon, ledger_page=1), "ledger")

    assert re.findall(r'<tr id="op-(\d+)">', latest) == [str(v) for v in range(51, 62)]
    assert re.findall(r'<tr id="op-(\d+)">', first) == [str(v) for v in range(1, 51)]
    assert "page 2 of 2, 61 rows" in latest


def test_partials_answer_htmx_and_send_plain_visits_to_the_full_page(signed_in, coupon):
    client = signed_in("support")
    for name in ("coupon_timeline", "coupon_ledger"):
        url = reverse(f"console:{name}", args=[coupon.pk])
        partial = client.get(url, {"ledger_page": 1}, HTTP_HX_REQUEST="true")
        assert partial.status_code == 200
        assert partial.content.decode().lstrip().startswith("<section id=")
        plain = client.get(url, {"ledger_page": 1})
        assert plain.status_code == 302
        assert plain["Location"] == reverse("console:coupon", args=[coupon.pk]) + "?ledger_page=1"


def test_ledger_rows_match_the_coupon_ledger(signed_in, template, clock):
    coupon = incident_coupon(template, clock)
    ledger = section(page_of(signed_in("support"), coupon), "ledger")
    versions = re.findall(r'<tr id="op-(\d+)">', ledger)
    assert versions == [str(v) for v in CouponOperation.objects.filter(coupon=coupon)
                        .order_by("to_version").values_list("to_version", flat=True)]


# One query per timeline source (11), the ledger page and its count, the coupon check (with the
# seals of its refusals, inbox messages, refund decisions and compensations) and the diagnosis
# (with what waits for a person: refund decisions, compensations), the state path, the latest
# checkpoint covering it, the session and the user's groups and permissions, the staff notes,
# the view log's one INSERT, the journal's fold of the coupon's decisions, compensations and
# cases, and the customer replies (the latest refund decision, the cases about another order's
# discount and their compensations, the redemption): fixed, whatever the history's length.
MAX_QUERIES = 45


@pytest.fixture
def thousand_rows(coupon, clock):
    coupon = long_history(coupon, clock, ledger_rows=1000)
    assert CouponOperation.objects.filter(coupon=coupon).count() == 1000
    return coupon


def test_a_coupon_with_1000_ledger_rows_costs_a_fixed_number_of_queries(
    signed_in, thousand_rows, django_assert_max_num_queries,
):
    client = signed_in("support")
    with django_assert_max_num_queries(MAX_QUERIES):
        page = page_of(client, thousand_rows)
    assert len(timeline_titles(page)) == 50
    assert timeline_titles(page)[-1].endswith("(v1000)")
    assert "page 20 of 20, 1000 rows" in section(page, "ledger")
    # Successive orders reuse lanes: only a late redeem overlapping the next lease needs two.
    assert 'class="tl" style="--lanes: 2"' in page
    earlier = re.search(r'href="([^"]+)"[^>]*rel="prev"', section(page, "timeline"))[1]

    with django_assert_max_num_queries(MAX_QUERIES):
        answer = client.get(earlier.replace("&amp;", "&"))
    assert len(timeline_titles(answer.content.decode())) == 50
    for name in ("coupon_timeline", "coupon_ledger"):
        with django_assert_max_num_queries(MAX_QUERIES // 2):
            partial = client.get(reverse(f"console:{name}", args=[thousand_rows.pk]),
                                 {"ledger_page": 7}, HTTP_HX_REQUEST="true")
        assert partial.status_code == 200
