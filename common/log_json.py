"""One JSON object a line: time, level, logger, message, and the request id, client and coupon
of the request or message being handled (common/request_context.py).

The redaction filter has already cleaned the message and traceback; the context fields come
from callers (an X-Request-ID header), so they are redacted here too.
"""

import json
import logging
from datetime import UTC, datetime

from common.log_redaction import redact
from common.request_context import log_context

CONTEXT_FIELDS = ("request_id", "client", "coupon_id")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        context = log_context.get()
        for field in CONTEXT_FIELDS:
            # A field given to one call (`extra={"coupon_id": ...}`) wins over the request's.
            value = getattr(record, field, None)
            if value is None:
                value = context.get(field)
            if value is not None:
                entry[field] = redact(value) if isinstance(value, str) else value
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(self.formatException(record.exc_info))
        if record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, default=str, ensure_ascii=False)
