"""The dashboard: what waits for a person, and the last day's commands and refusals."""

import re
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from coupons.errors import CouponError
from coupons.models import CommandRejection, CouponOperation, CouponStatus, OutboxEvent, UserCoupon
from coupons.services import coupon_issue
from operations.scanners import scan_presale_expiry
from tests.conftest import START, lock
from tests.coupons.events.test_presale import deposit, issue, presale_template

pytestmark = pytest.mark.django_db


def card(page: str, card_id: str) -> str:
    """The text of one dashboard card, tags stripped."""
    found = re.search(rf'<div class="card" id="{card_id}">(.*?)</div>', page, re.S)
    assert found, card_id
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


def figure(page: str, card_id: str) -> int:
    return int(re.search(r'<p class="figure">(\d+)</p>',
                         page.split(f'id="{card_id}"')[1]).group(1))


def hour_titles(page: str) -> dict[str, list[str]]:
    """{bucket start (ISO): [bar titles]} from the SVG chart."""
    return {hour: re.findall(r"<title>([^<]+)</title>", body)
            for hour, body in re.findall(r'<g class="hour" data-hour="([^"]+)">(.*?)</g>', page,
                                         re.S)}


def test_an_empty_console_says_what_to_do(signed_in):
    page = signed_in("support").get("/").content.decode()

    assert "No coupons yet" in card(page, "coupons-by-state")
    assert "No open cases" in card(page, "open-cases")
    assert "Nothing waits for an operator" in card(page, "pending-approvals")
    assert "No lease ends in the next hour" in card(page, "expiring-leases")
    assert "No presale coupon lapses before its final payment" in card(
        page, "expires-before-final-payment")
    assert "No commands and no refusals in the last 24 hours" in page
    assert 'href="/api/v1/docs/"' in page and 'href="/admin/"' in page
    # Support runs no commands and no relay: no manage.py in its empty states, no outbox card.
    assert "manage.py" not in page
    assert 'id="outbox"' not in page


def test_operators_see_the_outbox_and_the_commands_behind_the_empty_states(signed_in):
    page = signed_in("operator").get("/").content.decode()

    assert "Every event has been published" in card(page, "outbox")
    assert "manage.py scan_leases" in card(page, "expiring-leases")
    assert "manage.py seed_demo" in card(page, "coupons-by-state")


def test_an_unpublished_outbox_is_an_alarm_with_the_command_to_check(signed_in, template,
                                                                      ctx):
    coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx)

    alarm = card(signed_in("operator", "olga").get("/").content.decode(), "outbox")

    assert "Oldest waiting since" in alarm and "manage.py relay_outbox" in alarm


def test_the_chart_counts_commands_and_refusals_in_hour_buckets(signed_in, clock, template,
                                                               coupon, ctx):
    clock.set(START - timedelta(days=2))  # a day too old for the chart
    coupon_issue(template_id=template.pk, user_id="old", ctx=ctx)
    clock.set(START + timedelta(hours=2, minutes=30))
    lock(coupon, ctx, order_id="order-A")
    clock.advance(minutes=10)
    with pytest.raises(CouponError):
        lock(coupon, ctx, order_id="order-B")  # held by A: refused and logged
    clock.set(START + timedelta(hours=5, minutes=10))

    page = signed_in("support").get("/").content.decode()

    hours = hour_titles(page)
    assert len(hours) == 24
    assert min(hours) == "2026-05-31T18:00:00+00:00" and max(hours) == "2026-06-01T17:00:00+00:00"
    assert hours["2026-06-01T12:00:00+00:00"] == ["12:00 UTC: 1 command", "12:00 UTC: 0 refusals"]
    assert hours["2026-06-01T14:00:00+00:00"] == ["14:00 UTC: 1 command", "14:00 UTC: 1 refusal"]
    quiet = [h for h in hours if h not in ("2026-06-01T12:00:00+00:00",
                                           "2026-06-01T14:00:00+00:00")]
    assert all(hours[h] == [f"{h[11:16]} UTC: 0 commands", f"{h[11:16]} UTC: 0 refusals"]
               for h in quiet)
    # One scale for both series: the busiest hour (1) fills the plot, a quiet one is flat.
    heights = dict(re.findall(
        r'data-hour="([^"]+)">\s*<rect class="commands" [^>]*height="([\d.]+)"', page))
    assert heights["2026-06-01T14:00:00+00:00"] == "176.0"
    assert heights["2026-06-01T13:00:00+00:00"] == "0.0"


def test_leases_ending_within_the_hour_are_listed(signed_in, clock, template, ctx):
    soon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    later = coupon_issue(template_id=template.pk, user_id="u2", ctx=ctx).coupon
    lock(soon, ctx, order_id="order-soon", lease_seconds=40 * 60)
    lock(later, ctx, order_id="order-later", lease_seconds=3 * 3600)

    page = signed_in("support").get("/").content.decode()

    assert figure(page, "expiring-leases") == 1
    assert "order-soon" in card(page, "expiring-leases")
    assert "order-later" not in page


def test_the_outbox_card_counts_unpublished_events_and_ages_the_oldest(signed_in, clock,
                                                                      template, ctx):
    first = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    clock.advance(hours=1)
    coupon_issue(template_id=template.pk, user_id="u2", ctx=ctx)
    # The relay publishes the first coupon's event; the second waits.
    OutboxEvent.objects.filter(coupon=first).update(published_at=clock.now())

    page = signed_in("operator").get("/").content.decode()

    assert figure(page, "outbox") == 1
    assert 'datetime="2026-06-01T13:00:00+00:00"' in card(page, "outbox") or \
        "2026-06-01 13:00" in card(page, "outbox")


@pytest.fixture
def seeded(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.COUPONS_DEMO = True
    call_command("seed_demo", stdout=StringIO())


def test_the_counts_match_the_seeded_demo(seeded, signed_in):
    page = signed_in("support").get("/").content.decode()

    states = card(page, "coupons-by-state")
    for state in CouponStatus.values:
        assert f"{state} {UserCoupon.objects.filter(status=state).count()}" in states
    assert f"Total {UserCoupon.objects.count()}" in states
    # The incident's late payment opened the one case.
    assert figure(page, "open-cases") == 1
    assert "PaymentSucceeded for order_demo_A" in card(page, "open-cases")
    # Two risk-flagged refunds; a reversal proposal and a presale compensation.
    assert "2 refund decisions awaiting approval" in card(page, "pending-approvals")
    assert "2 compensation proposals awaiting a decision" in card(page, "pending-approvals")
    assert figure(page, "pending-approvals") == 4
    # The order being paid right now.
    assert figure(page, "expiring-leases") == 1
    assert "order_demo_1601" in card(page, "expiring-leases")
    operator_page = signed_in("operator", "olga").get("/").content.decode()
    assert figure(operator_page, "outbox") == OutboxEvent.objects.count()  # no relay ran
    # The last day's checkouts: 3 first tried an order below the threshold.
    titles = [t for ts in hour_titles(page).values() for t in ts]
    refused = sum(int(t.split(": ")[1].split()[0]) for t in titles if "refusal" in t)
    commands = sum(int(t.split(": ")[1].split()[0]) for t in titles if "command" in t)
    assert refused == 3
    since = timezone.now().replace(minute=0, second=0, microsecond=0) - timedelta(hours=23)
    assert commands == CouponOperation.objects.filter(created_at__gte=since).count() > 20
    assert CommandRejection.objects.count() > refused  # older refusals stay off the chart


def test_the_dashboard_makes_a_fixed_number_of_queries(seeded, signed_in,
                                                      django_assert_max_num_queries):
    client = signed_in("operator")
    # Session, user, permissions (2), groups (header); states, case count and list, two
    # pending counts, expiring count and list, outbox, two expiry-warning counts, two hourly
    # groupings.
    with django_assert_max_num_queries(18):
        assert client.get("/").status_code == 200


def test_presale_coupons_lapsing_before_final_payment_are_counted_until_paid(
    signed_in, clock, send
):
    coupon = issue(presale_template("presale", "STRICT"))
    deposit(send, coupon)
    scan_presale_expiry()
    client = signed_in("support")

    page = client.get("/").content.decode()
    assert figure(page, "expires-before-final-payment") == 1
    assert "1 warned in all" in card(page, "expires-before-final-payment")

    send("OrderClosed", order_id="PS-1", reason="buyer gave up")
    page = client.get("/").content.decode()
    assert figure(page, "expires-before-final-payment") == 0
    assert "1 warned in all" in card(page, "expires-before-final-payment")
