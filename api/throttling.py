"""Request rates per service client and per signed-in user (REST_FRAMEWORK throttle rates).

Each caller has one counter per fixed window of the rate's period (a minute for `N/min`,
starting on the minute): a request adds one and is refused once the window's count passes N,
until the next window starts (`Retry-After`: the seconds left in this one). So a caller sends at
most N requests in any window, and at most 2N across the edge between two.

DRF's own throttle keeps a list of every request time in the period and reads, trims and writes
it back whole on every request: at a service client's rate that list was thousands of floats a
request. A counter is one cache operation, and one round trip with Redis (SET NX + INCR in one
pipeline). Counters live in Django's cache: per process with the default LocMemCache, shared by
every process once CACHES points at Redis (REDIS_URL).
"""

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework.authentication import get_authorization_header
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from common.client_address import client_address
from coupons.models import ServiceClient
from coupons.write.tokens import hash_token


def count_of(value) -> int:
    """A counter as read from the cache; anything else (a value someone else wrote in Redis,
    one that is not JSON, which the serializer reads as None) counts nothing."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def add_one(key: str, timeout: int) -> int:
    """Add one to the counter at `key` (made, expiring after `timeout` seconds, if missing) and
    return its new value. A key holding something other than a count starts again at 1."""
    cache = caches["default"]
    if not isinstance(cache, RedisCache):
        return _add_one_in(cache, key, timeout)
    from common.resilient_cache import ResilientRedisCache  # redis is an optional extra

    if isinstance(cache, ResilientRedisCache):  # this process's own count while Redis is away
        return cache.either("incr", lambda: _add_one_in_redis(cache, key, timeout),
                            lambda: _add_one_in(cache.fallback, key, timeout))
    return _add_one_in_redis(cache, key, timeout)


def _add_one_in(cache, key, timeout) -> int:
    cache.add(key, 0, timeout)
    try:
        return cache.incr(key)
    except (ValueError, TypeError):  # expired since the add, or not a number
        cache.set(key, 1, timeout)
        return 1


def _add_one_in_redis(cache, key, timeout) -> int:
    from redis.exceptions import ResponseError

    key = cache.make_and_validate_key(key)
    client = cache._cache.get_client(key, write=True)
    pipeline = client.pipeline(transaction=False)
    pipeline.set(key, 0, ex=timeout, nx=True)
    pipeline.incr(key)
    try:
        return pipeline.execute()[1]
    except ResponseError:  # "value is not an integer": not a count of ours
        client.set(key, 1, ex=timeout)
        return 1


class PerCallerRateThrottle(SimpleRateThrottle):
    def get_rate(self):
        # Read at each request, not once at import as DRF does, so a changed setting applies.
        # A rate left out (a test's own rates) is not throttled.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view):
        ident = self.ident_of(request.user)
        if ident is None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def _window(self, key: str) -> str:
        """The counter of this window under `key`; notes when the window ends."""
        self.now = self.timer()
        number = int(self.now // self.duration)
        self.window_ends = (number + 1) * self.duration
        return f"{key}_{number}"

    def allow_request(self, request, view):
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        return add_one(self._window(key), self.duration) <= self.num_requests

    def wait(self):
        return self.window_ends - self.now


class ServiceClientRateThrottle(PerCallerRateThrottle):
    scope = "service_client"

    def ident_of(self, user):
        return user.pk if isinstance(user, ServiceClient) else None


class UserRateThrottle(PerCallerRateThrottle):
    scope = "user"

    def ident_of(self, user):
        if isinstance(user, ServiceClient) or user is None or not user.is_authenticated:
            return None
        return user.pk


class FailedAuthenticationThrottle(PerCallerRateThrottle):
    """Requests answered 401, counted per key sent (a wrong or inactive key), or per client
    address when none is sent.

    DRF's throttles run after authentication and permissions, so a request with a bad key or
    none is refused before any throttle sees it. Instead the exception handler records each
    401 here, and ServiceTokenAuthentication asks `wait_for` before it looks a key up: past the
    rate that key (or that address, without a key) gets 429 THROTTLED with Retry-After until
    its window ends. A signed-in console session is not refused (django-axes guards sign-in).

    Why per key and not per address: behind a shared egress address (NAT, a proxy) one revoked
    key retried in a loop used to throttle every service behind it, valid keys included. A
    key's counter moves only when that very key fails, so no caller's failures can refuse
    another's valid key; the counter is named by the key's hash, never the key.
    """

    scope = "anonymous"

    def get_cache_key(self, request, view=None):
        """This window's counter of the key the request sends, or of its address when it
        sends none; None without a rate."""
        if self.rate is None:
            return None
        sent = get_authorization_header(request).split()
        if len(sent) == 2 and sent[0].lower() == b"token":
            try:
                ident = "key-" + hash_token(sent[1].decode())
            except UnicodeError:  # not a key anyone was given: counted with its address
                ident = client_address(request) or "unknown"
        else:
            ident = client_address(request) or "unknown"
        return self._window(self.cache_format % {"scope": self.scope, "ident": ident})

    def wait_for(self, stored) -> float | None:
        """Seconds until this address may try again, or None when it is under the rate.
        `stored`: what the cache holds at the key get_cache_key just gave."""
        return self.wait() if count_of(stored) >= self.num_requests else None

    def record_failure(self, request) -> None:
        key = self.get_cache_key(request)
        if key is not None:
            add_one(key, self.duration)
