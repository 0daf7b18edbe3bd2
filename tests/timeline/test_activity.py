"""The view log and the Activity page: who opened which coupon and queue, what they did, what
they were refused, per person and per coupon, in pages that never repeat or skip a row."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse

from coupons.evidence.tips import journal_tip
from coupons.models import CommandRejection
from coupons.services import CommandContext
from coupons.write.declared import declare
from refunds.models import Compensation
from refunds.services.compensation_decide import compensation_reject
from tests.timeline.queue_objects import fresh_coupon, proposal
from tests.timeline.test_coupon_page import codes
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)
from timeline.activity import ActivityFilters, activity_page
from timeline.models import ViewRecord

pytestmark = pytest.mark.django_db


def test_opening_a_coupon_and_a_queue_records_one_view_each(signed_in, coupon):
    client = signed_in("support", "sam")

    client.get(reverse("console:coupon", args=[coupon.pk]))
    client.get(reverse("console:cases"), {"status": "open"})

    views = list(ViewRecord.objects.order_by("pk").values_list("actor", "page", "coupon_id",
                                                               "path"))
    assert views == [("user:sam", "coupon", coupon.pk, f"/coupons/{coupon.pk}/"),
                     ("user:sam", "cases", None, "/cases/?status=open")]


def test_a_missing_coupon_or_a_refused_page_records_no_view(signed_in):
    client = signed_in("support")

    assert client.get(reverse("console:coupon", args=[999999])).status_code == 404
    assert client.get(reverse("console:activity")).status_code == 403

    assert not ViewRecord.objects.exists()


def test_activity_shows_views_actions_and_refused_attempts_per_person(signed_in, coupon,
                                                                      client):
    support = signed_in("support", "sam")
    support.get(reverse("console:coupon", args=[coupon.pk]))
    support.post(reverse("console:note_add", args=[coupon.pk]),
                 {"text": "called", "form_key": "k-1"})
    support.get(reverse("console:activity"))  # refused: support does not audit
    client.logout()
    auditor = signed_in("policy_admin", "pat")

    page = auditor.get(reverse("console:activity"), {"person": "sam"}).content.decode()

    assert "Opened coupon" in page
    assert "Wrote staff note #" in page
    # The operation and the error as code badges (no word for either: the badge alone).
    assert re.search(r">CONSOLE</abbr></span> refused: <span class=\"code-badge\"><abbr "
                     r"[^>]*>PERMISSION_DENIED</abbr>", page)
    assert "GET /activity/ needs view_activity" in page
    assert "user:pat" not in page.split("<tbody>")[1]  # only sam's rows


def test_a_compensation_decision_is_credited_to_who_decided_it_not_who_proposed_it(
        signed_in, coupon):
    compensation = proposal(coupon, proposer="user:alice")
    compensation_reject(compensation_id=compensation.pk, note="not our mistake",
                        seen_entry=journal_tip(Compensation, compensation.pk),
                        ctx=CommandContext(actor="user:bob"))
    auditor = signed_in("policy_admin", "pat")
    # The decision is the verb: a rejection never reads "Decided …: REJECTED".
    decided = f"Rejected compensation #{compensation.pk}"

    bobs = re.sub(r"<[^>]+>", "", auditor.get(
        reverse("console:activity"), {"person": "bob"}).content.decode())
    alices = re.sub(r"<[^>]+>", "", auditor.get(
        reverse("console:activity"), {"person": "alice"}).content.decode())

    assert decided in bobs
    assert decided not in alices


def test_activity_per_coupon_lists_its_ledger_rows_and_its_views(signed_in, coupon, template):
    other = fresh_coupon(template, "u2")
    client = signed_in("operator", "olga")
    client.get(reverse("console:coupon", args=[other.pk]))

    page = activity_page(filters=ActivityFilters(coupon_id=coupon.pk))

    assert [codes(e["what"]) for e in page.entries] == ["ISSUE ∅→AVAILABLE (v1)"]
    assert all(e["coupon_id"] == coupon.pk for e in page.entries)


def test_paging_the_activity_never_repeats_or_skips_a_row(signed_in, coupon):
    client = signed_in("operator", "olga")
    for _ in range(7):
        client.get(reverse("console:coupon", args=[coupon.pk]))
    declare(actor="user:olga")
    CommandRejection.objects.create(op_type="LOCK", actor="user:olga", error_code="X",
                                    message="m", created_at=coupon.issued_at)
    everything = activity_page(filters=ActivityFilters(), size=100).entries

    seen, cursor = [], None
    while True:
        page = activity_page(filters=ActivityFilters(), cursor=cursor, size=3)
        seen += page.entries
        if page.older is None:
            break
        cursor = page.older

    # 7 views, the ISSUE row, the refusal, the default return policy's draft and publication
    assert len(everything) == 11
    assert [(e["kind"], e["what"], e["at"]) for e in seen] == \
        [(e["kind"], e["what"], e["at"]) for e in everything]


def test_a_bad_activity_filter_is_answered_in_the_page(signed_in):
    answer = signed_in("operator").get(reverse("console:activity"), {"coupon": "abc"})

    assert answer.status_code == 400
    assert "These filters cannot be used" in answer.content.decode()


def test_activity_lists_policy_admin_actions_and_sorts_by_time_not_id(signed_in, coupon, clock):
    from refunds.models import ReturnPolicyVersion

    client = signed_in("operator", "olga")
    client.get(reverse("console:coupon", args=[coupon.pk]))
    # A row written later but dated earlier (a clock set back, as the demo's stories do).
    declare(actor="user:olga")
    early = ViewRecord.objects.create(actor="user:olga", kind=ViewRecord.Kind.VIEW,
                                      page="search", path="/search/",
                                      created_at=coupon.issued_at - timedelta(days=1))
    version = ReturnPolicyVersion.objects.filter(published_at__isnull=False).first()

    entries = activity_page(filters=ActivityFilters()).entries

    times = [e["at"] for e in entries]
    assert times == sorted(times, reverse=True)
    assert any(e["what"] == "Opened search" and e["at"] == early.created_at for e in entries)
    said = [e["what"] for e in entries]
    assert (f"Published return policy {version.policy.code} version {version.number}" in said
            and f"Drafted return policy {version.policy.code} version {version.number}" in said)
    published = next(e for e in entries if e["what"].startswith("Published"))
    assert published["link"] == reverse("console:policy", args=[version.policy_id])
    # A coupon's activity has no policy rows: they are about no coupon.
    mine = activity_page(filters=ActivityFilters(coupon_id=coupon.pk)).entries
    assert not any("return policy" in e["what"] for e in mine)


@pytest.mark.usefixtures("zh")
def test_a_rejected_compensation_reads_as_rejected_in_chinese(signed_in, coupon):
    compensation = proposal(coupon, proposer="user:alice")
    compensation_reject(compensation_id=compensation.pk, note="not our mistake",
                        seen_entry=journal_tip(Compensation, compensation.pk),
                        ctx=CommandContext(actor="user:bob"))

    page = re.sub(r"<[^>]+>", "", signed_in("policy_admin", "pat").get(
        reverse("console:activity"), {"person": "bob"},
        HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode())

    assert f"驳回了补偿 #{compensation.pk}" in page
    assert "审批了补偿" not in page and "REJECTED" not in page
