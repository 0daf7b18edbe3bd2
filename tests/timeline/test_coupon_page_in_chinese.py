"""The coupon page's domain sentences (the diagnosis, what support should do, the invariants)
render in Chinese for a zh-hans reader; the page's own labels are the templates' part."""

import re

import pytest
from django.urls import reverse

from tests.conftest import lock
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


@pytest.mark.usefixtures("zh")
def test_coupon_page_answers_why_and_what_to_do_in_chinese(signed_in, coupon, ctx):
    lock(coupon, ctx, order_id="order-A")

    page = signed_in("support").get(reverse("console:coupon", args=[coupon.pk]),
                                    HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    order = '<a href="/search/?q=order-A">order-A</a>'
    assert f"已被订单 {order} 锁定，租约到期时间为 <time" in page
    assert f"如果订单 {order} 关闭或支付失败，优惠券会自动释放" in page
    assert "一张券最多只有一个有效锁定" in page
    assert "LOCK" in page  # codes and states stay English


def test_coupon_page_stays_english_by_default(signed_in, coupon, ctx):
    lock(coupon, ctx, order_id="order-A")

    page = signed_in("support").get(reverse("console:coupon", args=[coupon.pk])).content.decode()

    assert 'Locked by order <a href="/search/?q=order-A">order-A</a> until ' in page
    assert "a coupon has at most one active lock" in page


@pytest.mark.usefixtures("zh")
def test_the_evidence_invariants_read_for_support_with_the_engineering_behind_a_disclosure(
        signed_in, coupon):
    page = signed_in("support").get(reverse("console:coupon", args=[coupon.pk]),
                                    HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    items = re.findall(r'<li class="(?:ok|bad)">(.*?)</li>', page, re.S)
    eighth, ninth = items[7], items[8]
    assert "8. 我们收到的关于此券订单的每条消息都按收到时原样保存。" in eighth
    assert "9. 此券的每条记录（使用、退款、备注、补偿和冲突单）都按写入时原样保存。" in ninth
    for item in (eighth, ninth):
        # The engineering sentence (journal entries, folds) only inside the disclosure.
        before, disclosure = item.split("<details", 1)
        assert "<summary>如何核对</summary>" in disclosure
        assert "日志" not in before and "journal" not in before


@pytest.mark.usefixtures("zh")
def test_the_lease_invariant_says_a_newer_lease_not_an_updated_one(signed_in, coupon):
    page = signed_in("support").get(reverse("console:coupon", args=[coupon.pk]),
                                    HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    third = re.findall(r'<li class="(?:ok|bad)">(.*?)</li>', page, re.S)[2]
    # "更新的" reads as "updated"; the lease is the newer one.
    assert "3. 旧的租约令牌不能改动较新的租约" in third and "更新的" not in third
