"""A logging filter that keeps API keys, lease tokens and their hashes out of every log line.

Django logs a failed request with its traceback; a database driver may echo parameters in its
error message, and a developer may log a request dict. The filter rewrites the formatted message
and traceback of each record before a handler writes it.
"""

import logging
import re

REDACTED = "[REDACTED]"

PATTERNS = [
    # Authorization: Token <key> / Bearer <token>, wherever the header value appears.
    (re.compile(r"\b(Token|Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]{8,}"), rf"\1\2{REDACTED}"),
    # "lock_token": "..." / lock_token=... and the other named secrets, in JSON, dicts or forms.
    (
        re.compile(
            r"\b(lock_token(?:_hash)?|token_hash|key_hash|api_key|password|secret|authorization)"
            r"""(["']?\s*[:=]\s*["']?)([^"'\s,;&}]+)""",
            re.IGNORECASE,
        ),
        rf"\1\2{REDACTED}",
    ),
    # A bare key-looking value: 32+ URL-safe base64 characters mixing digits and both cases
    # (API keys and lease tokens are 43), or 40+ hex digits (SHA-256 hashes of them).
    (
        re.compile(
            r"(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[a-z])"
            r"(?=[A-Za-z0-9_-]*[A-Z])[A-Za-z0-9_-]{32,}(?![A-Za-z0-9_-])"
        ),
        REDACTED,
    ),
    (re.compile(r"(?<![A-Za-z0-9])[0-9a-fA-F]{40,}(?![A-Za-z0-9])"), REDACTED),
]


def redact(text: str) -> str:
    for pattern, replacement in PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactSecrets(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
