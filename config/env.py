"""Settings read from the environment. Secrets have no defaults: a missing one stops the start.

Everything here raises ImproperlyConfigured naming the variable, so a misconfigured server
fails at start-up with a sentence an operator can act on, never later with a 500.
"""

import os
import re
import zoneinfo
from urllib.parse import urlsplit, urlunsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

# The key id a single LEASE_TOKEN_SECRET gets, so a later rotation can keep it under that name:
# LEASE_TOKEN_SECRETS="k2:<new>,k1:<the old LEASE_TOKEN_SECRET>".
SINGLE_LEASE_KEY_ID = "k1"
KEY_ID = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
THROTTLE_RATE = re.compile(r"^\d+/(s|sec|second|m|min|minute|h|hour|d|day)$")


def env_flag(name: str, *, default: bool) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be 1 or 0, not {value!r}.")


def env_int(name: str, *, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit():
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}.")
    return int(value)


def env_list(name: str, *, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_rate(name: str, *, default: str) -> str:
    """A DRF throttle rate such as 600/min, checked now rather than on the first request."""
    value = os.environ.get(name, "").strip() or default
    if not THROTTLE_RATE.match(value):
        raise ImproperlyConfigured(
            f"{name} must be a rate such as 600/min (per s, min, hour or day), not {value!r}."
        )
    return value


def required_secret(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(
            f"{name} is not set. The server does not start without it; there is no default "
            f"secret. Set {name} to a long random value "
            f"(see docs/deploy.md, 'Production settings')."
        )
    return value


def lease_token_secrets(*, secret_key: str) -> dict[str, str]:
    """Lease-token keys by key id, the current one first.

    `LEASE_TOKEN_SECRET=<secret>` is one key (id k1). To rotate, name them:
    `LEASE_TOKEN_SECRETS="k2:<new>,k1:<old>"`: new locks use k2, and tokens issued under k1 keep
    working until k1 is removed from the list.
    """
    one = os.environ.get("LEASE_TOKEN_SECRET", "").strip()
    many = os.environ.get("LEASE_TOKEN_SECRETS", "").strip()
    if one and many:
        raise ImproperlyConfigured(
            "Set LEASE_TOKEN_SECRET (one key) or LEASE_TOKEN_SECRETS (several), not both."
        )
    if not one and not many:
        raise ImproperlyConfigured(
            "LEASE_TOKEN_SECRET is not set. The server does not start without it; there is no "
            "default. Lease tokens are HMACs of the lock id under it, so it must be a long "
            "random value of its own, not DJANGO_SECRET_KEY "
            "(see docs/deploy.md, 'Production settings')."
        )
    secrets = {SINGLE_LEASE_KEY_ID: one} if one else parse_key_list("LEASE_TOKEN_SECRETS", many)
    if secret_key in secrets.values():
        raise ImproperlyConfigured(
            "LEASE_TOKEN_SECRET must differ from DJANGO_SECRET_KEY: one leaked key must not "
            "also forge lease tokens."
        )
    return secrets


def idempotency_seal_secret(*, others: list[str]) -> str:
    """The key that seals Idempotency-Key records (coupons/write/idempotency_seal.py); it must
    be none of the server's other keys."""
    secret = required_secret("IDEMPOTENCY_SEAL_SECRET")
    if secret in others:
        raise ImproperlyConfigured(
            "IDEMPOTENCY_SEAL_SECRET must differ from DJANGO_SECRET_KEY and the lease-token "
            "keys: one leaked key must not also forge stored answers."
        )
    return secret


def parse_key_list(name: str, value: str) -> dict[str, str]:
    secrets = {}
    for item in value.split(","):
        key_id, sep, secret = item.strip().partition(":")
        if not sep or not KEY_ID.match(key_id) or not secret:
            raise ImproperlyConfigured(
                f"{name} must look like k2:<secret>,k1:<secret> (key ids of letters, "
                "digits, '-', '_' or '.'; the first key is the current one)."
            )
        if key_id in secrets:
            raise ImproperlyConfigured(f"{name} names key id {key_id!r} twice.")
        secrets[key_id] = secret
    return secrets


def database_config(url: str, **options) -> dict:
    """dj_database_url's settings for `url`, also for libpq's multi-host form.

    `postgres://u@10.0.0.1:5432,10.0.0.2:5432/db?target_session_attrs=read-write` lists every
    node of a failover pair (docs/deploy.md): libpq tries them in turn and keeps the one
    that takes writes, so after a failover a new connection finds the new primary by itself.
    Django hands HOST and PORT to libpq as they are, so they stay comma-separated lists.
    """
    parts = urlsplit(url)
    userinfo, at, hostlist = parts.netloc.rpartition("@")
    if "," not in hostlist:
        return dj_database_url.parse(url, **options)
    hosts, ports = [], []
    for item in hostlist.split(","):
        host, colon, port = item.rpartition(":") if not item.endswith("]") else (item, "", "")
        if not colon:
            host, port = item, ""
        host = host.strip("[]")
        if not host or (port and not port.isdigit()):
            raise ImproperlyConfigured(
                "DATABASE_URL lists its hosts as host:port,host:port (a port of digits), "
                f"not {hostlist!r}.")
        hosts.append(host)
        ports.append(port or "5432")
    single = urlunsplit(parts._replace(netloc=f"{userinfo}{at}{hosts[0]}:{ports[0]}"))
    config = dj_database_url.parse(single, **options)
    config["HOST"], config["PORT"] = ",".join(hosts), ",".join(ports)
    return config


def env_time_zone(name: str, *, default: str) -> str:
    """An IANA zone name (`Asia/Shanghai`), refused at start-up when the zone does not exist."""
    value = os.environ.get(name, "").strip() or default
    if value not in zoneinfo.available_timezones() | {"UTC"}:
        raise ImproperlyConfigured(f"{name} must be a time zone such as Asia/Shanghai, "
                                   f"not {value!r}.")
    return value
