"""The three halves of the catalogue check (tests/timeline/i18n/test_catalogue.py).

- `catalogue_problems`: entries `makemessages` finds in the code that the committed zh_Hans
  catalogue lacks, leaves untranslated or marks fuzzy.
- `template_problems`: user-facing text of a console template outside the translate tags.
- `module_problems`: a string literal handed unmarked to a sink a user reads (ValidationError,
  messages.*, an error class's message, a form field's label, help text or error messages).

Each answers a list of "where: what" lines; empty means clean.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CATALOGUE = Path("locale/zh_Hans/LC_MESSAGES/django.po")
# The command the developers run (docs/console.md), so the check sees what they see.
MAKEMESSAGES = ["manage.py", "makemessages", "-l", "zh_Hans", "--no-obsolete",
                "-i", ".venv/*", "-i", "tools/*", "-v", "0"]
NOT_COPIED = shutil.ignore_patterns(
    ".venv", ".git", "tools", "node_modules", "test-artifacts", "__pycache__", "*.mo",
    "*.png", ".pgdata", ".*cache", "*.egg-info", "staticfiles", "mutants")

LETTER = re.compile(r"[^\W\d_]")


# --- (a) the catalogue --------------------------------------------------------------------

def parse_po(text: str) -> list[dict]:
    """Entries of a .po file: msgid (with its context and plural), msgstr list, flags, line."""
    entries, entry, field = [], None, None

    def finish():
        if entry is not None and "msgid" in entry:
            entries.append(entry)

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#~"):
            continue  # an obsolete entry is not offered to anyone
        if not line:
            finish()
            entry, field = None, None
            continue
        if entry is None:
            entry = {"flags": set(), "msgstr": {}, "msgctxt": None, "line": number}
        if line.startswith("#,"):
            entry["flags"] |= {flag.strip() for flag in line[2:].split(",")}
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            value = ast.literal_eval(line)
            if isinstance(field, tuple):
                entry["msgstr"][field[1]] += value
            else:
                entry[field] += value
        else:
            keyword, _, value = line.partition(" ")
            value = ast.literal_eval(value)
            plural = re.fullmatch(r"msgstr\[(\d+)\]", keyword)
            if plural or keyword == "msgstr":
                field = ("msgstr", int(plural.group(1)) if plural else 0)
                entry["msgstr"][field[1]] = value
            else:
                field = keyword
                entry[field] = value
    finish()
    return entries


def _key(entry: dict) -> tuple:
    return entry["msgctxt"], entry["msgid"]


def catalogue_problems(committed: str, generated: str) -> list[str]:
    """`committed`: the .po in the repository; `generated`: makemessages' answer for the code."""
    have = {_key(entry): entry for entry in parse_po(committed) if entry["msgid"]}
    problems = []
    for entry in parse_po(generated):
        if not entry["msgid"]:
            continue  # the header
        name = repr(entry["msgid"][:60]) + (f" (context {entry['msgctxt']!r})"
                                             if entry["msgctxt"] else "")
        mine = have.get(_key(entry))
        if mine is None:
            problems.append(f"missing from the catalogue: {name}")
        elif "fuzzy" in mine["flags"]:
            problems.append(f"fuzzy (line {mine['line']}): {name}")
        elif not mine["msgstr"] or not all(mine["msgstr"].values()):
            problems.append(f"untranslated (line {mine['line']}): {name}")
    return problems


def needs_gettext() -> None:
    """makemessages runs gettext's xgettext and msgmerge: skip without them, except in CI."""
    missing = [tool for tool in ("xgettext", "msgmerge") if shutil.which(tool) is None]
    if missing:
        reason = f"{', '.join(missing)} missing: apt-get install gettext (.ci/run does)"
        if os.environ.get("GETTEXT_REQUIRED") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


def generated_catalogue(root: Path, scratch: Path) -> str:
    """Runs makemessages in a copy of `root` (under `scratch`) and answers the .po it wrote."""
    needs_gettext()
    copy = scratch / "tree"
    shutil.copytree(root, copy, ignore=NOT_COPIED)
    subprocess.run([sys.executable, *MAKEMESSAGES], cwd=copy, check=True,
                   capture_output=True, text=True)
    return (copy / CATALOGUE).read_text(encoding="utf-8")


# --- (b) templates ------------------------------------------------------------------------

# Attributes a person reads or hears (a screen reader speaks aria-label and alt).
READ_ATTRIBUTES = {"aria-label", "title", "placeholder", "alt"}
BUTTON_TYPES = {"submit", "button", "reset"}

_MARKED_BLOCK = re.compile(r"{%\s*blocktrans(late)?\b.*?{%\s*endblocktrans(late)?\s*%}", re.S)
_COMMENT_BLOCK = re.compile(r"{%\s*comment\b.*?{%\s*endcomment\s*%}", re.S)
_NOT_TEXT = re.compile(
    r"{#.*?#}|{{.*?}}|{%.*?%}|<!--.*?-->|<script\b.*?</script>|<style\b.*?</style>",
    re.S | re.I)


def _blank(match: re.Match) -> str:
    # Keep the line breaks, so a problem's line number is the template's own.
    return "\n" * match.group().count("\n")


class _TextFinder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str]] = []

    def handle_data(self, data):
        if LETTER.search(data):
            leading = data[:len(data) - len(data.lstrip())]
            self.found.append((self.getpos()[0] + leading.count("\n"), data.strip()))

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        for name, value in attrs:
            read = name in READ_ATTRIBUTES or (
                name == "value" and tag == "input" and attributes.get("type") in BUTTON_TYPES)
            if read and value and LETTER.search(value):
                self.found.append((self.getpos()[0], f"{name}={value.strip()!r}"))

    handle_startendtag = handle_starttag


# Left English on purpose, as codes: a version written v{{ number }} ("v3"), and an operation
# or state code that is the whole text of an element (<title>ISSUE</title>).
_CODES = re.compile(r"\bv(?={{)|(?<=>)[A-Z][A-Z_]+(?=<)")


def template_problems(source: str, name: str) -> list[str]:
    """Text with letters outside {% translate %} / {% blocktranslate %} in one template."""
    for pattern in (_COMMENT_BLOCK, _MARKED_BLOCK, _CODES, _NOT_TEXT):
        source = pattern.sub(_blank, source)
    finder = _TextFinder()
    finder.feed(source)
    finder.close()
    return [f"{name}:{line}: {text!r}" for line, text in finder.found]


# --- (c) Python modules -------------------------------------------------------------------

MESSAGE_LEVELS = {"debug", "info", "success", "warning", "error"}
MESSAGE_ATTRIBUTES = {"message", "default_message"}
FIELD_TEXTS = {"label", "help_text", "error_messages"}


def _literal(node: ast.AST | None) -> bool:
    """A piece of text written in the code (not a gettext call, not a variable)."""
    match node:
        case ast.Constant(value=str() as text):
            return bool(LETTER.search(text))
        case ast.JoinedStr():
            return True
        case ast.BinOp(left=left, op=ast.Mod() | ast.Add()):
            return _literal(left) or _literal(node.right)
        case ast.Call(func=ast.Attribute(value=value, attr="format")):
            return _literal(value)
        case ast.Dict(values=values) | ast.List(elts=values) | ast.Tuple(elts=values):
            return any(_literal(value) for value in values)
    return False


def _name(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _argument(call: ast.Call, position: int, keyword: str) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    return call.args[position] if len(call.args) > position else None


def _sinks(tree: ast.AST):
    """(node, what) for each value that reaches a person."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                targets = (statement.targets if isinstance(statement, ast.Assign)
                           else [statement.target] if isinstance(statement, ast.AnnAssign)
                           else [])
                for target in targets:
                    if isinstance(target, ast.Name) and target.id in MESSAGE_ATTRIBUTES:
                        yield statement.value, f"{node.name}.{target.id}"
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        if name == "ValidationError":
            yield _argument(node, 0, "message"), "ValidationError"
        elif (isinstance(node.func, ast.Attribute) and _name(node.func.value) == "messages"
              and name in MESSAGE_LEVELS | {"add_message"}):
            position = 2 if name == "add_message" else 1
            yield _argument(node, position, "message"), f"messages.{name}"
        elif name.endswith("Field"):
            for kw in node.keywords:
                if kw.arg in FIELD_TEXTS:
                    yield kw.value, f"{name}({kw.arg}=...)"


def module_problems(source: str, name: str) -> list[str]:
    found = sorted((value.lineno, value.col_offset, sink)
                   for value, sink in _sinks(ast.parse(source)) if _literal(value))
    return [f"{name}:{line}: unmarked text for {sink}" for line, _, sink in found]


# The modules whose strings reach a person (the list); the rest of the code is checked
# through the catalogue only.
CHECKED_MODULES = ("timeline/*.py", "timeline/views/*.py", "coupons/diagnosis.py",
                   "coupons/errors.py")
CHECKED_TEMPLATES = ("templates/timeline/**/*.html", "templates/registration/**/*.html")


def tree_files(patterns) -> list[Path]:
    return sorted({path for pattern in patterns for path in ROOT.glob(pattern)})
