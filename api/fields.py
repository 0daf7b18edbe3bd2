"""Field helpers every API serializer shares: ids, money, and the schema fragments they state."""

import re
from decimal import Decimal

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from .identifiers import ExternalIdField

MAX_DB_ID = 2**63 - 1
MAX_VERSION = 2**31 - 1
MONEY = {"max_digits": 12, "decimal_places": 2}


def external_id(**kwargs):
    return ExternalIdField(max_length=64, **kwargs)


# Money is a decimal string, at most 10 digits before the point and 2 after, no sign, no
# exponent, no leading zeros: the one grammar the server accepts and the schema states
# (api.schema reads `pattern`). JSON numbers are refused: a float is not money.
MONEY_PATTERNS = {
    "0": r"^(?:0|[1-9][0-9]{0,9})(?:\.[0-9]{1,2})?$",
    "0.01": r"^(?:[1-9][0-9]{0,9}(?:\.[0-9]{1,2})?|0\.(?:0[1-9]|[1-9][0-9]?))$",
}
class DecimalText(serializers.DecimalField):
    """A DecimalField that takes only a string matching `pattern` (stated in the schema)."""

    def __init__(self, *, pattern: str, **kwargs):
        self.pattern = pattern
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str) or not re.fullmatch(self.pattern, data):
            raise serializers.ValidationError(
                _('Must be a decimal string such as "12.00" (no sign or exponent).'),
                code="invalid",
            )
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """JSON `true` or `false` only, as the schema's boolean says: DRF's own also takes 0, 1,
    "yes" and "on", so a client's mistake became a decision."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class TextOnly:
    """Text only, as the schema's string says: DRF's text fields turn the number 42 into
    "42" (and a slug or pattern may then match it). Mixed in before the DRF field class."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError(
                serializers.CharField.default_error_messages["invalid"], code="invalid")
        return super().to_internal_value(data)


class StrictCharField(TextOnly, serializers.CharField):
    pass


class StrictSlugField(TextOnly, serializers.SlugField):
    pass


class QueryIntegerField(serializers.IntegerField):
    """A whole number in the query string: present but empty (`?since=`) is refused, not read
    as left out (DRF skips an empty optional form value)."""

    def get_value(self, dictionary):
        if dictionary.get(self.field_name) == "":
            return ""
        return super().get_value(dictionary)


class NamedSetField(serializers.CharField):
    """An answer's text from a closed set another app owns, declared as that app's enum
    component (`component`): the core's HTTP layer names after-sale's sets without importing
    them (api.schema writes the reference)."""

    def __init__(self, *, component: str, **kwargs):
        self.component = component
        super().__init__(**kwargs)


def money_field(*, minimum="0.01", **kwargs):
    return DecimalText(**MONEY, min_value=Decimal(minimum), pattern=MONEY_PATTERNS[minimum],
                       **kwargs)


def given(name: str, json_type: str) -> dict:
    """JSON Schema: `name` is present and not null."""
    return {"required": [name], "properties": {name: {"type": json_type}}}


def note_unless(action: str, *, noted: list[str]) -> dict:
    """JSON Schema: `action` is `action`, or one of `noted` with a note that has something in
    it. The branches exclude each other (by the action), so they are a `oneOf` inside an
    `allOf`, which generated types read as "the fields and one of these" (an `anyOf` beside the
    properties became a union that took `{}`; a bare `oneOf`, for openapi-generator, a union of
    the branches without the fields)."""
    return {"allOf": [{"oneOf": [
        {"required": ["action"],
         "properties": {"action": {"type": "string", "pattern": f"^{action}$"}}},
        {"required": ["action", "note"],
         "properties": {"action": {"type": "string", "pattern": f"^(?:{'|'.join(noted)})$"},
                        "note": {"type": "string", "pattern": r"\S"}}},
    ]}]}


SEEN_ENTRY_PATTERN = r"^[0-9a-f]{64}$"


class SeenEntryField(TextOnly, serializers.RegexField):
    schema_extra = {"pattern": SEEN_ENTRY_PATTERN, "minLength": 64}  # api.schema states it


def seen_entry_field():
    """What an approval or rejection names: the version of the record its decider saw."""
    return SeenEntryField(
        SEEN_ENTRY_PATTERN, max_length=64,
        help_text="The `journal_tip` of the record as you read it (GET it first): the hash of "
                  "its newest journal entry. If the record moved since, nothing is decided "
                  "(409 EVIDENCE_CHANGED).",
        error_messages={
            "required": gettext_lazy("Name the version you decide on: send the record's "
                                     "journal_tip as seen_entry."),
            "invalid": gettext_lazy("Must be a journal_tip: 64 lowercase hex characters."),
        },
    )


def journal_tip_field():
    return serializers.CharField(
        required=False,
        help_text="The hash of the record's newest journal entry: the version this read "
                  "shows (answered by the reads, GET, not by commands). Send it as "
                  "`seen_entry` to approve or reject.",
    )
