from collections.abc import Iterable

from coupons import clock
from coupons.capabilities import Capability
from coupons.models import ServiceClient
from coupons.write.tokens import hash_token, new_api_key


def service_client_create(
    *, name: str, capabilities: Iterable[Capability] = (), fact_types: Iterable[str] = ()
) -> tuple[ServiceClient, str]:
    """Make a machine client with exactly these grants; the key is returned once, hashed kept."""
    key = new_api_key()
    client = ServiceClient.objects.create(
        name=name, key_prefix=key[:8], key_hash=hash_token(key), created_at=clock.now(),
        capabilities=sorted(Capability(c).value for c in capabilities),
        fact_types=sorted(set(fact_types)),
    )
    return client, key
