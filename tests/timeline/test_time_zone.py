"""One time format with its zone everywhere; each person picks the zone."""

import pytest
from django.test import Client
from django.urls import reverse

from timeline.models import ConsolePreference
from timeline.time_zones import BROWSER_COOKIE

pytestmark = pytest.mark.django_db

ZONE_PAGE = "/time-zone/"


@pytest.fixture
def support(signed_in):
    return signed_in("support", "sam")


def coupon_page(client, coupon) -> str:
    return client.get(reverse("console:coupon", args=[coupon.pk])).content.decode()


def test_before_the_browser_says_its_zone_times_are_utc_and_the_page_says_so(support, coupon):
    page = coupon_page(support, coupon)

    # Issued at the frozen clock's 2026-06-01 12:00 UTC; console.js rewrites a "default" page.
    assert 'data-zone-source="default"' in page
    assert ">2026-06-01 12:00 UTC</time>" in page
    assert "Times in UTC<" in page


def test_the_browsers_zone_is_the_default(support, coupon):
    support.cookies[BROWSER_COOKIE] = "Asia/Shanghai"

    page = coupon_page(support, coupon)

    assert 'data-zone="Asia/Shanghai" data-zone-source="browser"' in page
    assert ">2026-06-01 20:00 UTC+8</time>" in page
    assert 'title="Asia/Shanghai · 2026-06-01 12:00:00 UTC"' in page
    assert "Times in UTC+8<" in page
    assert "T12:00:00+00:00" in page  # the machine-readable instant stays UTC


def test_a_chosen_zone_wins_over_the_browser_and_is_kept_on_the_user(support, coupon,
                                                                     django_user_model):
    support.cookies[BROWSER_COOKIE] = "Asia/Shanghai"

    answer = support.post(ZONE_PAGE, {"zone": "America/New_York", "next": "/coupons/1/"})

    assert answer.status_code == 302 and answer["Location"] == "/coupons/1/"
    assert ">2026-06-01 08:00 UTC-4</time>" in coupon_page(support, coupon)
    sam = django_user_model.objects.get(username="sam")
    assert ConsolePreference.objects.get(user=sam).time_zone == "America/New_York"
    # Another browser, signed in again: the same zone, read once at sign-in.
    elsewhere = Client()
    elsewhere.force_login(sam)
    elsewhere.cookies[BROWSER_COOKIE] = "Europe/Paris"
    assert ">2026-06-01 08:00 UTC-4</time>" in coupon_page(elsewhere, coupon)


def test_choosing_the_browsers_zone_again_follows_the_browser(support, coupon):
    support.post(ZONE_PAGE, {"zone": "Asia/Kolkata"})
    assert ">2026-06-01 17:30 UTC+5:30</time>" in coupon_page(support, coupon)

    support.post(ZONE_PAGE, {"zone": ""})
    support.cookies[BROWSER_COOKIE] = "Europe/Paris"

    assert ">2026-06-01 14:00 UTC+2</time>" in coupon_page(support, coupon)


def test_the_zone_page_offers_the_browsers_zone_first(support):
    support.cookies[BROWSER_COOKIE] = "Asia/Shanghai"

    page = support.get(ZONE_PAGE).content.decode()

    assert '<option value="" selected>My browser&#x27;s zone (Asia/Shanghai)</option>' in page
    assert '<option value="Europe/Paris">Europe/Paris</option>' in page


@pytest.mark.parametrize("zone", ["Mars/Olympus", "UTC'><script>", "../../etc/passwd"])
def test_an_unknown_zone_is_refused_and_nothing_is_stored(support, zone):
    answer = support.post(ZONE_PAGE, {"zone": zone})

    assert answer.status_code == 400
    assert "is not one of the available choices" in answer.content.decode()
    assert not ConsolePreference.objects.exists()


def test_an_unknown_browser_zone_is_ignored(support, coupon):
    support.cookies[BROWSER_COOKIE] = "Nowhere/Atlantis"

    assert ">2026-06-01 12:00 UTC</time>" in coupon_page(support, coupon)


@pytest.mark.parametrize("back", ["https://evil.example/", "//evil.example/", ""])
def test_the_zone_page_never_sends_anyone_off_site(support, back):
    answer = support.post(ZONE_PAGE, {"zone": "UTC", "next": back})

    assert answer["Location"] == "/"
