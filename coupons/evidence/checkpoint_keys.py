"""The checkpoint signing key (Ed25519, from LEDGER_SIGNING_KEY) and the signed text.

Only the commands that sign (`ledger_checkpoint`, `ledger_public_key`) need the private key, so
the server starts without it: it never signs, and a server that holds no signing key cannot leak
one. Those commands stop with a clear error when it is missing or malformed. Verifying needs
only the public key.
"""

import base64
import binascii
import hashlib
import json

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.conf import settings

FORMAT = "coupon-ledger-checkpoint/2"  # /1 also signed a tree of every coupon's chain head


class KeyProblem(ValueError):
    """A key that is missing or cannot be read; the message says which variable or argument."""


def _pem_or_base64(text: str, *, private: bool):
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            load = (serialization.load_pem_private_key if private
                    else serialization.load_pem_public_key)
            key = load(text.encode(), **({"password": None} if private else {}))
        else:
            raw = base64.b64decode(text, validate=True)
            key = (Ed25519PrivateKey.from_private_bytes(raw) if private
                   else Ed25519PublicKey.from_public_bytes(raw))
    except (ValueError, TypeError, binascii.Error) as bad:
        raise KeyProblem(f"not an Ed25519 key in base64 (32 bytes) or PEM: {bad}") from bad
    wanted = Ed25519PrivateKey if private else Ed25519PublicKey
    if not isinstance(key, wanted):
        raise KeyProblem("the key is not an Ed25519 key")
    return key


def signing_key() -> Ed25519PrivateKey:
    text = settings.LEDGER_SIGNING_KEY
    if not text:
        raise KeyProblem("LEDGER_SIGNING_KEY is not set: the Ed25519 private key (base64 of its "
                        "32 bytes, or PEM) that signs checkpoints")
    try:
        return _pem_or_base64(text, private=True)
    except KeyProblem as bad:
        raise KeyProblem(f"LEDGER_SIGNING_KEY: {bad}") from bad


def verifying_key() -> Ed25519PublicKey | None:
    """The key pages and proofs verify checkpoints under: LEDGER_PUBLIC_KEY, else the public
    half of LEDGER_SIGNING_KEY; None when neither is set."""
    if settings.LEDGER_PUBLIC_KEY:
        return public_key_from_text(settings.LEDGER_PUBLIC_KEY)
    if settings.LEDGER_SIGNING_KEY:
        return signing_key().public_key()
    return None


def public_key_from_text(text: str) -> Ed25519PublicKey:
    return _pem_or_base64(text, private=False)


def public_key_text(key: Ed25519PublicKey) -> str:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode()


def key_id(key: Ed25519PublicKey) -> str:
    """The first 16 hex digits of SHA-256 of the raw public key: names the key, proves nothing."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def canonical(body: dict) -> str:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def sign(body: dict, key: Ed25519PrivateKey) -> tuple[str, str]:
    """(the signed text, the base64 signature)."""
    text = canonical(body)
    return text, base64.b64encode(key.sign(text.encode())).decode()


def signature_holds(text: str, signature: str, key: Ed25519PublicKey) -> bool:
    try:
        key.verify(base64.b64decode(signature, validate=True), text.encode())
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True


def checkpoint_document(checkpoint) -> dict:
    """What the file, the event and a proof carry: the signed text and its signature."""
    return {"signed": checkpoint.body, "signature": checkpoint.signature}
