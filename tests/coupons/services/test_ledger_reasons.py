"""A ledger row keeps the services' English reason, and beside it the sentence's code and
values, read in the reader's language; a typed reason or an old row reads as stored."""

import pytest
from django.utils import translation

from coupons.history import coupon_timeline
from coupons.ledger_reasons import reason, reason_words
from coupons.models import CommandRejection, CouponOperation
from coupons.refusal_messages import refusal_words
from coupons.services import coupon_expire, coupon_release, coupon_void
from coupons.write.context import LeaseProof
from tests.conftest import lock
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("zh")]


def row(coupon, op_type) -> CouponOperation:
    return CouponOperation.objects.get(coupon=coupon, op_type=op_type)


def in_chinese(operation) -> str:
    with translation.override("zh-hans"):
        return reason_words(operation)


def test_the_issue_and_the_expiry_keep_english_and_read_in_chinese(coupon, ctx, clock):
    clock.advance(days=31)
    coupon_expire(coupon_id=coupon.pk, expected_version=1, ctx=ctx)

    issued, expired = row(coupon, "ISSUE"), row(coupon, "EXPIRE")
    assert (issued.reason, issued.reason_code, issued.reason_params) == (
        "issued from off30 v1", "issued_from", {"terms": "off30 v1"})
    assert (expired.reason, expired.reason_code) == ("past valid_until 2026-07-01T12:00:00Z",
                                                     "past_valid_until")
    assert in_chinese(issued) == "按 off30 v1 发券"
    assert in_chinese(expired) == "已过有效期（截至 2026-07-01T12:00:00Z）"
    with translation.override("en"):
        assert reason_words(expired) == expired.reason  # English reads as stored


def test_the_lease_scanners_release_reads_in_chinese(coupon, ctx, clock):
    result, _ = lock(coupon, ctx, lease_seconds=60)
    clock.advance(minutes=5)
    coupon_release(coupon_id=coupon.pk, ctx=ctx, reason=reason("lease_expired"),
                   lease=LeaseProof.from_lock(result.lock, expected_version=2))

    released = row(coupon, "RELEASE")
    assert (released.reason, released.reason_code, released.reason_params) == (
        "lease expired", "lease_expired", {})
    assert in_chinese(released) == "租约到期"


def test_a_typed_reason_has_no_code_and_reads_as_typed(coupon, ctx):
    coupon_void(coupon_id=coupon.pk, expected_version=1, reason="campaign ended early", ctx=ctx)

    voided = row(coupon, "VOID")
    assert (voided.reason_code, voided.reason_params) == ("", None)
    assert in_chinese(voided) == "campaign ended early"


def test_a_row_written_before_the_codes_reads_as_stored(coupon):
    issued = row(coupon, "ISSUE")
    issued.reason_code, issued.reason_params = "", None

    assert in_chinese(issued) == "issued from off30 v1"


def test_the_timeline_words_the_reason_and_names_its_code(coupon, ctx):
    with translation.override("zh-hans"):
        [entry] = coupon_timeline(coupon=coupon, can_see_details=True)

    assert entry["details"]["reason"] == "按 off30 v1 发券"
    assert entry["details"]["reason_code"] == "issued_from"


@pytest.mark.parametrize("params", [
    {},  # the sentence needs `terms`
    {"term": "off30 v1"},  # a name the sentence does not know
    None,
])
def test_a_row_whose_values_lack_a_name_its_sentence_needs_reads_as_stored(coupon, params):
    issued = row(coupon, "ISSUE")
    issued.reason_params = params

    assert in_chinese(issued) == "issued from off30 v1"
    with translation.override("en"):
        assert reason_words(issued) == "issued from off30 v1"


def test_a_nested_value_lacking_its_parts_reads_as_stored(coupon):
    issued = row(coupon, "ISSUE")
    # A case summary inside a reason is itself a code and values; here its values are gone.
    issued.reason, issued.reason_code = "conflict case 7: a late payment", "conflict_case"
    issued.reason_params = {"case": 7, "case_summary": {"code": "late_payment"}}

    assert in_chinese(issued) == "conflict case 7: a late payment"


def test_a_refusal_whose_values_lack_a_name_reads_as_stored():
    rejection = CommandRejection(message="LOCK is not allowed from USED.",
                                 message_code="not_allowed_from", message_params={"op": "LOCK"})

    with translation.override("zh-hans"):
        assert refusal_words(rejection) == "LOCK is not allowed from USED."
