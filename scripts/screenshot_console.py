"""Retake the README's console screenshots from a running demo (bin/run-demo).

    PORT=8765 bin/run-demo &     # a fresh demo database gives the README's pictures
    .venv/bin/python scripts/screenshot_console.py --base http://127.0.0.1:8765

Signs in as the demo's support user, saves the dashboard and, through the search box, the
incident coupon's page (docs/dashboard.png, docs/coupon-page.png) with Debian's chromium.
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
    args = parser.parse_args()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        page = browser.new_page(base_url=args.base, viewport={"width": 1280, "height": 900})
        page.goto("/login/?next=/")
        page.get_by_label("Username").fill(args.username)
        page.get_by_label("Password").fill(args.password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_load_state()
        page.screenshot(path=DOCS / "dashboard.png", full_page=True)

        page.keyboard.press("/")
        page.keyboard.type(args.order)
        page.keyboard.press("Enter")
        page.wait_for_url("**/coupons/*/")
        page.screenshot(path=DOCS / "coupon-page.png", full_page=True)
        print(f"saved {DOCS / 'dashboard.png'} and {DOCS / 'coupon-page.png'} ({page.url})")
        browser.close()


if __name__ == "__main__":
    main()
