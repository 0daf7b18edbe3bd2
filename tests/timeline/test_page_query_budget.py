"""Every console page stays within its query budget, at a short history and a long one.

Budgets: the coupon page (and its partials) 24 queries, every other page of docs/console.md
15. The coupon page reads, besides the check, a page of timeline keys and one query for each
kind of row on it, the ledger's page, after-sale's two sets of rows and the diagnosis' two or
three: its count follows the kinds of rows it shows, never the history's length. They hold on
the demo's data (`manage.py seed_demo`: work in every queue, the late-payment
incident with its conflict case, presales, refunds and compensations) and on coupons of 21 and
1,001 ledger rows. Each page is read twice and the second read counted (the first warms what a
running server keeps warm: the check's watermark, the service clients' cache).
"""

from io import StringIO

import pytest
from django.core.management import call_command

from coupons.history import coupon_timeline
from coupons.identity import can_see_details
from coupons.models import CouponOperation, UserCoupon
from refunds.history import SOURCES as AFTER_SALE_SOURCES
from refunds.models import ReturnPolicyVersion
from tests.signed_head import sign_head
from tests.timeline.history import bulk_history, long_history
from timeline.capabilities import can_read_notes
from timeline.notes import note_add, note_source

pytestmark = pytest.mark.django_db

PAGE_BUDGET = 15
# Measured on the demo's incident coupon, whose check folds its case and redemption too; the
# replies' greeting and closing in force (one row of the default policy) are the 24th.
COUPON_PAGE_BUDGET = 24
ANSWERED = (200, 302)  # a search with one match opens its coupon


@pytest.fixture
def demo(settings, tmp_path):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.COUPONS_DEMO = True
    call_command("seed_demo", stdout=StringIO())
    incident = CouponOperation.objects.filter(op_type="REDEEM").order_by("id").first().coupon
    note = note_add(coupon_id=incident.pk, author="support-demo", text="Customer called",
                    form_key="budget-note")
    version = ReturnPolicyVersion.objects.order_by("id").first()
    sign_head(tmp_path)  # cron's head over all of it: the check rests on it
    return {"incident": incident, "note": note, "version": version}


def coupon_pages(coupon) -> list[tuple[str, dict]]:
    base = f"/coupons/{coupon.pk}/"
    htmx = {"HTTP_HX_REQUEST": "true"}
    return [(base, {}), (f"{base}?ledger_page=1", {}), (f"{base}?from=0-0-0-0", {}),
            (f"{base}timeline/?from=0-0-0-0", htmx), (f"{base}ledger/?ledger_page=1", htmx)]


def demo_pages(demo) -> list[tuple[str, str]]:
    coupon, version = demo["incident"], demo["version"]
    return [
        ("operator", "/"),
        ("operator", f"/search/?q={coupon.user_id}"),
        ("operator", f"/search/?q={coupon.user_id[:6]}"),
        ("operator", f"/coupons/{coupon.pk}/notes/{demo['note'].pk}/"),
        ("operator", "/cases/"),
        ("operator", "/approvals/"),
        ("operator", "/compensations/"),
        ("operator", "/activity/"),
        ("operator", "/reconciliation/"),
        ("policy_admin", "/policies/"),
        ("policy_admin", f"/policies/{version.policy_id}/"),
        ("policy_admin", f"/policies/{version.policy_id}/versions/{version.number}/"),
        ("operator", "/time-zone/"),
    ]


def second_read(client, path, budget, assert_max, **headers):
    assert client.get(path, **headers).status_code in ANSWERED, path
    with assert_max(budget):
        answer = client.get(path, **headers)
    assert answer.status_code in ANSWERED, path
    return answer


def test_every_console_page_stays_within_its_budget_on_the_demo(
        demo, client, make_person, django_assert_max_num_queries):
    people = {role: make_person(role) for role in ("support", "operator", "policy_admin")}
    for role, path in demo_pages(demo):
        client.force_login(people[role])
        second_read(client, path, PAGE_BUDGET, django_assert_max_num_queries)
    for role in ("support", "operator"):
        client.force_login(people[role])
        for path, headers in coupon_pages(demo["incident"]):
            second_read(client, path, COUPON_PAGE_BUDGET, django_assert_max_num_queries,
                        **headers)


def test_the_incident_coupon_is_a_busy_one(demo):
    # The budget is measured on a coupon whose timeline has every kind of the demo's entries.
    assert UserCoupon.objects.get(pk=demo["incident"].pk).state_version >= 4


@pytest.mark.parametrize("ledger_rows", [21, 1001])
def test_the_coupon_page_stays_within_its_budget_at_any_history_length(
        coupon, clock, signed_in, ledger_rows, tmp_path, django_assert_max_num_queries):
    coupon = bulk_history(coupon, clock, ledger_rows=ledger_rows)
    sign_head(tmp_path)  # as cron does: the check rests on it
    client = signed_in("support")
    for path, headers in coupon_pages(coupon):
        second_read(client, path, COUPON_PAGE_BUDGET, django_assert_max_num_queries, **headers)
    page = second_read(client, f"/coupons/{coupon.pk}/", COUPON_PAGE_BUDGET,
                       django_assert_max_num_queries).content.decode()
    pages = -(-ledger_rows // 50)
    assert f"page {pages} of {pages}, {ledger_rows} rows" in page
    assert f"v{ledger_rows}" in page


@pytest.mark.parametrize("ledger_rows", [21, 1001])
def test_the_other_pages_stay_within_15_queries_beside_a_long_history(
        coupon, clock, signed_in, ledger_rows, django_assert_max_num_queries):
    coupon = bulk_history(coupon, clock, ledger_rows=ledger_rows)
    client = signed_in("operator")
    for path in ("/", f"/search/?q={coupon.user_id}", "/search/?q=bulk-3", "/cases/",
                 "/approvals/", "/compensations/", "/activity/", "/reconciliation/"):
        second_read(client, path, PAGE_BUDGET, django_assert_max_num_queries)


def test_the_budget_fires_on_a_page_over_it(coupon, clock, signed_in,
                                            django_assert_max_num_queries):
    client = signed_in("support")
    with pytest.raises(pytest.fail.Exception, match="Expected to perform 5 queries or less"):
        second_read(client, f"/coupons/{coupon.pk}/", 5, django_assert_max_num_queries)


def test_every_kind_of_entry_reads_within_the_budget_and_shows_as_the_whole_timeline_does(
        coupon, clock, signed_in, tmp_path, django_assert_max_num_queries):
    # Leases closed, paid and refunded, late redeems refused, and a note: a latest page with
    # every source the history has, read together, is the end of the whole merged timeline.
    coupon = long_history(coupon, clock, ledger_rows=81)
    note_add(coupon_id=coupon.pk, author="support-1", text="Customer called", form_key="k")
    sign_head(tmp_path)
    client = signed_in("support")
    answer = second_read(client, f"/coupons/{coupon.pk}/", COUPON_PAGE_BUDGET,
                         django_assert_max_num_queries)
    reader = answer.wsgi_request.user
    shown = [(e["kind"], e["id"], e["details"]) for e in answer.context["entries"]]
    whole = coupon_timeline(coupon=coupon, can_see_details=can_see_details(reader),
                            extra_sources=(*AFTER_SALE_SOURCES,
                                           note_source(can_read=can_read_notes(reader))))
    assert shown == [(e["kind"], e["id"], e["details"]) for e in whole[-50:]]
    assert {"operation", "refusal", "refund", "note"} <= {kind for kind, *_ in shown}
