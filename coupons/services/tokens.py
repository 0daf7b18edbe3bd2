"""Lease tokens and API keys: unguessable to callers, stored only as SHA-256 hashes."""

import base64
import hashlib
import hmac
import secrets

from django.conf import settings


def lease_token(lock_id) -> str:
    """The lease token of a lock: an HMAC of its id under a server secret.

    Deriving it (instead of drawing it at random) lets an idempotent replay of a LOCK answer the
    same token without ever storing it in clear.
    """
    digest = hmac.new(
        settings.LEASE_TOKEN_SECRET.encode(), b"coupon-lease:" + lock_id.bytes, hashlib.sha256
    ).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def tokens_match(token_hash: str, stored_hash: str | None) -> bool:
    return stored_hash is not None and hmac.compare_digest(token_hash, stored_hash)


def new_api_key() -> str:
    return secrets.token_urlsafe(32)
