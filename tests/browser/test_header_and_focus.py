"""The operator's header fits one row at a laptop's 1366 px in Chinese, and after an htmx
action the keyboard goes on from the next thing to act on, not from the page's start."""

import pytest
from playwright.sync_api import expect

from tests.browser.accessibility import axe_violations
from tests.browser.conftest import sign_in
from tests.browser.test_chinese import switch_to_chinese

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def one_row(page) -> bool:
    """Every item of the header shares the first item's row (same top, within a pixel or so)."""
    tops = page.evaluate("""() => [...document.querySelectorAll(
        'header.bar > .brand, header.bar nav a, header.bar form.search, header.bar .who > *')]
        .map((item) => item.getBoundingClientRect().top)""")
    return max(tops) - min(tops) < 12


def test_the_operators_chinese_header_is_one_row_at_1366_px(page, person):
    person("operator", "olga")
    page.set_viewport_size({"width": 1366, "height": 800})
    sign_in(page, "olga")
    switch_to_chinese(page)

    header = page.locator("header.bar")
    expect(header.get_by_role("link", name="审批")).to_be_visible()
    height = header.bounding_box()["height"]
    link = header.locator("nav a").first.bounding_box()["height"]
    assert one_row(page) and height < 2 * link + 8, height
    assert axe_violations(page) == []
