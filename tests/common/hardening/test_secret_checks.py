"""The public demo secrets and short secrets stop the start.

Before: the README's demo secrets and a one-character LEASE_TOKEN_SECRET started the server
and passed `check --deploy`.
"""

import os
import re
import subprocess
import sys

import pytest

from common.checks import ALLOW_OWNER_LOGIN_ENV, DEMO_SECRETS, MIN_SECRET_BYTES
from tests.api.test_production_defaults import PRODUCTION_ENV, ROOT, manage

RUN_DEMO = (ROOT / "bin" / "run-demo").read_text()
DEMO_ENV = dict(re.findall(r'export (\w+)="\$\{\w+:-([^}]+)\}"', RUN_DEMO))


def test_every_secret_bin_run_demo_exports_is_listed_as_a_demo_secret():
    exported = {DEMO_ENV["DJANGO_SECRET_KEY"], DEMO_ENV["LEASE_TOKEN_SECRET"],
                DEMO_ENV["IDEMPOTENCY_SEAL_SECRET"]}

    assert exported <= DEMO_SECRETS
    assert "export COUPONS_DEMO=1" in RUN_DEMO


@pytest.mark.parametrize("name", ["DJANGO_SECRET_KEY", "LEASE_TOKEN_SECRET",
                                  "IDEMPOTENCY_SEAL_SECRET"])
def test_check_deploy_refuses_a_demo_secret_and_says_why(name):
    result = manage("check", "--deploy", env={**PRODUCTION_ENV, name: DEMO_ENV[name]})

    assert result.returncode != 0
    assert "config.E001" in result.stderr
    assert "public demo secrets" in result.stderr


def test_the_demo_secrets_pass_in_the_demo():
    env = {**PRODUCTION_ENV, "DJANGO_SECRET_KEY": DEMO_ENV["DJANGO_SECRET_KEY"],
           "LEASE_TOKEN_SECRET": DEMO_ENV["LEASE_TOKEN_SECRET"],
           "IDEMPOTENCY_SEAL_SECRET": DEMO_ENV["IDEMPOTENCY_SEAL_SECRET"], "COUPONS_DEMO": "1"}

    result = manage("check", env=env)

    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name, value", [
    ("LEASE_TOKEN_SECRET", "x"),
    ("DJANGO_SECRET_KEY", "a" * (MIN_SECRET_BYTES - 1)),
    ("METRICS_TOKEN", None),
])
def test_check_deploy_refuses_a_short_secret(name, value):
    env = {**PRODUCTION_ENV, name: value} if value else PRODUCTION_ENV
    if name == "METRICS_TOKEN":
        # The settings refuse a short METRICS_TOKEN themselves; a rotation list's short key is
        # the case they do not see.
        env = {k: v for k, v in PRODUCTION_ENV.items() if k != "LEASE_TOKEN_SECRET"}
        env["LEASE_TOKEN_SECRETS"] = "k2:" + "n" * 40 + ",k1:short-old-key"

    result = manage("check", "--deploy", env=env)

    assert result.returncode != 0
    assert "config.E002" in result.stderr
    assert f"at least {MIN_SECRET_BYTES}" in result.stderr


def test_the_wsgi_application_gunicorn_loads_refuses_a_short_secret():
    """gunicorn runs no system checks; loading config.wsgi does."""
    env = {**PRODUCTION_ENV, "LEASE_TOKEN_SECRET": "x"}

    refused = subprocess.run([sys.executable, "-c", "import config.wsgi"], cwd=ROOT, env={
        "PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "config.settings", **env,
    }, capture_output=True, text=True, timeout=120)
    served = subprocess.run([sys.executable, "-c", "import config.wsgi"], cwd=ROOT, env={
        "PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "config.settings",
        # The suite's login is the owner's; which login serves is test_database_login_check's.
        **PRODUCTION_ENV, ALLOW_OWNER_LOGIN_ENV: "1",
    }, capture_output=True, text=True, timeout=120)

    assert refused.returncode != 0
    assert "ImproperlyConfigured" in refused.stderr and "config.E002" in refused.stderr
    assert served.returncode == 0, served.stderr
