"""Each timeline entry shows its evidence: who did it, the Idempotency-Key
the request came with, and its order as a link that finds the order's coupons."""

import re

import pytest
from django.urls import reverse

from coupons.services import CommandContext, coupon_release
from tests.conftest import lock
from tests.timeline.test_coupon_page import codes

pytestmark = pytest.mark.django_db


def entries(page: str) -> list[str]:
    return [codes(e) for e in re.findall(r'<li id="t-[^"]+" class="tl-entry.*?</li>', page, re.S)]


def test_an_operation_shows_who_its_idempotency_key_and_links_its_order(signed_in, coupon):
    checkout = CommandContext(actor="client:checkout", idempotency_key="idem-lock-0042")
    _, proof = lock(coupon, checkout, order_id="ORDER_DEMO_A")
    coupon_release(coupon_id=coupon.pk, lease=proof, reason="order closed",
                   ctx=CommandContext(actor="user:olga"))

    page = signed_in("support").get(reverse("console:coupon", args=[coupon.pk])).content.decode()

    [locked] = [e for e in entries(page) if "LOCK AVAILABLE→LOCKED" in e]
    assert "by client:checkout" in locked
    assert "Idempotency-Key</span> <code>idem-lock-0042</code>" in locked
    assert '<a class="order-chip" href="/search/?q=ORDER_DEMO_A">ORDER_DEMO_A</a>' in locked
    [released] = [e for e in entries(page) if "RELEASE LOCKED→AVAILABLE" in e]
    assert "by user:olga" in released
    assert "Idempotency-Key" not in released  # a console action has none: nothing is shown
