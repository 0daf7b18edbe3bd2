from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from config.request_context import bind
from coupons.models import ServiceClient
from coupons.services.tokens import hash_token


class ServiceTokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>` for machine clients; keys are looked up by their hash."""

    def authenticate_credentials(self, key):
        client = ServiceClient.objects.filter(key_hash=hash_token(key), is_active=True).first()
        if client is None:
            raise exceptions.AuthenticationFailed("Invalid or inactive API key.")
        bind(client=client.actor)  # for the request's log lines
        return client, None


class ServiceTokenScheme(OpenApiAuthenticationExtension):
    target_class = ServiceTokenAuthentication
    name = "ServiceToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": (
                "`Token <key>`; make a key with `python manage.py create_service_client NAME`."
            ),
        }
