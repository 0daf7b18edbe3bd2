"""The docs site builds with `mkdocs build --strict`: a link to a page or anchor that does not
exist, or a page left out of the navigation, fails the suite, as it would fail CI's build."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def build(project: Path, site: Path) -> subprocess.CompletedProcess:
    # Material's banner about MkDocs' future is noise here, not a warning of ours.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project, env=env, capture_output=True, text=True,
    )


def test_the_docs_build_strict(tmp_path):
    result = build(ROOT, tmp_path / "site")

    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "design" / "index.html").is_file()


@pytest.fixture
def copied_docs(tmp_path) -> Path:
    """The docs and mkdocs.yml in a folder of their own, to break without touching the tree."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "docs", project / "docs")
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    return project


def add_to_navigation(project: Path, name: str) -> None:
    config_path = project / "mkdocs.yml"
    config = yaml.safe_load(config_path.read_text())
    config["nav"].append({"Broken": name})
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))


def test_a_broken_link_or_anchor_and_a_page_left_out_fail_the_strict_build(copied_docs, tmp_path):
    # One build for the three breakages: strict mode reports every warning, then aborts.
    docs = copied_docs / "docs"
    (docs / "broken.md").write_text(
        "# Broken\n\nSee [a page](missing.md) and [a heading](design.md#no-such-heading).\n")
    add_to_navigation(copied_docs, "broken.md")
    (docs / "orphan.md").write_text("# Orphan\n")

    result = build(copied_docs, tmp_path / "site")

    assert result.returncode != 0
    assert result.stderr.count("WARNING") == 3, result.stderr
    for name in ("'missing.md'", "'#no-such-heading'", "- orphan.md"):
        assert name in result.stderr, result.stderr
