"""On a 390 × 844 phone, in both languages: the coupon check's answer is on the first screen
without scrolling, the timeline's words never break in the middle, and every link and button
of the header is a touch target of at least 24 × 24 CSS pixels (WCAG 2.5.8)."""

import pytest

from tests.browser.accessibility import axe_violations
from tests.browser.conftest import sign_in
from tests.browser.test_chinese import switch_to_chinese
from tests.timeline.incident import incident_coupon

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
LANGUAGES = ["en", "zh-hans"]


def below_first_screen(page, selector) -> float:
    """How far the element's bottom lies below the first screen (0 when it is all on it)."""
    page.evaluate("window.scrollTo(0, 0)")
    return page.evaluate("""selector => {
        const box = document.querySelector(selector).getBoundingClientRect();
        return Math.max(0, box.bottom - window.innerHeight);
    }""", selector)


# A Latin word (not inside a code, an id or a badge) whose letters lie on more than one line.
BROKEN_WORDS = """root => {
  const broken = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest("code, .code-badge, .badge, .visually-hidden")) continue;
    for (const match of node.textContent.matchAll(/[A-Za-z]{2,}/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
      if (lines.size > 1) broken.push(match[0]);
    }
  }
  return broken;
}"""

SMALL_TARGETS = """() => [...document.querySelectorAll(
    "header.bar a, header.bar button, header.bar input")]
  .filter((el) => el.checkVisibility())
  .map((el) => [el, el.getBoundingClientRect()])
  .filter(([, box]) => box.width < 24 || box.height < 24)
  .map(([el, box]) => `${el.tagName} ${el.textContent.trim() || el.name}: `
       + `${Math.round(box.width)}×${Math.round(box.height)}`)"""


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("role", ["support", "operator"])
def test_a_phone_shows_the_answer_first_whole_words_and_big_enough_links(
        page, person, template, clock, language, role):
    coupon = incident_coupon(template, clock)
    person(role, "sam")
    page.set_viewport_size(PHONE)
    sign_in(page, "sam", f"/coupons/{coupon.pk}/")
    if language != "en":
        switch_to_chinese(page)

    assert below_first_screen(page, "section.check .answer") == 0
    assert page.locator("#timeline").evaluate(BROKEN_WORDS) == []
    assert page.evaluate(SMALL_TARGETS) == []
    assert axe_violations(page) == []


def test_the_measures_see_a_word_broken_and_a_small_link(page, person):
    person("support", "sam")
    page.set_viewport_size(PHONE)
    sign_in(page, "sam")
    page.evaluate("""document.querySelector("main").insertAdjacentHTML("afterbegin",
        '<p id="narrow" style="width: 3em; overflow-wrap: anywhere">unbreakable</p>'
        + '<div style="height: 2000px"></div>')""")
    page.evaluate("""document.querySelector("header.bar").insertAdjacentHTML("beforeend",
        '<a href="/" style="display: inline; min-height: 0; min-width: 0">x</a>')""")

    assert page.locator("#narrow").evaluate(BROKEN_WORDS) == ["unbreakable"]
    [small] = page.evaluate(SMALL_TARGETS)
    assert small.startswith("A x: ")
    assert below_first_screen(page, "main > div:nth-of-type(1)") > 0
