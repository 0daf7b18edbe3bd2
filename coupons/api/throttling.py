"""Request rates per service client and per signed-in user (REST_FRAMEWORK throttle rates).

Counters live in Django's cache: per process with the default LocMemCache, shared by every
process once CACHES points at Redis (REDIS_URL).
"""

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from coupons.models import ServiceClient


class PerCallerRateThrottle(SimpleRateThrottle):
    def get_rate(self):
        # Read at each request, not once at import as DRF does, so a changed setting applies.
        return api_settings.DEFAULT_THROTTLE_RATES[self.scope]

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
