"""Lists for a team: CSV exports (same filters as the page, streamed, recorded, formula-safe),
saved filters per person, and bulk decisions where each item answers for itself."""

import csv
import io
import re
import uuid
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from coupons.evidence.tips import journal_tip
from coupons.models import CaseStatus
from coupons.services import CommandContext
from coupons.services.cases import case_resolve
from refunds.models import RefundCoupon
from tests.timeline.queue_objects import (
    fresh_coupon,
    late_payment_case,
    pending_decision,
    proposal,
)
from tests.zh_catalogue import compiled_catalogue  # noqa: F401 (a fixture)
from timeline.exports import neutralised
from timeline.models import SavedFilter, ViewRecord

pytestmark = pytest.mark.django_db

def rows_of(answer) -> list[list[str]]:
    assert answer.streaming
    body = b"".join(answer.streaming_content).decode()
    assert body.startswith("\ufeff")  # the BOM: spreadsheets in a Chinese locale read UTF-8
    return list(csv.reader(io.StringIO(body[1:])))

@pytest.mark.parametrize("text,cell", [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1", "'+1"), ("-2", "'-2"),
    ("@SUM(A1)", "'@SUM(A1)"), ("order-1", "order-1"), ("", ""), (None, ""), (42, "42"),
])
def test_a_cell_that_a_spreadsheet_would_run_gets_a_leading_quote(text, cell):
    assert neutralised(text) == cell

def test_the_case_export_has_the_pages_filter_and_neutralises_formulas(signed_in, template):
    late_payment_case(fresh_coupon(template), order_id="=cmd|' /C calc'!A0")
    resolved = late_payment_case(fresh_coupon(template, "u2"), order_id="order-done")
    case_resolve(case_id=resolved.pk, action="DISMISS", note="paid twice",
                 ctx=CommandContext(actor="user:olga"))
    client = signed_in("operator", "olga")

    answer = client.get(reverse("console:cases_export"), {"status": "open"})

    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/csv")
    header, *rows = rows_of(answer)
    assert header[:3] == ["conflict case", "coupon", "status"]
    assert [row[4] for row in rows] == ["'=cmd|' /C calc'!A0"]  # the open one only, quoted
    export = ViewRecord.objects.get(kind=ViewRecord.Kind.EXPORT)
    assert (export.actor, export.page, export.path) == (
        "user:olga", "cases", "/cases/export.csv?status=open")

@pytest.mark.parametrize("order_id", ["\t=1+2", "\r=1+2"])
def test_a_cell_starting_with_a_tab_or_return_is_quoted_too(signed_in, template, order_id):
    """Some spreadsheets skip leading white space and run what follows as a formula."""
    late_payment_case(fresh_coupon(template), order_id=order_id)

    answer = signed_in("operator").get(reverse("console:cases_export"), {"status": "open"})

    _, *rows = rows_of(answer)
    assert [row[4] for row in rows] == [f"'{order_id}"]

def test_the_compensation_export_leaves_out_reasons_and_amounts_for_who_may_not_see_them(
        signed_in, make_person, client, template):
    proposal(fresh_coupon(template), amount=Decimal("12.50"))
    exporter = make_person("support", "sam")  # may export lists, not see case details
    exporter.user_permissions.add(Permission.objects.get(codename="export_lists"))
    client.force_login(exporter)

    header, *rows = rows_of(client.get(reverse("console:compensations_export")))
    full_header, *full_rows = rows_of(
        signed_in("operator").get(reverse("console:compensations_export")))

    assert {"reason", "amount"} & set(header) == set() and len(rows) == 1
    assert "redeemed by mistake" not in {cell for row in rows for cell in row}
    assert {"reason", "amount"} <= set(full_header)
    assert "redeemed by mistake" in full_rows[0] and "12.50" in full_rows[0]

def test_the_search_export_lists_every_match_of_the_same_search(signed_in, template):
    for _ in range(3):
        fresh_coupon(template, "bulk-user")
    fresh_coupon(template, "someone-else")

    answer = signed_in("operator").get(reverse("console:search_export"), {"q": "bulk-user"})

    _, *rows = rows_of(answer)
    assert {row[1] for row in rows} == {"bulk-user"} and len(rows) == 3

def test_support_cannot_export(signed_in):
    assert signed_in("support").get(reverse("console:cases_export")).status_code == 403
    assert not ViewRecord.objects.filter(kind=ViewRecord.Kind.EXPORT).exists()

def test_a_saved_filter_is_applied_by_its_link_and_deleted_by_its_owner(signed_in, template):
    client = signed_in("operator", "olga")

    saved = client.post(reverse("console:filter_save"),
                        {"page": "cases", "name": "Open ones", "query": "status=open&page=3"})

    kept = SavedFilter.objects.get()
    assert (kept.name, kept.query) == ("Open ones", "status=open")  # paging is not a filter
    assert saved["Location"] == "/cases/?status=open"
    page = client.get("/cases/?status=open").content.decode()
    assert 'href="/cases/?status=open" aria-current="true">Open ones</a>' in page
    again = client.post(reverse("console:filter_save"),
                        {"page": "cases", "name": "Open ones", "query": "status=all"})
    assert again.status_code == 302 and SavedFilter.objects.count() == 1

    client.post(reverse("console:filter_delete", args=[kept.pk]))

    assert not SavedFilter.objects.exists()

def test_nobody_deletes_or_sees_another_persons_filter(signed_in, client):
    owner = signed_in("operator", "olga")
    owner.post(reverse("console:filter_save"),
               {"page": "cases", "name": "Mine", "query": "status=open"})
    kept = SavedFilter.objects.get()
    client.logout()
    other = signed_in("operator", "oscar")

    assert "Mine" not in other.get("/cases/").content.decode()
    assert other.post(reverse("console:filter_delete", args=[kept.pk])).status_code == 404
    assert SavedFilter.objects.filter(pk=kept.pk).exists()

def bulk(client, name, ids, verb, note="", key=None, confirmed=True, seen=None):
    """As the list sends it: with each decision's version shown beside its checkbox (the
    current one unless `seen` says otherwise)."""
    if seen is None:
        seen = {i: journal_tip(RefundCoupon, i) for i in ids} if name == "decision_bulk" else {}
    return client.post(reverse(f"console:{name}"), {
        "ids": [str(i) for i in ids], "verb": verb, "note": note,
        "bulk_key": key or str(uuid.uuid4()), **({"confirmed": "yes"} if confirmed else {}),
        **{f"seen-{i}": tip for i, tip in seen.items() if tip}})

def test_bulk_reject_runs_each_decision_and_one_refused_item_blocks_none(signed_in,
                                                                        template):
    first = pending_decision(fresh_coupon(template), order_id="order-1")
    second = pending_decision(fresh_coupon(template, "u2"), order_id="order-2")
    client = signed_in("operator", "olga")
    bulk(client, "decision_bulk", [first.pk], "reject", note="duplicate refund")

    answer = bulk(client, "decision_bulk", [first.pk, 999999, second.pk], "reject",
                  note="duplicate refund")

    page = answer.content.decode()
    assert answer.status_code == 200
    assert "3 items: 1 done, 2 refused." in page
    assert f"Refund decision #{second.pk} rejected" in page
    assert "NOT_FOUND" in page  # 999999
    assert RefundCoupon.objects.get(pk=second.pk).status == RefundCoupon.Status.REJECTED
    assert RefundCoupon.objects.get(pk=second.pk).review_note == "duplicate refund"

def test_the_same_bulk_form_sent_twice_replays_each_item(signed_in, template):
    decision = pending_decision(fresh_coupon(template))
    client = signed_in("operator")
    key, seen = str(uuid.uuid4()), {decision.pk: journal_tip(RefundCoupon, decision.pk)}
    bulk(client, "decision_bulk", [decision.pk], "reject", note="twice", key=key, seen=seen)

    again = bulk(client, "decision_bulk", [decision.pk], "reject", note="twice", key=key,
                 seen=seen)

    assert "1 item: 1 done, 0 refused." in again.content.decode()
    assert "Already done (this form was sent before)" in again.content.decode()

def test_bulk_approve_sets_a_manual_review_aside_and_approves_the_rest(signed_in, template):
    manual = pending_decision(fresh_coupon(template))  # MANUAL_REVIEW: needs a chosen action
    client = signed_in("operator")

    asked = bulk(client, "decision_bulk", [manual.pk], "approve", confirmed=False)

    page = asked.content.decode()
    assert "set aside" in page and "its own choice of what happens" in page
    assert f'href="/approvals/manual-reviews#decision-{manual.pk}"' in page
    assert "Yes, Approve" not in page  # nothing here would run
    assert "VALIDATION_ERROR" not in page and "This field is required" not in page

    answer = bulk(client, "decision_bulk", [manual.pk], "approve")

    page = answer.content.decode()
    assert "1 item: 0 done, 0 refused. 1 set aside for its own form." in page
    assert "VALIDATION_ERROR" not in page
    assert RefundCoupon.objects.get(pk=manual.pk).status == \
        RefundCoupon.Status.PENDING_APPROVAL

def test_a_bulk_form_asks_first_and_changes_nothing_until_confirmed(signed_in, template):
    decision = pending_decision(fresh_coupon(template))
    client = signed_in("operator")

    asked = bulk(client, "decision_bulk", [decision.pk], "reject", note="duplicate",
                 confirmed=False)

    page = asked.content.decode()
    assert "Reject 1 item?" in page and 'name="confirmed" value="yes"' in page
    assert "Nothing is written to the ledger" in page
    assert RefundCoupon.objects.get(pk=decision.pk).status == \
        RefundCoupon.Status.PENDING_APPROVAL

def test_the_bulk_case_form_preselects_no_action(signed_in, template):
    late_payment_case(fresh_coupon(template))

    page = signed_in("operator").get("/cases/").content.decode()

    form = page[page.index('id="bulk-action"'):]
    form = form[:form.index("</select>")]
    assert 'required' in form and "selected" not in form
    assert form.index('<option value="">') < form.index('value="APPLY"')

def test_bulk_resolve_with_one_reason_resolves_each_open_case(signed_in, template):
    cases = [late_payment_case(fresh_coupon(template, f"u{i}"), order_id=f"order-{i}")
             for i in range(2)]

    answer = bulk(signed_in("operator", "olga"), "case_bulk", [c.pk for c in cases], "DISMISS",
                  note="paid twice by the customer's bank, refunded there")

    assert "2 items: 2 done, 0 refused." in answer.content.decode()
    for case in cases:
        case.refresh_from_db()
        assert (case.status, case.resolved_by) == (CaseStatus.DISMISSED, "user:olga")

def test_a_bulk_form_without_items_changes_nothing(signed_in, template):
    decision = pending_decision(fresh_coupon(template))

    answer = bulk(signed_in("operator"), "decision_bulk", [], "reject", note="x")

    assert answer.status_code == 400
    assert RefundCoupon.objects.get(pk=decision.pk).status == \
        RefundCoupon.Status.PENDING_APPROVAL

def test_an_export_is_in_the_readers_zone_with_notes_policy_and_a_bom(signed_in, template):

    decision = pending_decision(fresh_coupon(template))
    client = signed_in("operator", "olga")
    bulk(client, "decision_bulk", [decision.pk], "reject", note="退款重复")
    client.cookies["console_browser_tz"] = "Asia/Shanghai"

    header, row = rows_of(client.get(reverse("console:approvals_export"),
                                     {"status": "reviewed"}))

    fields = dict(zip(header, row, strict=True))
    assert fields["review note"] == "退款重复"
    assert fields["policy version"].startswith("default v")
    reviewed = fields["reviewed at"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+08:00", reviewed), reviewed


def test_an_export_has_its_headers_in_the_readers_language(
        signed_in, template, settings, compiled_catalogue):  # noqa: F811
    settings.LOCALE_PATHS = [str(compiled_catalogue)]
    pending_decision(fresh_coupon(template))

    header, _row = rows_of(signed_in("operator").get(reverse("console:approvals_export"),
                                                     HTTP_ACCEPT_LANGUAGE="zh-hans"))

    assert header[:3] == ["退款决策", "优惠券", "状态"] and "审核说明" in header


def test_an_export_has_the_default_policys_rule_in_the_readers_language(
        signed_in, template, settings, compiled_catalogue):  # noqa: F811
    settings.LOCALE_PATHS = [str(compiled_catalogue)]
    pending_decision(fresh_coupon(template))
    url = reverse("console:approvals_export")

    header, row = rows_of(signed_in("operator").get(url, HTTP_ACCEPT_LANGUAGE="zh-hans"))
    _, english = rows_of(signed_in("operator", "operator-2").get(url))

    assert dict(zip(header, row, strict=True))["规则"] == "有风控标记的退款由运营审批"
    assert "Risk-flagged refunds are reviewed by an operator" in english


def test_export_values_are_words_with_their_codes_in_the_readers_language(
        signed_in, template, compiled_catalogue, settings):  # noqa: F811
    settings.LOCALE_PATHS = [str(compiled_catalogue)]
    pending_decision(fresh_coupon(template))
    client = signed_in("operator")

    header, *rows = rows_of(client.get(reverse("console:approvals_export"),
                                       HTTP_ACCEPT_LANGUAGE="zh-hans"))
    row = dict(zip(header, rows[0], strict=True))

    assert row["状态"] == "待审批 (PENDING_APPROVAL)"
    assert row["有风险标记"] == "是" and "yes" not in rows[0]
