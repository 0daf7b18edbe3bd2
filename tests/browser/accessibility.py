"""axe-core (axe-playwright-python bundles it) over the page a browser test is on."""

from axe_playwright_python.sync_playwright import Axe

# WCAG 2.1 A and AA: what the console promises; best-practice rules are advice, not failures.
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a",
                                                     "wcag21aa"]},
               "resultTypes": ["violations"]}


def axe_violations(page) -> list[str]:
    """`rule: target` for each violation; empty when the page passes."""
    results = Axe().run(page, options=AXE_OPTIONS)
    return [f"{violation['id']}: {node['target']}"
            for violation in results.response["violations"] for node in violation["nodes"]]
