"""A refusal whose message is built from values keeps it in English with its code and values,
and reads in the reader's language; an error's own sentence reads from the catalogue."""

import pytest
from django.utils import translation

from coupons.errors import InvalidState
from coupons.history import coupon_timeline
from coupons.models import CommandRejection
from coupons.refusal_messages import refusal_words
from coupons.services import coupon_renew
from coupons.write.context import LeaseProof
from coupons.write.refusals import record_console_denial
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("zh")]


def test_a_refused_transition_is_stored_in_english_with_its_code(coupon, ctx):
    proof = LeaseProof.from_token(order_id="order-A", lock_token="x", expected_version=1)
    with pytest.raises(InvalidState):
        coupon_renew(coupon_id=coupon.pk, lease=proof, lease_seconds=60, ctx=ctx)

    refusal = CommandRejection.objects.get(coupon_id_ref=coupon.pk)
    assert (refusal.message, refusal.message_code, refusal.message_params) == (
        "RENEW is not allowed from AVAILABLE.", "not_allowed_from",
        {"op": "RENEW", "state": "AVAILABLE"})
    with translation.override("zh-hans"):
        assert refusal_words(refusal) == "状态 AVAILABLE 下不允许执行 RENEW。"
        [_, entry] = coupon_timeline(coupon=coupon, can_see_details=True)
    assert entry["details"]["message"] == "状态 AVAILABLE 下不允许执行 RENEW。"
    assert entry["details"]["message_code"] == "not_allowed_from"


def test_a_console_denial_reads_in_chinese():
    record_console_denial(actor="user:sue", path="/approvals/", method="POST",
                          capability="approve_refunds")

    refusal = CommandRejection.objects.get(op_type="CONSOLE")
    assert refusal.message == "POST /approvals/ needs approve_refunds"
    with translation.override("zh-hans"):
        assert refusal_words(refusal) == "POST /approvals/ 需要权限 approve_refunds"


def test_a_refusal_without_a_code_reads_as_the_catalogue_finds_it(coupon, ctx):
    refusal = CommandRejection(message="No such coupon.", message_code="")
    stranger = CommandRejection(message="something the catalogue never held")

    with translation.override("zh-hans"):
        assert refusal_words(refusal) != "No such coupon."
        assert refusal_words(stranger) == "something the catalogue never held"
