"""The coupon page's check panel says whether a signed checkpoint covers the coupon."""

import pytest
from django.test import Client

from coupons.services import coupon_void
from operations.checkpoint import ledger_checkpoint
from tests.api.roles import person

pytestmark = pytest.mark.django_db


@pytest.fixture
def page():
    client = Client()
    client.force_login(person("sam", group="support"))
    return lambda coupon: client.get(f"/coupons/{coupon.pk}/").content.decode()


def test_before_any_checkpoint_the_coupon_is_newer_than_the_last_one(redeemed, page):
    assert "Newer than the last checkpoint: no signed checkpoint covers this coupon yet." in \
        page(redeemed)


def test_a_checkpointed_coupon_is_covered_by_it(redeemed, page, checkpoint_dir):
    ledger_checkpoint()

    assert "Covered by checkpoint 1 signed at <time datetime=\"2026-06-01T12:00:00+00:00\"" in \
        page(redeemed)


def test_a_change_after_the_checkpoint_is_newer_than_it(redeemed, page, ctx, checkpoint_dir):
    ledger_checkpoint()
    coupon_void(coupon_id=redeemed.pk, expected_version=3, reason="fraud", ctx=ctx)

    text = page(redeemed)
    assert "Versions up to v3 are covered by checkpoint 1 signed at" in text
    assert "the changes since are newer than the last checkpoint." in text
