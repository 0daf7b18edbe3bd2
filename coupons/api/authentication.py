from django.conf import settings
from django.core.cache import cache
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from config.request_context import bind
from coupons.models import ServiceClient
from coupons.services.tokens import hash_token


def _cache_key(key_hash: str) -> str:
    return f"service-client:{key_hash}"


class ServiceTokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>` for machine clients; keys are looked up by their hash.

    The client row is cached for a few seconds (it is read on every request); any save or
    delete of the client, a deactivation or a change of grants, drops the entry at once.
    """

    def authenticate_credentials(self, key):
        key_hash = hash_token(key)
        client = cache.get(_cache_key(key_hash))
        if client is None:
            client = ServiceClient.objects.filter(key_hash=key_hash, is_active=True).first()
            if client is not None:
                cache.set(_cache_key(key_hash), client,
                          settings.COUPONS["SERVICE_CLIENT_CACHE_SECONDS"])
        if client is None:
            raise exceptions.AuthenticationFailed("Invalid or inactive API key.")
        bind(client=client.actor)  # for the request's log lines
        return client, None


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
