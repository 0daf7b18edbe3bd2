"""Start-up checks on the secrets (issue 16, item 7): `manage.py check` and every server start.

A public demo secret or a short one lets anyone forge sessions or lease tokens, so both are
errors (config.E001, config.E002) unless COUPONS_DEMO=1, which only bin/run-demo sets.
gunicorn runs no system checks: config/wsgi.py calls `refuse_to_start_on_weak_secrets`.
"""

import os

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

# Every setting that holds a secret, in one place: a string, or a dict / list of them
# (LEASE_TOKEN_SECRETS). A new secret is one line here. Empty values (an optional secret left
# unset, METRICS_TOKEN) are not checked.
SECRET_SETTINGS = (
    "SECRET_KEY",
    "LEASE_TOKEN_SECRETS",
    "METRICS_TOKEN",
    "LEDGER_CHAIN_KEYS",
    "LEDGER_SIGNING_KEY",
)
MIN_SECRET_BYTES = 32

# The demo's secrets are public (bin/run-demo, the README): refused everywhere but the demo.
# tests/hardening/test_secret_checks.py checks that every secret bin/run-demo exports is here.
DEMO_SECRETS = frozenset({
    "demo-only-secret-key-public-never-use-in-production",
    "demo-only-lease-token-secret-public-never-use",
    "demo-only-ledger-chain-key-public-never-use-in-production",
    "ZGVtby1vbmx5LWxlZGdlci1zaWduaW5nLWtleS0zMmI=",  # the demo's checkpoint signing key
})
TAG = "secrets"


def secret_values(value) -> list[str]:
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple):
        return [item for entry in value for item in secret_values(entry)]
    return [value] if isinstance(value, str | bytes) and value else []


def is_demo() -> bool:
    return os.environ.get("COUPONS_DEMO", "") == "1"


@checks.register(TAG)
def check_secrets(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    errors = []
    for name in SECRET_SETTINGS:
        for secret in secret_values(getattr(settings, name, None)):
            raw = secret.encode() if isinstance(secret, str) else secret
            if secret in DEMO_SECRETS and not is_demo():
                errors.append(checks.Error(
                    f"{name} is one of the public demo secrets.",
                    hint="The demo's secrets are published with the code; set a long random "
                         "value of your own (README, 'Production settings').",
                    id="config.E001",
                ))
            elif len(raw) < MIN_SECRET_BYTES:
                errors.append(checks.Error(
                    f"{name} is {len(raw)} bytes long; a secret needs at least "
                    f"{MIN_SECRET_BYTES}.",
                    hint="A short secret can be guessed; e.g. python3 -c 'import secrets; "
                         "print(secrets.token_urlsafe(48))'.",
                    id="config.E002",
                ))
    return errors


def refuse_to_start_on_weak_secrets() -> None:
    errors = checks.run_checks(tags=[TAG])
    if errors:
        raise ImproperlyConfigured("\n".join(str(error) for error in errors))
