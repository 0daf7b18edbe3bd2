"""The repository explains itself: nothing in it cites a document that is not in it (a design
spec's numbered sections, the source articles, issue numbers). A reader with the repository
alone cannot follow such a citation; write the idea out, or link the docs page that holds it."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CITATION = re.compile(
    r"SPEC\s*§"  # a section of the design spec
    r"|§\s?\d"  # any numbered section
    r"|\bseeds?/"  # the folder of the source articles
    r"|\bseed \d{3}\b"  # one source article by its number
    r"|\b[Ii]ssues? #?\d+"  # an issue by its number (the operation ISSUE is written in capitals)
)
DOCS = ["README.md", "docs", "mkdocs.yml"]
# Every folder and file of the tree beside the docs: a new top-level folder joins here.
CODE = ["coupons", "refunds", "operations", "timeline", "api", "common", "config", "tests",
        "templates", "scripts", "bin", ".ci", "locale", "schemas", "tools", "manage.py",
        "pyproject.toml"]


def files(paths: list[str]) -> list[Path]:
    """Tracked and new (not ignored) files under `paths`, as git sees the work tree."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *paths],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    return [ROOT / name for name in listed if (ROOT / name).is_file()]


def citations_in(text: str) -> list[tuple[int, str]]:
    return [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1)
            if CITATION.search(line)]


def citations(paths: list[str]) -> list[str]:
    found = []
    for path in files(paths):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # pictures and other binary files cite nothing
        found += [f"{path.relative_to(ROOT)}:{number}: {line}"
                  for number, line in citations_in(text)]
    return found


def test_nothing_in_the_repository_cites_a_document_outside_it():
    assert citations(DOCS + CODE) == []


# Each sample is split in two so that this file cites nothing itself.
@pytest.mark.parametrize("sample", [
    "the lease rule (SPEC " + "§" + "3)",
    "as " + "§" + "8 says",
    "from shared/seeds" + "/004.txt",
    "the presale article, seed" + " 004",
    "the attack of issue" + " 15",
    "see issues" + " #27 and 28",
    "Issue" + " 9's round trips",
])
def test_the_check_names_a_line_that_cites_an_outside_document(sample):
    assert citations_in(f"first line\n{sample}\nlast line") == [(2, sample)]


@pytest.mark.parametrize("words", [
    "POST coupons (issue) makes a coupon at version 1",
    "statements: ISSUE 10, LOCK 4",
    "manage.py seed_demo replays the incident",
    "a tissue 3 cm wide",
    "an RFC 9162 Merkle tree",
])
def test_the_check_leaves_the_domains_own_words_alone(words):
    assert citations_in(words) == []
