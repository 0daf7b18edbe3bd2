from coupons import clock
from coupons.models import ServiceClient
from coupons.services.tokens import hash_token, new_api_key


def service_client_create(*, name: str) -> tuple[ServiceClient, str]:
    """Make a machine client; the key is returned once and only its hash is kept."""
    key = new_api_key()
    client = ServiceClient.objects.create(
        name=name, key_prefix=key[:8], key_hash=hash_token(key), created_at=clock.now()
    )
    return client, key
