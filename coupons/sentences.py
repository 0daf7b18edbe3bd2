"""Text the services write for people, kept as English and as a sentence's code with values.

Evidence keeps the English text written at the time (the record, never rewritten). Beside it a
row stores which catalogue sentence the text is (`*_code`) and its values (`*_params`), so a
reader gets it in their own language (docs/i18n.md). A row written before the codes, or whose
code the catalogue no longer knows, reads as it was stored. coupons/case_summaries.py is the
first of these; the ledger's reasons, the rejection log's messages, the return policy's rule
labels and the reconciliation's findings take the same path through this module.
"""

from django.utils import translation

# A value that is itself words (a return policy's rule label, a case's summary), by its
# parameter's name: worded by the package that owns it (after-sale installs its reader in its
# AppConfig.ready(); the core imports none).
VALUE_WORDS: dict = {}


class Coded(str):
    """English text that knows its sentence's code and values: a service passes it where a
    `str` is expected and the writer stores all three (`code`, `params` are None for plain
    text)."""

    code: str = ""
    params: dict | None = None

    def __new__(cls, sentences: dict, code: str, **params):
        text = super().__new__(cls, english(sentences, code, params))
        text.code, text.params = code, params
        return text


def words(sentences: dict, code: str, params: dict) -> str:
    """The sentence `code` names, in the active language."""
    worded = {name: VALUE_WORDS[name](value) if name in VALUE_WORDS else value
              for name, value in (params or {}).items()}
    return str(sentences[code]) % worded


def english(sentences: dict, code: str, params: dict) -> str:
    with translation.override("en"):
        return words(sentences, code, params)


def read(sentences: dict, code: str, params, stored: str) -> str:
    """The stored text in the reader's language when its code is known, else as stored."""
    if code in sentences:
        try:
            return words(sentences, code, params or {})
        except (KeyError, TypeError, ValueError):
            return stored
    return stored


def english_of(text) -> str:
    """Any text (a lazy message too) as English."""
    with translation.override("en"):
        return str(text)


def code_of(text) -> str:
    return getattr(text, "code", "") or ""


def params_of(text) -> dict | None:
    return getattr(text, "params", None) if code_of(text) else None
