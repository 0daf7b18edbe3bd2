"""JSON in and out of the API with orjson, answering byte for byte what DRF's own would.

DRF's renderer and parser (json.dumps with its encoder, json.load) were a visible share of a
command's CPU over HTTP (docs/performance.md). orjson writes the same compact UTF-8 for what
the answers hold (dicts, lists, strings, numbers, UUIDs); dates and times, Decimals and lazy
strings go to DRF's own encoder (OPT_PASSTHROUGH_DATETIME), so they read exactly as before.
Anything orjson would write otherwise, or refuses, goes to DRF's renderer or parser: an
indented answer, a key that is not a string, a body orjson cannot read (whose 400 keeps DRF's
message).
"""

import codecs
import io

import orjson
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

# What DRF's renderer escapes after json.dumps, so the answer is a strict JavaScript subset.
LINE_SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))
_default = JSONEncoder().default


class FastJSONRenderer(JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None or self.get_indent(accepted_media_type, renderer_context or {}):
            return super().render(data, accepted_media_type, renderer_context)
        try:
            rendered = orjson.dumps(data, default=_default,
                                    option=orjson.OPT_PASSTHROUGH_DATETIME)
        except TypeError:  # orjson.JSONEncodeError: a non-string key, an int past 64 bits
            return super().render(data, accepted_media_type, renderer_context)
        for raw, escaped in LINE_SEPARATORS:
            if raw in rendered:
                rendered = rendered.replace(raw, escaped)
        return rendered


class FastJSONParser(JSONParser):
    renderer_class = FastJSONRenderer

    def parse(self, stream, media_type=None, parser_context=None):
        body = stream.read()
        if codecs.lookup(get_encoding(parser_context or {})).name == "utf-8":
            try:
                return orjson.loads(body)
            except orjson.JSONDecodeError:
                pass
        # Another charset, or not JSON as orjson reads it: DRF's parser decides, with its message.
        return super().parse(io.BytesIO(body), media_type, parser_context)
