"""Retake the README's console screenshots from a running demo (bin/run-demo).

    PORT=8765 bin/run-demo &     # a fresh demo database gives the README's pictures
    .venv/bin/python scripts/screenshot_console.py --base http://127.0.0.1:8765

Signs in as the demo's support user, saves the dashboard and, through the search box, the
incident coupon's page (docs/dashboard.png, docs/coupon-page.png) with Debian's chromium; then
presses the header's 简体中文 switch and saves the same coupon page in Chinese
(docs/coupon-page-zh.png; a CJK font must be installed: apt-get install fonts-wqy-microhei),
and switches the user back to English. Then signs in as the demo's operator and saves the
approvals queue (docs/approvals.png): nothing pre-selected, the policy's recommendation, approve
and reject as two sections.

Last, in Chinese at 1366 px and at 390 px (a phone), the first screen of the incident coupon's
page and of the approvals queue, and the panel of the first compensation waiting for approval
(docs/*-zh.png and docs/*-zh-phone.png). Then the support floor's two pages in both languages,
at 1366 px: the incident customer's page as support reads it and the operator's one form for
the manual reviews (docs/customer-page*.png, docs/manual-reviews*.png). Run optipng on them
after (apt-get install optipng).
"""

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

DOCS = Path(__file__).resolve().parent.parent / "docs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--username", default="support")
    parser.add_argument("--password", default="support-demo")
    parser.add_argument("--order", default="order_demo_A", help="the incident's first order")
    parser.add_argument("--operator", default="operator")
    parser.add_argument("--operator-password", default="operator-demo")
    args = parser.parse_args()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        page = browser.new_page(base_url=args.base, viewport={"width": 1280, "height": 900})
        sign_in(page, args.username, args.password)
        switch_language(page, "English")  # in case the user last chose Chinese
        page.screenshot(path=DOCS / "dashboard.png", full_page=True)

        page.keyboard.press("/")
        page.keyboard.type(args.order)
        page.keyboard.press("Enter")
        page.wait_for_url("**/coupons/*/")
        page.screenshot(path=DOCS / "coupon-page.png", full_page=True)
        switch_language(page, "简体中文")
        page.screenshot(path=DOCS / "coupon-page-zh.png", full_page=True)
        switch_language(page, "English")
        print(f"saved {DOCS / 'dashboard.png'}, {DOCS / 'coupon-page.png'} and "
              f"{DOCS / 'coupon-page-zh.png'} ({page.url})")

        operator = browser.new_page(base_url=args.base, viewport={"width": 1280, "height": 900})
        sign_in(operator, args.operator, args.operator_password)
        switch_language(operator, "English")
        operator.goto("/approvals/")
        operator.screenshot(path=DOCS / "approvals.png", full_page=True)
        print(f"saved {DOCS / 'approvals.png'} ({operator.url})")
        coupon_path = page.url.split(args.base, 1)[-1]
        for suffix, viewport in WIDTHS.items():
            chinese_shots(browser, args, coupon_path, suffix, viewport)
        customer_path = page.locator("a[href^='/customers/']").first.get_attribute("href")
        for language, suffix in (("English", ""), ("简体中文", "-zh")):
            floor_shots(browser, args, customer_path, language, suffix)
        browser.close()


# The Chinese pictures: at a laptop's width, and at a phone's.
WIDTHS = {"": {"width": 1366, "height": 900}, "-phone": {"width": 390, "height": 844}}


def chinese_shots(browser, args, coupon_path: str, suffix: str, viewport: dict) -> None:
    """The coupon page's and the approvals queue's first screen and the compensation approve
    panel, as the operator reads them in Chinese at `viewport`."""
    page = browser.new_page(base_url=args.base, viewport=viewport)
    sign_in(page, args.operator, args.operator_password)
    switch_language(page, "简体中文")
    shots = []
    for name, path in (("coupon-page", coupon_path), ("approvals", "/approvals/")):
        page.goto(path)
        shots.append(DOCS / f"{name}-zh{suffix}.png")
        page.screenshot(path=shots[-1])
    page.goto("/compensations/")
    panel = page.locator("article.queue-item:has(section.decide-approve)").first
    shots.append(DOCS / f"compensation-approve-zh{suffix}.png")
    panel.screenshot(path=shots[-1])
    switch_language(page, "English")
    page.close()
    print("saved " + ", ".join(str(shot) for shot in shots))


def floor_shots(browser, args, customer_path: str, language: str, suffix: str) -> None:
    """The incident customer's page as support reads it, and the operator's one form for the
    manual reviews, in `language` (docs/customer-page*.png, docs/manual-reviews*.png)."""
    shots = []
    for (username, password), name, path in (
            ((args.username, args.password), "customer-page", customer_path),
            ((args.operator, args.operator_password), "manual-reviews",
             "/approvals/manual-reviews")):
        page = browser.new_page(base_url=args.base, viewport={"width": 1366, "height": 900})
        sign_in(page, username, password)
        switch_language(page, language)
        page.goto(path)
        shots.append(DOCS / f"{name}{suffix}.png")
        page.screenshot(path=shots[-1])
        switch_language(page, "English")
        page.close()
    print("saved " + ", ".join(str(shot) for shot in shots))


def sign_in(page, username: str, password: str) -> None:
    page.goto("/login/?next=/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()


def switch_language(page, name: str) -> None:
    """Presses the header's button for that language, if the page is not in it already."""
    button = page.get_by_role("button", name=name, exact=True)
    if button.count():
        button.click()
        page.wait_for_load_state()


if __name__ == "__main__":
    main()
