"""Redis as a cache that may be away: Django's RedisCache, answered from this process's memory
while Redis cannot be reached.

Nothing the app keeps in the cache is needed to answer: a cached service client is read from
the database again, a throttle counter counts this process's requests only (a caller may then
send each process its share of the rate), an impact replay slot holds one replay per person per
process. So a Redis that refuses, resets or goes silent costs a request that much and no more:
never a 500, and never more than REDIS_TIMEOUT_MS of waiting. After a failure the process asks
Redis nothing for REDIS_RETRY_SECONDS (a silent Redis would cost every request the timeout),
then tries again. Each answer from memory is counted (`coupons_cache_fallbacks_total`), the
loss and the recovery are logged once each, and /readyz names the cache as degraded.
"""

import logging
import time

from django.conf import settings
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from prometheus_client import Counter
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

# What an unreachable Redis raises through redis-py (a refused, reset or silent connection).
REDIS_UNREACHABLE = (RedisConnectionError, RedisTimeoutError)
FALLBACKS = Counter(
    "coupons_cache_fallbacks",
    "Cache operations answered from the process's memory because Redis could not be reached.",
    ["operation"])
OPERATIONS = ("add", "get", "set", "touch", "delete", "get_many", "has_key", "incr", "set_many",
              "delete_many", "clear")


# Until when each Redis (by its LOCATION) is passed over. Django makes a cache object per
# thread: the threads of a process share what they learnt, and their memory (LocMemCache keeps
# one store per name).
_down_until: dict[str, float] = {}


class ResilientRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self.location = str(server)
        self.fallback = LocMemCache(f"redis-fallback:{self.location}", {
            "TIMEOUT": params.get("TIMEOUT", 300), "KEY_PREFIX": params.get("KEY_PREFIX", "")})

    def unavailable(self) -> bool:
        """Whether Redis is being passed over after a recent failure."""
        return time.monotonic() < _down_until.get(self.location, 0.0)

    def lost(self, error: Exception) -> None:
        """Redis failed: pass it over for REDIS_RETRY_SECONDS. Logged at the first failure only."""
        was_up = self.location not in _down_until
        _down_until[self.location] = time.monotonic() + settings.REDIS_RETRY_SECONDS
        if was_up:
            logger.warning("cache: Redis unreachable (%s); serving from this process's memory, "
                           "retrying in %ss", error, settings.REDIS_RETRY_SECONDS)

    def reached(self) -> None:
        if _down_until.pop(self.location, None) is not None:
            logger.warning("cache: Redis reachable again")

    def either(self, operation: str, on_redis, in_memory):
        """`on_redis()`, or `in_memory()` (counted) while Redis cannot be reached."""
        if not self.unavailable():
            try:
                answer = on_redis()
            except REDIS_UNREACHABLE as error:
                self.lost(error)
            else:
                self.reached()
                return answer
        FALLBACKS.labels(operation=operation).inc()
        return in_memory()

    def probe(self) -> bool:
        """A PING to Redis now (readiness); False while it cannot be reached."""
        client = self._cache.get_client(None, write=True)
        return self.either("ping", lambda: client.ping() or True, lambda: False)


def _served_by_either(name: str):
    on_redis = getattr(RedisCache, name)

    def operation(self, *args, **kwargs):
        return self.either(name, lambda: on_redis(self, *args, **kwargs),
                           lambda: getattr(self.fallback, name)(*args, **kwargs))

    operation.__name__ = name
    return operation


for _name in OPERATIONS:
    setattr(ResilientRedisCache, _name, _served_by_either(_name))
