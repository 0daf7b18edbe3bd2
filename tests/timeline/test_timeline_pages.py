"""The coupon page's timeline in pages: every page joins up into the whole timeline, in the
same order as the API's, even when many entries share one instant."""

import pytest

from coupons.errors import TokenMismatch
from coupons.history import TimelineKey, coupon_timeline, coupon_timeline_page
from coupons.services import CommandContext, coupon_redeem
from coupons.services.cases import case_resolve
from refunds.history import SOURCES as AFTER_SALE_SOURCES
from tests.conftest import lock

pytestmark = pytest.mark.django_db


@pytest.fixture
def crowded(coupon, ctx, send):
    """The incident with its late payment fact, its case and the case's compensation, all at
    one instant (the clock never moves): only the tie-breakers order them."""
    _, proof_a = lock(coupon, ctx, order_id="A")
    send("OrderClosed", order_id="A")
    lock(coupon, ctx, order_id="B")
    with pytest.raises(TokenMismatch):
        coupon_redeem(coupon_id=coupon.pk, lease=proof_a, payment_id="P-A", ctx=ctx)
    case_id = send("PaymentSucceeded", order_id="A", payment_id="P-A")["outcome"]["case_id"]
    case_resolve(case_id=case_id, action="APPLY", note="refunded",
                 ctx=CommandContext(actor="user:olga", idempotency_key="apply"))
    return coupon


def shape(entries) -> list[tuple]:
    return [(e["kind"], e["id"], e["title"]) for e in entries]


def whole(coupon) -> list[tuple]:
    return shape(coupon_timeline(coupon=coupon, can_see_details=True,
                                 extra_sources=AFTER_SALE_SOURCES))


def timeline_page(coupon, **cursor):
    """A page with after-sale's entries too, as the console reads it."""
    return coupon_timeline_page(coupon=coupon, can_see_details=True,
                                extra_sources=AFTER_SALE_SOURCES, **cursor)


@pytest.mark.parametrize("size", [1, 2, 3, 50])
def test_walking_back_from_the_latest_page_gives_the_whole_timeline(crowded, size):
    pages = [timeline_page(crowded, size=size)]
    while pages[-1].earlier:
        pages.append(timeline_page(crowded, size=size, before=pages[-1].earlier))
    assert pages[0].later is None
    walked = [entry for page in reversed(pages) for entry in shape(page.entries)]
    assert len(whole(crowded)) > 10
    assert "compensation" in {kind for kind, _id, _title in whole(crowded)}
    assert walked == whole(crowded)


@pytest.mark.parametrize("size", [1, 2, 3])
def test_walking_forward_from_the_first_entry_gives_the_whole_timeline(crowded, size):
    beginning = TimelineKey.parse("0-0-0-0")
    pages = [timeline_page(crowded, size=size, start=beginning)]
    while pages[-1].later:
        pages.append(timeline_page(crowded, size=size, after=pages[-1].later))
    walked = [entry for page in pages for entry in shape(page.entries)]
    assert walked == whole(crowded)


def test_a_page_from_an_entry_starts_with_that_entry(crowded):
    everything = timeline_page(crowded, size=50).entries
    for position, entry in enumerate(everything):
        page = timeline_page(crowded, size=3, start=entry["key"])
        assert shape(page.entries) == shape(everything[position:position + 3])


def test_a_cursor_survives_its_text_form_and_nonsense_is_no_cursor(crowded):
    key = timeline_page(crowded).entries[3]["key"]
    assert TimelineKey.parse(str(key)) == key
    for nonsense in ("", "x", "1-2-3", "1-2-3-x", "9" * 40 + "-1-1-1", None):
        assert TimelineKey.parse(nonsense) is None
