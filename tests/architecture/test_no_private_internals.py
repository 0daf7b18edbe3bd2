"""No module leans on Django's or DRF's undocumented internals: the ORM's compiler and query
classes, the related-object populators, a model's field walk outside the one SQL package, a
serializer's cached fields. Hand-written SQL lives in coupons/sql/ as literal statements
(docs/sql.md); everything else uses the public ORM, so a Django upgrade breaks no hidden
second ORM."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SQL_PACKAGE = "coupons/sql/"
SKIPPED = {".venv", "node_modules", ".git", "site", "tools", "mutants", "build"}

# name → where it may still appear (path prefixes).
BANNED = {
    "get_compiler": (),
    "as_sql": ("coupons/migrations/", "refunds/migrations/", "operations/migrations/",
               "timeline/migrations/"),
    "klass_info": (),
    "UpdateQuery": (),
    "get_related_populators": (),
    "results_iter": (),
    "_meta.concrete_fields": (SQL_PACKAGE,),
    '__dict__["fields"]': (),
}

THIS_FILE = "tests/architecture/test_no_private_internals.py"


def python_files(root: Path):
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if not SKIPPED & set(relative.parts):
            yield relative.as_posix(), path


def uses(name: str, source: str) -> bool:
    """Whether `source` names `name` (as a whole word: `as_sql` but not `has_sql`)."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)" if name[0].isalpha()
                     else re.escape(name), source) is not None


def offences(root: Path) -> list[str]:
    found = []
    for relative, path in python_files(root):
        if relative == THIS_FILE:
            continue
        source = path.read_text(encoding="utf-8")
        for name, allowed in BANNED.items():
            if uses(name, source) and not relative.startswith(allowed or ("\0",)):
                found.append(f"{relative}: {name}")
    return found


def test_no_module_uses_django_s_private_internals():
    assert offences(ROOT) == []


def test_a_banned_name_is_found_wherever_it_hides(tmp_path):
    (tmp_path / "coupons").mkdir()
    (tmp_path / "coupons" / "sneaky.py").write_text(
        "sql, params = qs.query.get_compiler(using='default').as_sql()\n"
        "columns = [f.column for f in Model._meta.concrete_fields]\n"
        "serializer.__dict__[\"fields\"] = fields\n")
    (tmp_path / "coupons" / "sql").mkdir()
    (tmp_path / "coupons" / "sql" / "rows.py").write_text(
        "columns = [f.column for f in Model._meta.concrete_fields]\n")
    (tmp_path / "coupons" / "migrations").mkdir()
    (tmp_path / "coupons" / "migrations" / "0001_x.py").write_text("sql = node.as_sql(c, cn)\n")
    (tmp_path / "coupons" / "clean.py").write_text("def has_sql(): return 'as_sqlite'\n")

    assert offences(tmp_path) == [
        "coupons/sneaky.py: get_compiler", "coupons/sneaky.py: as_sql",
        "coupons/sneaky.py: _meta.concrete_fields", 'coupons/sneaky.py: __dict__["fields"]',
    ]
