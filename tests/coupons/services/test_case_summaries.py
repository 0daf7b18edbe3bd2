"""A case's summary is kept in English as written, and read in the reader's language."""

import pytest
from django.utils import translation

from coupons.models import ConflictCase
from coupons.services.cases import case_open
from tests.conftest import lock
from tests.coupons.safety.breakage import issued

pytestmark = pytest.mark.django_db


def test_the_summary_is_stored_in_english_with_its_code_and_read_in_chinese(template, ctx):
    coupon = issued(template, ctx)
    lock(coupon, ctx, order_id="order-B")
    coupon.refresh_from_db()

    case = case_open(coupon=coupon, order_id="order-A", fact_type="PaymentSucceeded",
                     evidence={})
    stored = ConflictCase.objects.get(pk=case.pk)

    assert stored.summary == ("Order order-B now holds the coupon: refund this order's "
                              "discount instead.")
    assert (stored.summary_code, stored.summary_params) == ("held_by_another_order",
                                                            {"order": "order-B"})
    with translation.override("zh-hans"):
        chinese = stored.summary_text
    assert "order-B" in chinese and "Order" not in chinese and "refund" not in chinese


def test_a_case_without_a_code_reads_as_it_was_stored(template, ctx):
    case = case_open(coupon=issued(template, ctx), order_id="order-A",
                     fact_type="PaymentSucceeded", evidence={})
    case.summary_code = ""

    with translation.override("zh-hans"):
        assert case.summary_text == case.summary
