"""The layout's rules, checked on the source: which package may import which, the one place
that writes a coupon's state version, and the docs/design.md table.

From the bottom up: `common` (plumbing) imports no app; the coupon core imports neither
after-sale, the background processes, the console nor the HTTP kit (`api`), not even lazily,
and reaches after-sale only through the hooks refunds installs (coupons/after_sale.py, whose
list is frozen here: a new hook is a decision, not a drift); the HTTP kit sits on the core;
each domain's own endpoints (`<app>/api/`) sit on the kit; after-sale (refunds) sits on the
core; the background processes (operations) may use both domains; the console sits on top and
imports no HTTP layer.
"""

import ast
import re
from pathlib import Path

import pytest

from coupons import after_sale

ROOT = Path(__file__).resolve().parents[2]
APPS = ["common", "api", "coupons", "refunds", "operations", "timeline"]
HTTP_LAYERS = {"api", "coupons.api", "refunds.api", "operations.api"}
# package (or a folder of one) → the packages and modules it must never import
FORBIDDEN = {
    "common": {"api", "coupons", "refunds", "operations", "timeline"},
    "api": {"refunds", "operations", "timeline", "coupons.api"},
    "coupons": {"api", "refunds", "operations", "timeline", "coupons.api"},
    "coupons/api": {"refunds", "operations", "timeline"},
    "refunds": {"operations", "timeline"},
    "operations": {"timeline"},
    "timeline": HTTP_LAYERS,
}
# The moments of its own commands and check the core hands to after-sale. Each one widens the
# seam: one is added here on purpose, with its declaration in coupons/after_sale.py.
AFTER_SALE_HOOKS = [
    "decide_refunds_awaiting_redemption",
    "awaiting_redemption_sql",
    "receive_refund",
    "owe_order_discount",
    "owe_presale_discount",
    "return_policy_named",
    "check_returns",
]
# Only these modules write a coupon's state_version: the one compare-and-set (its Python and its
# SQL), its set-based twins for the scanners (same WHERE on state and version), and issuing a
# coupon at version 1.
VERSION_WRITERS = {
    "coupons/write/transitions.py",
    "coupons/sql/transitions.py",
    "coupons/services/bulk_expire.py",
    "coupons/services/bulk_release.py",
    "coupons/services/issue.py",
}


def layer_of(name: str) -> str:
    """The FORBIDDEN key a source file answers to: its folder's own entry, else its package's."""
    parts = name.split("/")
    return "/".join(parts[:2]) if "/".join(parts[:2]) in FORBIDDEN else parts[0]


def sources(app: str):
    for path in sorted((ROOT / app).rglob("*.py")):
        if "migrations" not in path.parts:
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text())


def imported_modules(tree) -> set[str]:
    """Every module the source imports, at the top or inside a function, by statement or by
    import_module("...") with the name written out."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", None))
              in {"import_module", "__import__"}):
            found.add(node.args[0].value)
    return found


def forbidden_imports(name: str, tree) -> set[str]:
    banned = FORBIDDEN[layer_of(name)]
    return {ban for module in imported_modules(tree) for ban in banned
            if module == ban or module.startswith(f"{ban}.")}


def import_violations(files) -> list[str]:
    return [f"{name} imports {ban}" for name, tree in files
            for ban in sorted(forbidden_imports(name, tree))]


# SQL text that writes the coupon table.
COUPON_WRITE_SQL = re.compile(r'\b(UPDATE|INSERT\s+INTO)\s+"?coupons_usercoupon\b', re.I)


def version_writes(files) -> list[str]:
    """Modules that assign `x.state_version = ...`, pass `state_version=` to a write, or hold
    SQL that updates or inserts coupon rows."""
    writes = []
    for name, tree in files:
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and COUPON_WRITE_SQL.search(node.value)):
                writes.append(name)
            elif isinstance(node, ast.Assign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Attribute) and t.attr == "state_version"
                       for t in targets):
                    writes.append(name)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in {"update", "create", "bulk_create", "update_or_create",
                                         "get_or_create"}
                  and any(k.arg == "state_version" for k in node.keywords)):
                writes.append(name)
    return sorted(set(writes))


@pytest.mark.parametrize("app", APPS)
def test_each_package_imports_only_what_sits_below_it(app):
    assert import_violations(sources(app)) == []


def test_the_import_check_names_a_core_module_that_imports_after_sale():
    lazily = ast.parse("def f():\n    from refunds.services import refund_receive\n")
    by_name = ast.parse("import importlib\nimportlib.import_module('refunds.history')\n")
    broken = [("coupons/services/redeem.py", lazily), ("coupons/after_sale.py", lazily),
              ("coupons/history.py", by_name)]
    assert import_violations(broken) == ["coupons/services/redeem.py imports refunds",
                                         "coupons/after_sale.py imports refunds",
                                         "coupons/history.py imports refunds"]


def test_the_core_hands_after_sale_these_hooks_and_no_other():
    assert list(after_sale.HOOKS) == AFTER_SALE_HOOKS


def test_after_sale_has_answered_every_hook_once_django_has_started():
    assert [name for name, hook in after_sale.HOOKS.items() if hook.implementation is None] == []


def test_the_import_check_names_a_console_view_that_imports_an_http_layer():
    broken = [("timeline/views/coupon.py", ast.parse(
        "from api.permissions import HasCapability\nfrom coupons.api import serializers\n"))]
    assert import_violations(broken) == ["timeline/views/coupon.py imports api",
                                         "timeline/views/coupon.py imports coupons.api"]


def test_the_import_check_lets_a_domain_endpoint_use_the_http_kit_but_not_the_core():
    kit = ast.parse("from api.commands import run_command\n")
    assert import_violations([("coupons/api/views.py", kit)]) == []
    assert import_violations([("coupons/selectors.py", kit)]) == [
        "coupons/selectors.py imports api"]


def test_only_the_transition_modules_write_a_coupons_state_version():
    written = version_writes(file for app in APPS for file in sources(app))
    assert set(written) <= VERSION_WRITERS, set(written) - VERSION_WRITERS


def test_the_version_check_names_a_view_that_writes_a_version():
    broken = [("timeline/views/coupon.py", ast.parse(
        "coupon.state_version = 9\nUserCoupon.objects.filter(pk=1).update(state_version=2)\n"))]
    assert version_writes(broken) == ["timeline/views/coupon.py"]


def test_the_version_check_names_a_module_whose_sql_writes_coupon_rows():
    broken = [("coupons/sql/sneaky.py", ast.parse(
        'MOVE = f"UPDATE coupons_usercoupon SET status = %s WHERE id = %s"\n')),
              ("coupons/sql/reads.py", ast.parse('READ = "SELECT * FROM coupons_usercoupon"\n'))]
    assert version_writes(broken) == ["coupons/sql/sneaky.py"]


def where_things_are() -> list[tuple[str, str]]:
    """(folder, first file to read) from the docs/design.md table."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Where things are", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)/` \| [^|]+ \| `([^`]+)` \|$", section, re.M)


def test_the_readme_names_every_package_and_a_first_file_that_exists():
    rows = where_things_are()
    assert {folder for folder, _ in rows} >= {*APPS, "config", "tests"}
    for folder, first in rows:
        assert (ROOT / folder / first).is_file(), f"{folder}/{first}"
