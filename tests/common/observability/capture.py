"""What the configured console handler (the one with the redaction filter) writes."""

import io
import json
import logging
from contextlib import contextmanager


@contextmanager
def console_lines():
    """Yields a function answering the lines written so far, each parsed as JSON."""
    handler = next(h for h in logging.getLogger().handlers
                   if any(type(f).__name__ == "RedactSecrets" for f in h.filters))
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    try:
        yield lambda: [json.loads(line) for line in buffer.getvalue().splitlines()]
    finally:
        handler.setStream(previous)
