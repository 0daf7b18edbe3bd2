"""The rejection log's messages that are no catalogue entry as they stand: codes with values.

Most refusals say their error's own sentence, a catalogue entry the reader's language finds as
it is stored. A sentence built from values (a transition's states, a console path) is stored
in English with its code and values beside it (coupons/sentences.py), and read back in the
reader's language; a row written before the codes reads as the catalogue finds it.
"""

from django.utils.functional import lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons import sentences

MESSAGES = {
    "not_allowed_from": _("%(op)s is not allowed from %(state)s."),
    "cannot_go": _("%(op)s cannot go %(from_state)s→%(to_state)s."),
    "console_denied": _("%(method)s %(path)s needs %(capability)s"),
    "console_undeclared": _("%(method)s %(path)s needs a declared capability"),
    "decision_no_longer_fits": _(
        "The coupon moved since this refund decision was made: it is %(state)s now (version "
        "%(version)s), so %(action)s can no longer be done. Nothing was changed: read the "
        "decision again and choose what the coupon's state allows now, or reject it."),
}


def refusal_message(code: str, **params):
    """An error's message, worded in the language of whoever reads the answer, that tells the
    rejection log which sentence it is (`code`, `params`)."""
    message = lazy(sentences.words, str)(MESSAGES, code, params)
    message.code, message.params = code, params
    return message


def stored_message(message) -> dict:
    """The rejection log's three message columns for an error's message."""
    text = sentences.Coded(MESSAGES, message.code, **message.params) \
        if sentences.code_of(message) in MESSAGES else sentences.english_of(message)
    return {"message": str(text)[:500], "message_code": sentences.code_of(text),
            "message_params": sentences.params_of(text)}


def refusal_words(rejection) -> str:
    """The message in the reader's language: by its code, else as a catalogue entry."""
    if rejection.message_code:
        return sentences.read(MESSAGES, rejection.message_code, rejection.message_params,
                              rejection.message)
    return gettext(rejection.message) if rejection.message else ""
