"""Every console page of docs/console.md stays within its query budget on the demo's data.

The demo's seeding (`manage.py seed_demo`) leaves work in every queue, the late-payment
incident with its conflict case, presales, refunds and compensations: the state a floor opens
the console on. Each page is read twice and the second read counted (the first warms what a
running server keeps warm: the check's watermark, the service clients' cache).
"""

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.notes import note_add
from coupons.models import CouponOperation, UserCoupon
from refunds.models import ReturnPolicyVersion
from tests.signed_head import sign_head

pytestmark = pytest.mark.django_db

PAGE_BUDGET = 15
ANSWERED = (200, 302)  # a search with one match opens its coupon
# The incident coupon's page is over the budget, and held where it is: session, user,
# permissions with the groups (3), the coupon, the check (7: its watermark with the newest
# checkpoint, the rows after it, the redemption it counts, the journal's counts, the cases and
# redemptions folded, the view records' fold), the timeline's keys and one read per source on
# its page (notes, ledger, facts, cases, refusals: 6), the ledger page, after-sale's decisions
# and compensations (2), the diagnosis's open cases and redemption (2), the replies' cases and
# redemption (2), the checkpoint's chunk that holds the coupon and the view log's INSERT.
COUPON_PAGE_QUERIES = 26
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


def pages(demo) -> list[tuple[str, str]]:
    coupon, version = demo["incident"], demo["version"]
    return [
        ("operator", "/"),
        ("operator", f"/search/?q={coupon.user_id}"),
        ("operator", f"/search/?q={coupon.user_id[:6]}"),
        ("support", f"/coupons/{coupon.pk}/"),
        ("operator", f"/coupons/{coupon.pk}/"),
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


def test_every_console_page_stays_within_its_query_budget(demo, client, make_person):
    people = {role: make_person(role) for role in ("support", "operator", "policy_admin")}
    counts = {}
    for role, path in pages(demo):
        client.force_login(people[role])
        assert client.get(path).status_code in ANSWERED, path
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path).status_code in ANSWERED, path
        counts[role, path] = len(queries)
    coupon_page = f"/coupons/{demo['incident'].pk}/"
    assert counts.pop(("support", coupon_page)) == COUPON_PAGE_QUERIES
    assert counts.pop(("operator", coupon_page)) == COUPON_PAGE_QUERIES
    over = {page: n for page, n in counts.items() if n > PAGE_BUDGET}
    assert over == {}, counts


def test_the_incident_coupon_is_a_busy_one(demo):
    # The budget is measured on a coupon whose timeline has every kind of the demo's entries.
    assert UserCoupon.objects.get(pk=demo["incident"].pk).state_version >= 4
