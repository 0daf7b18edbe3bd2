"""The zh_Hans catalogue compiled for tests that read Chinese (the .mo is not committed)."""

from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.utils.translation import trans_real


def compile_zh_hans() -> None:
    """Compile the .po if its .mo is missing or older, then drop catalogues a test may have
    loaded before it existed."""
    po = Path(settings.BASE_DIR, "locale/zh_Hans/LC_MESSAGES/django.po")
    mo = po.with_suffix(".mo")
    if not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime:
        call_command("compilemessages", locale=["zh_Hans"], ignore_patterns=[".venv/*"],
                     verbosity=0)
        trans_real._translations = {}
        trans_real._default = None
