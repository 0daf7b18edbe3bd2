"""Lease tokens and API keys: unguessable to callers, stored only as SHA-256 hashes."""

import base64
import hashlib
import hmac
import secrets

from django.conf import settings


class RetiredLeaseKey(LookupError):
    """The lock's token was made under a key no longer in LEASE_TOKEN_SECRETS."""


def current_lease_key_id() -> str:
    """New locks take the first key of LEASE_TOKEN_SECRETS."""
    return next(iter(settings.LEASE_TOKEN_SECRETS))


def lease_key_active(key_id: str) -> bool:
    return key_id in settings.LEASE_TOKEN_SECRETS


def lease_token(lock_id, key_id: str | None = None) -> str:
    """The lease token of a lock: an HMAC of its id under the lock's key (default: the current).

    Deriving it (instead of drawing it at random) lets an idempotent replay of a LOCK answer the
    same token without ever storing it in clear; the lock keeps the key id, so a replay after a
    rotation derives it under the key it was first made with.
    """
    key_id = key_id or current_lease_key_id()
    if not lease_key_active(key_id):
        raise RetiredLeaseKey(key_id)
    digest = hmac.new(
        settings.LEASE_TOKEN_SECRETS[key_id].encode(), b"coupon-lease:" + lock_id.bytes,
        hashlib.sha256,
    ).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def tokens_match(token_hash: str, stored_hash: str | None) -> bool:
    return stored_hash is not None and hmac.compare_digest(token_hash, stored_hash)


def new_api_key() -> str:
    return secrets.token_urlsafe(32)
