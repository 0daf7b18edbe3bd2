"""Request rates per service client and per signed-in user (REST_FRAMEWORK throttle rates).

Counters live in Django's cache: per process with the default LocMemCache, shared by every
process once CACHES points at Redis (REDIS_URL).
"""

from django.core.cache import cache
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from common.client_address import client_address
from coupons.models import ServiceClient


class Histories:
    """The throttles' view of the cache: a value that is not a list of request times (a key
    someone else wrote in Redis, one that is not JSON, which the serializer reads as None) is a
    miss, so that caller's history starts again instead of every request answering 500."""

    def get(self, key, default=None):
        return self.read(cache.get(key), default)

    @staticmethod
    def read(value, default=None):
        """`value` as read from the cache, if it is a history."""
        if isinstance(value, list) and all(
            isinstance(t, int | float) and not isinstance(t, bool) for t in value
        ):
            return value
        return [] if default is None else default

    def set(self, key, value, timeout):
        cache.set(key, value, timeout)


class PerCallerRateThrottle(SimpleRateThrottle):
    cache = Histories()

    def get_rate(self):
        # Read at each request, not once at import as DRF does, so a changed setting applies.
        # A rate left out (a test's own rates) is not throttled.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view):
        ident = self.ident_of(request.user)
        if ident is None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": ident}


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
    """Requests answered 401 (no credentials, a wrong or inactive key), counted per client
    address.

    DRF's throttles run after authentication and permissions, so a request with a bad key or
    none is refused before any throttle sees it. Instead the exception handler records each
    401 here, and ServiceTokenAuthentication asks `wait_for` before it looks a key up: past the
    rate an address gets 429 THROTTLED with Retry-After, whatever key it sends, until its
    failures age out. A signed-in console session is not refused (django-axes guards sign-in).
    """

    scope = "anonymous"

    def get_cache_key(self, request, view=None):
        address = client_address(request) or "unknown"
        return self.cache_format % {"scope": self.scope, "ident": address}

    def _load(self, request, read=None) -> None:
        self.key = self.get_cache_key(request)
        self.history = (self.cache.get(self.key) if read is None
                        else Histories.read(read.get(self.key))) or []
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - self.duration:
            self.history.pop()

    def wait_for(self, request, read=None) -> float | None:
        """Seconds until this address may try again, or None when it is under the rate.
        `read`: what a cache.get_many of the key (get_cache_key) already found."""
        if self.rate is None:
            return None
        self._load(request, read)
        return self.wait() if len(self.history) >= self.num_requests else None

    def record_failure(self, request) -> None:
        if self.rate is None:
            return
        self._load(request)
        self.history.insert(0, self.now)
        self.cache.set(self.key, self.history, self.duration)
