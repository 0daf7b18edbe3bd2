"""Fixtures for tests that read Chinese, as tests/timeline/test_pages_in_chinese.py does it: the
zh_Hans catalogue compiled by msgfmt into a directory of its own (the .mo is not committed), so
a test reads what django.po holds now."""

import subprocess
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import translation

CATALOGUE = Path(__file__).resolve().parents[1] / "locale/zh_Hans/LC_MESSAGES/django.po"


@pytest.fixture(scope="module")
def compiled_catalogue(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("locale")
    (root / "zh_Hans/LC_MESSAGES").mkdir(parents=True)
    subprocess.run(["msgfmt", "--check-format", "-o", str(root / "zh_Hans/LC_MESSAGES/django.mo"),
                    str(CATALOGUE)], check=True)
    return root


@pytest.fixture
def zh(compiled_catalogue):
    """Chinese: the catalogue above for the active language (requests also send
    Accept-Language for the locale middleware)."""
    with override_settings(LOCALE_PATHS=[str(compiled_catalogue)]), translation.override("zh-hans"):
        yield
