"""The customer replies' greeting and closing, as a policy admin writes them.

They are part of the default policy's version (ReturnPolicyVersion.replies): edited in its
draft, frozen when it is published, so what the replies said on a given day is the version in
force that day. A version without them (every one before this existed) uses the catalogue's
sentences, which are also what the editor first shows.
"""

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from coupons.errors import ValidationFailed
from refunds.rule_labels import LABEL_LANGUAGES

PARTS = ("greeting", "closing")
MAX_WORDS = 300


def catalogue_words(part: str, language: str) -> str:
    """The catalogue's greeting or closing in `language`: the words before an admin's."""
    with translation.override(language):
        if part == "greeting":
            return pgettext("reply greeting", "Hello!")
        return pgettext("reply closing", "If you have any other questions, we are glad to help.")


def reply_words(replies: dict, part: str, language: str) -> str:
    """A version's greeting or closing in `language`, the catalogue's where it has none."""
    return ((replies or {}).get(part) or {}).get(language) or catalogue_words(part, language)


def clean_replies(replies) -> dict:
    """{"greeting": {"en": ..., "zh-hans": ...}, "closing": {...}}, every one written; raises
    ValidationFailed with `details.replies[part][language]`."""
    problems = {}
    if not isinstance(replies, dict) or set(replies) != set(PARTS):
        raise ValidationFailed(_("The reply greeting and closing are not valid."),
                               replies=[_("give a greeting and a closing")])
    cleaned = {}
    for part in PARTS:
        words = replies[part] if isinstance(replies[part], dict) else {}
        cleaned[part] = {}
        for language in LABEL_LANGUAGES:
            text = words.get(language)
            if (not isinstance(text, str) or not text.strip() or len(text) > MAX_WORDS
                    or "\x00" in text):
                problems.setdefault(part, {})[language] = [
                    _("required, 1 to %(max)s characters") % {"max": MAX_WORDS}]
            else:
                cleaned[part][language] = text.strip()
    if problems:
        raise ValidationFailed(_("The reply greeting and closing are not valid."),
                               replies=problems)
    return cleaned
