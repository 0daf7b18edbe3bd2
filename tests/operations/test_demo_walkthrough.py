"""The documentation's demo walk-through does what it says on the demo `seed_demo` builds: the
coupon it locks is AVAILABLE for the user it names, and the queues hold what it says wait."""

import re
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from coupons.models import CouponStatus, UserCoupon
from coupons.services import CommandContext, coupon_lock
from refunds.models import Compensation

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}


@pytest.fixture(autouse=True)
def demo(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.COUPONS_DEMO = True  # seed_demo runs only on a demo
    call_command("seed_demo", stdout=StringIO())


def test_the_coupon_the_api_walk_through_locks_is_available_for_its_user():
    walk = ROOT.joinpath("docs/api.md").read_text().split("## Lock, then redeem", 1)[1]
    walk = walk.split("\n## ", 1)[0]
    [coupon_id] = set(re.findall(r"\$API/coupons/(\d+)/lock", walk))
    user = re.search(r'"user_id": "(\w+)"', walk)[1]

    amount = re.search(r'"order_amount": "([\d.]+)"', walk)[1]
    discount = re.search(r'"discount_amount": "([\d.]+)"', walk)[1]
    # The docs name ids as a fresh demo numbers them, from 1; a database whose sequences
    # moved on (earlier tests) numbers the same coupons from its first one.
    first = UserCoupon.objects.order_by("pk").values_list("pk", flat=True).first()
    coupon = UserCoupon.objects.get(pk=first - 1 + int(coupon_id))

    assert (coupon.status, coupon.user_id) == (CouponStatus.AVAILABLE, user)
    locked = coupon_lock(coupon_id=coupon.pk, order_id="order-42", user_id=user,
                         order_amount=Decimal(amount), ctx=CommandContext(actor="test"))
    coupon.refresh_from_db()
    assert (coupon.status, str(locked.discount_amount)) == (CouponStatus.LOCKED, discount)


@pytest.mark.parametrize("page, sentence", [
    ("README.md", r"(\w+) compensations? waiting for\s+a second operator"),
    ("docs/after-sale.md", r"`seed_demo` leaves (\w+) proposals? waiting"),
])
def test_the_docs_say_how_many_compensations_wait_for_a_second_operator(page, sentence):
    said = re.search(sentence, ROOT.joinpath(page).read_text())

    waiting = Compensation.objects.filter(status=Compensation.Status.PROPOSED).count()
    assert said and WORDS[said[1]] == waiting
