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


def add_page(project: Path, name: str, text: str) -> None:
    (project / "docs" / name).write_text(text)
    config_path = project / "mkdocs.yml"
    config = yaml.safe_load(config_path.read_text())
    config["nav"].append({"Broken": name})
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))


@pytest.mark.parametrize(("link", "warning"), [
    ("missing.md", "missing.md"),
    ("design.md#no-such-heading", "no-such-heading"),
])
def test_a_broken_link_fails_the_strict_build(copied_docs, tmp_path, link, warning):
    add_page(copied_docs, "broken.md", f"# Broken\n\nSee [the page]({link}).\n")

    result = build(copied_docs, tmp_path / "site")

    assert result.returncode != 0
    assert "WARNING" in result.stderr and warning in result.stderr, result.stderr


def test_a_page_left_out_of_the_navigation_fails_the_strict_build(copied_docs, tmp_path):
    (copied_docs / "docs" / "orphan.md").write_text("# Orphan\n")

    result = build(copied_docs, tmp_path / "site")

    assert result.returncode != 0
    assert "orphan.md" in result.stderr, result.stderr
