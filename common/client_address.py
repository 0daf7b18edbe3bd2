"""The address of the client behind TRUSTED_PROXY_COUNT proxies.

Behind a TLS proxy REMOTE_ADDR is the proxy's own address, so sign-in limits keyed on it lock a
user out for everyone. Each proxy appends the address it received the request from to
X-Forwarded-For, so with N trusted proxies the N-th entry from the right is the address the
outermost one saw; anything left of it the client wrote itself and is never believed.
django-ipware's proxy_count=1 answered None for nginx's usual one-entry header, hence our own.
The header is believed only when the peer is one of TRUSTED_PROXY_ADDRESSES: a client that
reaches the server directly would otherwise choose its own address with it.
"""

import functools
import ipaddress

from django.conf import settings


@functools.cache
def _networks(addresses: tuple[str, ...]):
    # config/settings.py refused an entry that is not an address or network at start-up.
    return tuple(ipaddress.ip_network(address, strict=False) for address in addresses)


def from_trusted_proxy(remote: str | None) -> bool:
    try:
        peer = ipaddress.ip_address(remote or "")
    except ValueError:
        return False
    return any(peer in network for network in _networks(tuple(settings.TRUSTED_PROXY_ADDRESSES)))


def client_address(request) -> str | None:
    remote = request.META.get("REMOTE_ADDR") or None
    trusted = settings.TRUSTED_PROXY_COUNT
    if not trusted or not from_trusted_proxy(remote):
        return remote
    forwarded = [entry.strip() for entry in
                 request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if entry.strip()]
    if not forwarded:
        return remote  # not through the proxies (a probe on the private network)
    # Fewer entries than trusted proxies: the leftmost is still one a trusted proxy wrote.
    candidate = forwarded[-min(trusted, len(forwarded))]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote
