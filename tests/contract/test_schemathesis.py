"""The API keeps its OpenAPI contract: Schemathesis fuzzes a live server with every check.

Any 5xx, an undocumented status or body, a schema-valid request refused or an invalid one
accepted fails the build. Settings in schemathesis.toml; the run time is printed (`-s`).
"""

import json
import os
import secrets
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from coupons.services import (
    CommandContext,
    coupon_issue,
    service_client_create,
    template_create,
)
from tests.conftest import ALL_GRANTS

pytestmark = pytest.mark.django_db(transaction=True)

HERE = Path(__file__).parent
# What only people may do (docs/api.md): no service client holds these
# capabilities, so the operator's pass covers them and the service's pass meets only their 403.
PEOPLE_ONLY = (r"^/api/v1/(cases|compensations|reconciliation|return-policies"
               r"|coupons/\{coupon_id\}/operations/|refunds/\{decision_id\}/(approve|reject))")


def service_headers() -> list[str]:
    _, key = service_client_create(name="contract-fuzzer", **ALL_GRANTS)
    return ["-H", f"Authorization: Token {key}"]


def operator_headers() -> list[str]:
    """A signed-in operator who also keeps policies: a session cookie and its CSRF token.

    Sent as plain headers, so Schemathesis's `ignored_auth` check (it swaps the declared
    credentials for bad ones) cannot take them away; the service client's pass runs it.
    """
    person = User.objects.create_user("fuzzing-operator", is_staff=True)
    person.groups.add(*Group.objects.filter(name__in=["operator", "policy_admin"]))
    browser = Client()
    browser.force_login(person)
    token = secrets.token_hex(16)  # a CSRF secret: 32 characters
    session = browser.cookies["sessionid"].value
    return ["-H", f"Cookie: sessionid={session}; csrftoken={token}",
            "-H", f"X-CSRFToken: {token}", "--include-path-regex", PEOPLE_ONLY,
            "--exclude-checks", "ignored_auth"]


def seed() -> None:
    """Something for small ids to find (the coverage phase tries 1), so reads and commands get
    past their 404s; the stateful phase follows the schema's links from what it creates."""
    ctx = CommandContext(actor="contract-fuzzer")
    template = template_create(code="off5", name="5 off", kind="AMOUNT_OFF",
                               face_value=Decimal("5.00"), valid_days=30)
    for user in ("u1", "u2"):
        coupon_issue(template_id=template.pk, user_id=user, ctx=ctx)


@pytest.mark.parametrize("caller", [service_headers, operator_headers],
                         ids=["service-client", "operator"])
def test_the_api_answers_as_its_schema_says(live_server, tmp_path, caller):
    seed()
    schema_file = tmp_path / "openapi.json"
    schema_file.write_text(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    command = [
        str(Path(sys.executable).with_name("st")), "--config-file",
        str(HERE / "schemathesis.toml"), "run", str(schema_file), "--url", live_server.url,
        "--checks", "all", "--phases", "examples,coverage,fuzzing,stateful", *caller(),
        "--report", "junit", "--report-dir", str(tmp_path / "report"),
    ]
    started = time.monotonic()
    # Run in tmp_path: Schemathesis keeps a cache (.schemathesis/) in its working directory.
    run = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path, env={
        **os.environ, "NO_COLOR": "1",
        "SCHEMATHESIS_HOOKS": str(HERE / "schemathesis_hooks.py")})
    print(run.stdout[-20000:], run.stderr[-5000:])
    print(f"schemathesis ({caller.__name__}) took {time.monotonic() - started:.0f}s")
    assert run.returncode == 0, run.stdout[-20000:]
