import logging

from django.conf import settings
from django.core import signing
from django.core.cache import cache
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from api.throttling import FailedAuthenticationThrottle
from common.request_context import bind
from coupons.models import ServiceClient
from coupons.write.tokens import hash_token

logger = logging.getLogger(__name__)


def _cache_key(key_hash: str) -> str:
    return f"service-client:{key_hash}"


# The cached client is JSON signed under a key derived from SECRET_KEY, which Redis never sees:
# whoever can write to Redis cannot grant a client anything. The entry names the key
# hash it belongs to, so a genuine entry copied under another key's name is refused too.
CACHE_SALT = "api.authentication.service-client"
CACHED_FIELDS = ("id", "name", "key_prefix", "key_hash", "is_active", "capabilities",
                 "fact_types")


def _cache_entry(client: ServiceClient) -> str:
    return signing.dumps({name: getattr(client, name) for name in CACHED_FIELDS},
                         salt=CACHE_SALT)


def _cached_client(key_hash: str, entry) -> ServiceClient | None:
    """The client in the cache `entry` read for `key_hash`, or None: absent, forged or someone
    else's entry."""
    if not isinstance(entry, str):
        return None
    try:
        fields = signing.loads(entry, salt=CACHE_SALT)
    except signing.BadSignature:
        logger.warning("a cached service client failed its signature check; ignored")
        return None
    if not isinstance(fields, dict) or fields.get("key_hash") != key_hash:
        return None
    return ServiceClient(**fields)


class ServiceTokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>` for machine clients; keys are looked up by their hash.

    The client row is cached for a few seconds (it is read on every request); any save or
    delete of the client, a deactivation or a change of grants, drops the entry at once.
    First of the authenticators, it refuses an address that failed too often (429) before
    any key is looked up (FailedAuthenticationThrottle).
    """

    def authenticate(self, request):
        """The address's failures and the key's cached client are read in one cache round
        trip (get_many): a token request costs the cache one read before the throttles."""
        session_user = getattr(request._request, "user", None)  # the console's session
        failures = None
        if session_user is None or not session_user.is_authenticated:
            failures = FailedAuthenticationThrottle()
        failures_key = failures.get_cache_key(request) if failures is not None else None
        keys = [failures_key] if failures_key is not None else []
        self.key_hash = _key_hash_of(request)
        if self.key_hash is not None:
            keys.append(_cache_key(self.key_hash))
        self.read = cache.get_many(keys) if keys else {}
        if failures_key is not None:
            wait = failures.wait_for(self.read.get(failures_key))
            if wait is not None:
                raise exceptions.Throttled(wait)
        return super().authenticate(request)

    def authenticate_credentials(self, key):
        key_hash = hash_token(key)
        client = (_cached_client(key_hash, self.read.get(_cache_key(key_hash)))
                  if key_hash == self.key_hash else None)
        if client is None:
            client = ServiceClient.objects.filter(key_hash=key_hash, is_active=True).first()
            if client is not None:
                cache.set(_cache_key(key_hash), _cache_entry(client),
                          settings.COUPONS["SERVICE_CLIENT_CACHE_SECONDS"])
        if client is None or not client.is_active:
            raise exceptions.AuthenticationFailed("Invalid or inactive API key.")
        bind(client=client.actor)  # for the request's log lines
        return client, None


def _key_hash_of(request) -> str | None:
    """The hash of the key a well-formed `Authorization: Token <key>` sends, else None (DRF's
    TokenAuthentication then answers the malformed header as it always has)."""
    sent = authentication.get_authorization_header(request).split()
    if len(sent) != 2 or sent[0].lower() != b"token":
        return None
    try:
        return hash_token(sent[1].decode())
    except UnicodeError:
        return None


@receiver([post_save, post_delete], sender=ServiceClient)
def forget_cached_client(sender, instance, **kwargs):
    cache.delete(_cache_key(instance.key_hash))


class ServiceTokenScheme(OpenApiAuthenticationExtension):
    target_class = ServiceTokenAuthentication
    name = "ServiceToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": (
                "Send `Authorization: Token <key>`: the scheme word `Token`, a space, the key "
                "(also in `x-token-prefix`, as an apiKey scheme cannot carry it). Make a key "
                "with `python manage.py create_service_client NAME`."
            ),
            "x-token-prefix": "Token",
        }
