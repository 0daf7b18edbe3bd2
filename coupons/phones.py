"""Customers' phone numbers as the directory keeps them: never the number itself.

A number arrives in whatever spelling the user service or a support agent has (`+86 138 1234
5678`, `0086-138-1234-5678`, `13812345678`). It is normalised to E.164 (`+8613812345678`;
a mainland mobile without its country code gets +86), then kept as an HMAC-SHA256 under
CUSTOMER_PHONE_KEY, a server secret from the environment: equal numbers give equal hashes, so a
typed number finds its customer, and the table alone (a copy, a backup) gives no number back.
For display only a masked form is kept (`138****5678`).
"""

import hashlib
import hmac
import re

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# What people put between digits: spaces (full-width too), dashes, dots, brackets.
SEPARATORS = re.compile(r"[\s\u3000\-–—.()（）]")
MAINLAND_MOBILE = re.compile(r"1[3-9]\d{9}")
E164 = re.compile(r"\+[1-9]\d{6,14}")


def normalised(text: str) -> str | None:
    """The number in E.164, or None if `text` is not a phone number in a common spelling."""
    digits = SEPARATORS.sub("", text.strip())
    if digits.startswith("00"):
        digits = "+" + digits[2:]
    if MAINLAND_MOBILE.fullmatch(digits):
        return "+86" + digits
    if digits.startswith("+86") and digits[3:4] == "0":
        digits = "+86" + digits[4:]  # +86 (0)10 ...: the trunk zero is not dialled from abroad
    return digits if E164.fullmatch(digits) else None


def phone_hash(number: str) -> str:
    """HMAC-SHA256 of a normalised number under CUSTOMER_PHONE_KEY, hex."""
    key = settings.CUSTOMER_PHONE_KEY
    if not key:
        raise ImproperlyConfigured("CUSTOMER_PHONE_KEY is not set: customers' phone numbers "
                                   "cannot be stored or looked up (docs/deploy.md).")
    return hmac.new(key.encode(), number.encode(), hashlib.sha256).hexdigest()


def masked(number: str) -> str:
    """What a page shows of a normalised number: a mainland mobile as `138****5678`, others
    their first three and last four digits around asterisks."""
    national = number[3:] if number.startswith("+86") else number
    if len(national) <= 7:
        return national[:1] + "*" * (len(national) - 1)
    return f"{national[:3]}****{national[-4:]}"
