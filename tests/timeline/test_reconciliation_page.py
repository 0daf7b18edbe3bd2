"""The reconciliation page: open findings worst first, linked to their coupons, and the
operator's Apply and Dismiss buttons running through the services."""

import pytest
from django.urls import reverse

from coupons.models import CouponOperation, Finding
from tests.app_role import past_the_triggers
from tests.coupons.safety.breakage import version_gap
from tests.operations.reconciliation.conftest import closed_order_still_locked, reconcile
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db
PAGE = "/reconciliation/"


def test_open_findings_are_listed_worst_first_with_their_coupon(
        signed_in, template, ctx, broken_on_purpose):
    released = closed_order_still_locked(template, ctx)
    gap = version_gap(template, ctx)
    broken_on_purpose.add(gap.pk)
    reconcile()

    html = signed_in("operator").get(PAGE).content.decode()

    assert html.index("P0: history or money is wrong") < html.index("P2: late, will hurt")
    assert f'href="{reverse("console:coupon", args=[gap.pk])}"' in html
    assert f'href="{reverse("console:coupon", args=[released.coupon_id])}"' in html
    assert "Order closed-unreleased ended (OrderClosed) unpaid" in html
    assert "<dt>gaps</dt><dd>v2 expected, row v3→v4</dd>" in html
    assert "Apply: release the ended order&#x27;s lease" in html
    assert "2 coupons checked, 1 new, 1 still open, 0 closed" in html


def test_support_reads_the_findings_without_their_buttons(signed_in, template, ctx):
    closed_order_still_locked(template, ctx)

    html = signed_in("support").get(PAGE).content.decode()

    assert "Order closed-unreleased ended (OrderClosed) unpaid" in html
    assert "release the ended order&#x27;s lease" in html
    assert "<form method=\"post\" action=\"/reconciliation/" not in html
    assert "Dismiss" not in html


def test_the_nav_shows_the_page_to_operators_only(signed_in):
    assert f'href="{PAGE}"' in signed_in("operator").get("/").content.decode()
    assert f'href="{PAGE}"' not in signed_in("support", "support-2").get("/").content.decode()


def test_apply_runs_the_release_and_says_so(signed_in, template, ctx):
    finding = closed_order_still_locked(template, ctx)
    client = signed_in("operator", "op-1")

    answer = client.post(reverse("console:reconciliation_resolve", args=[finding.pk]),
                         {"action": "APPLY"}, follow=True)

    said = f"Finding {finding.pk} applied: release the ended order&#x27;s lease."
    assert said in answer.content.decode()
    assert CouponOperation.objects.filter(coupon=finding.coupon, op_type="RELEASE",
                                          actor="op-1").count() == 1
    assert "No open findings" in answer.content.decode()


def test_dismiss_without_a_reason_is_refused_beside_the_list(signed_in, template, ctx):
    finding = closed_order_still_locked(template, ctx)
    client = signed_in("operator")
    url = reverse("console:reconciliation_resolve", args=[finding.pk])

    refused = client.post(url, {"action": "DISMISS", "note": ""}, follow=True)
    dismissed = client.post(url, {"action": "DISMISS", "note": "order service fixed it"},
                            follow=True)

    assert "Say why it is dismissed. (VALIDATION_ERROR)" in refused.content.decode()
    assert f"Finding {finding.pk} dismissed." in dismissed.content.decode()
    assert Finding.objects.get(pk=finding.pk).resolution_note == "order service fixed it"


@pytest.mark.usefixtures("zh")
def test_a_findings_summary_reads_in_chinese_and_keeps_its_english_record(
        signed_in, template, ctx):
    closed_order_still_locked(template, ctx)

    html = signed_in("operator").get(PAGE, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "订单 closed-unreleased 未支付即结束（OrderClosed），该券仍为它锁定中。" in html
    assert "ended (OrderClosed) unpaid" not in html
    finding = Finding.objects.get()
    assert finding.summary.startswith("Order closed-unreleased ended (OrderClosed) unpaid")
    assert (finding.summary_code, finding.summary_params) == (
        "closed_still_locked", {"order": "closed-unreleased", "facts": "OrderClosed"})


def test_a_finding_written_before_the_codes_reads_as_stored(signed_in, template, ctx,
                                                          broken_on_purpose):
    closed_order_still_locked(template, ctx)
    # Such a finding's journal holds no code either; this one's does, so the coupon's check
    # names the UPDATE that stands in for its age.
    with past_the_triggers():
        Finding.objects.update(summary_code="", summary_params={})
    broken_on_purpose.update(Finding.objects.values_list("coupon_id", flat=True))

    html = signed_in("operator").get(PAGE, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "Order closed-unreleased ended (OrderClosed) unpaid" in html
