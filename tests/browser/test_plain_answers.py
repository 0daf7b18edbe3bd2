"""Plain answers in a real browser: the browser's zone by default, a zone of one's own,
plain answers with badges, the 8-character lock id, each page passing axe."""

import re

import pytest

from tests.browser.accessibility import axe_violations
from tests.browser.conftest import sign_in
from tests.timeline.queue_objects import fresh_coupon, late_payment_case, proposal

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CODE = re.compile(r"\b[A-Z]{2,}(?:_[A-Z]+)+\b|\b(?:AVAILABLE|LOCKED|USED|EXPIRED|VOID)\b")


@pytest.fixture
def shanghai(chromium, live_server):
    """A browser set to Asia/Shanghai, as a support agent's laptop in Hangzhou would be."""
    context = chromium.new_context(base_url=live_server.url, timezone_id="Asia/Shanghai",
                                   viewport={"width": 1366, "height": 900})
    yield context.new_page()
    context.close()


def times_shown(page) -> list[str]:
    return page.locator("main time").all_inner_texts()


def test_times_follow_the_browser_then_the_zone_the_person_picks(shanghai, person, template,
                                                                  clock):
    coupon = fresh_coupon(template)
    case = late_payment_case(coupon)
    person("support", "sam")
    sign_in(shanghai, "sam", f"/coupons/{coupon.pk}/")

    shanghai.wait_for_url(f"**/coupons/{coupon.pk}/")
    shown = times_shown(shanghai)
    assert shown and all(text.endswith(" UTC+8") for text in shown), shown
    zone_link = shanghai.locator(".zone-link")
    # Known from the browser's cookie, set on the sign-in page: the server wrote the page so.
    assert zone_link.inner_text() == "Times in UTC+8"
    assert shanghai.locator("html").get_attribute("data-zone-source") == "browser"
    # The check panel: plain words, the case a link, the code only in its badge.
    answer = shanghai.locator(".check").first
    assert answer.get_by_role("link", name=f"#{case.pk}").first.is_visible()
    running = answer.evaluate(
        "el => { const c = el.cloneNode(true);"
        " c.querySelectorAll('.code-badge, .invariants, .replay, h2').forEach(b => b.remove());"
        " return c.innerText; }")
    assert not CODE.search(running), running
    assert axe_violations(shanghai) == []

    zone_link.click()
    shanghai.wait_for_url("**/time-zone/**")
    assert axe_violations(shanghai) == []
    shanghai.get_by_label("Time zone").select_option("America/New_York")
    shanghai.get_by_role("button", name="Save").click()
    shanghai.wait_for_url(f"**/coupons/{coupon.pk}/")

    shown = times_shown(shanghai)
    assert shown and all(text.endswith(" UTC-4") for text in shown), shown  # June: EDT


def test_a_pending_compensation_shows_in_the_answer_and_the_lock_id_finds_the_coupon(
        page, person, template, clock):
    coupon = fresh_coupon(template)
    compensation = proposal(coupon, proposer="user:alice")
    lock_id = str(coupon.locks.get().pk)
    person("support", "sam")
    sign_in(page, "sam")

    page.keyboard.press("/")
    page.keyboard.type(lock_id[:8].upper())
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/coupons/{coupon.pk}/")

    waiting = page.locator(".check .pending")
    assert "waits for a second operator" in waiting.inner_text()
    waiting.get_by_role("link", name=f"#{compensation.pk}").click()
    page.wait_for_url(f"**/compensations/?status=proposed#compensation-{compensation.pk}")
    assert page.locator(f"#compensation-{compensation.pk}").is_visible()


def test_the_zone_page_and_the_answer_in_chinese(shanghai, person, template, clock):
    coupon = fresh_coupon(template)
    compensation = proposal(coupon, proposer="user:alice")
    person("support", "li")
    sign_in(shanghai, "li", f"/coupons/{coupon.pk}/")
    shanghai.wait_for_url(f"**/coupons/{coupon.pk}/")
    shanghai.get_by_role("button", name="简体中文", exact=True).click()
    shanghai.wait_for_load_state()

    waiting = shanghai.locator(".check .pending")
    assert "正等待另一位运营批准" in waiting.inner_text()
    assert waiting.get_by_role("link", name=f"#{compensation.pk}").is_visible()
    assert axe_violations(shanghai) == []

    shanghai.locator(".zone-link").click()
    shanghai.wait_for_url("**/time-zone/**")
    assert shanghai.locator("html").get_attribute("lang") == "zh-hans"
    assert axe_violations(shanghai) == []
    shanghai.get_by_label("时区").select_option("Europe/Paris")
    shanghai.get_by_role("button", name="保存").click()
    shanghai.wait_for_url(f"**/coupons/{coupon.pk}/")

    shown = times_shown(shanghai)
    assert shown and all(text.endswith(" UTC+2") for text in shown), shown  # June: CEST
