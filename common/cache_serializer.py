"""JSON instead of pickle for values in Redis.

Django's RedisCache pickles every value but integers, so whoever can write to Redis could run
code in the app when a value is read. Here values are JSON: data, never code. Integers stay
plain so `incr` keeps working. A value that is not JSON (a pickle someone wrote) reads as a
miss: the caller falls back to the database.
"""

import json


class JsonSerializer:
    def dumps(self, value):
        if type(value) is int:  # not bool: as Django's own serializer, for incr / decr
            return value
        return json.dumps(value, separators=(",", ":")).encode()

    def loads(self, data):
        try:
            return int(data)
        except ValueError:
            pass
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError):
            return None
