"""Ids that other services make (orders, users, payments, refunds, messages), taken as sent.

DRF's CharField and Django's form fields strip surrounding whitespace by default, so
`" in-1 "` or `"in-1\\u00a0"` became the id `in-1`: someone else's order. An id is compared
byte for byte, so one with surrounding whitespace or a control character anywhere is refused
with a 400 instead, in the body, the query string and the path alike, and the schema states
the same rule as `pattern` (ECMA and Python regexes read it alike: explicit classes, no `\\s`).
"""

import re

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

# C0 and C1 control characters (NUL, tab, newline, DEL ...): never part of an id.
CONTROL = "\\u0000-\\u001f\\u007f-\\u009f"
# What Python's str.strip() or ECMAScript's \s calls whitespace, beyond the controls.
SPACE = " \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
EDGE = f"[^{CONTROL}{SPACE}]"
# One character that is neither, or such a first and last character around any non-controls.
ID_PATTERN = f"^(?:{EDGE}|{EDGE}[^{CONTROL}]*{EDGE})$"
ID_MESSAGE = _("An id must not start or end with whitespace or hold control characters.")

ID_REGEX = re.compile(ID_PATTERN)


def validate_id(value: str) -> None:
    # fullmatch: Python's `$` also matches before a final newline, ECMAScript's does not.
    if not ID_REGEX.fullmatch(value):
        raise ValidationError(ID_MESSAGE, code="invalid_id")


def id_schema(max_length: int) -> dict:
    return {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": ID_PATTERN}


class ExternalIdField(serializers.CharField):
    """A body id: never trimmed, never blank; `allow_blank` lets an optional one be "" (DRF
    answers "" before the validators run)."""

    def __init__(self, *, max_length: int = 64, **kwargs):
        super().__init__(max_length=max_length, trim_whitespace=False, **kwargs)
        self.validators.append(validate_id)

    def to_internal_value(self, data):
        # Text only: DRF's CharField makes the number 0 the id "0", which the schema refuses.
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class ExternalIdFormField(forms.CharField):
    """A query-string id: as the body's, and present-but-empty (`?order_id=`) is refused
    rather than read as "no filter"."""

    def __init__(self, *, max_length: int = 64, **kwargs):
        super().__init__(max_length=max_length, strip=False, **kwargs)
        self.validators.append(validate_id)

    def clean(self, value):
        if value == "":
            raise forms.ValidationError(_("Give a value or leave the parameter out."),
                                        code="blank")
        return super().clean(value)


class DatabaseIdFormField(forms.IntegerField):
    """A query-string database id: digits only (no `" 12"`, no `"+12"`), and never empty."""

    def clean(self, value):
        if value == "":
            raise forms.ValidationError(_("Give a value or leave the parameter out."),
                                        code="blank")
        if value is not None and not re.fullmatch("[0-9]{1,19}", value):
            raise forms.ValidationError(_("Enter a whole number."), code="invalid")
        return super().clean(value)
