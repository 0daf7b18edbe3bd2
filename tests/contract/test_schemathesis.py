"""The API keeps its OpenAPI contract: Schemathesis fuzzes a live server with every check.

Any 5xx, an undocumented status, a body that is not the documented one, a valid request
refused or an invalid one accepted fails the build.
"""

import json
import os
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator

from coupons.services import (
    CommandContext,
    coupon_issue,
    service_client_create,
    template_create,
)
from tests.conftest import ALL_GRANTS

pytestmark = pytest.mark.django_db(transaction=True)

CONFIG = Path(__file__).with_name("schemathesis.toml")


def test_the_api_answers_as_its_schema_says(live_server, tmp_path):
    _, key = service_client_create(name="contract-fuzzer", **ALL_GRANTS)
    # Something for small ids to find (the coverage phase tries 1), so reads and commands get
    # past their 404s; the stateful phase chains the rest from what it creates.
    ctx = CommandContext(actor="contract-fuzzer")
    template = template_create(code="off5", name="5 off", kind="AMOUNT_OFF",
                               face_value=Decimal("5.00"), valid_days=30)
    for user in ("u1", "u2"):
        coupon_issue(template_id=template.pk, user_id=user, ctx=ctx)
    schema_file = tmp_path / "openapi.json"
    schema_file.write_text(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    command = [
        str(Path(sys.executable).with_name("st")), "--config-file", str(CONFIG), "run",
        str(schema_file), "--url", live_server.url, "--checks", "all",
        "--phases", "examples,coverage,fuzzing,stateful",
        "-H", f"Authorization: Token {key}",
        "--report", "junit", "--report-dir", str(tmp_path / "report"),
    ]
    started = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True, timeout=900,
                         env={**os.environ, "NO_COLOR": "1"})
    print(run.stdout[-20000:], run.stderr[-5000:])
    print(f"schemathesis took {time.monotonic() - started:.0f}s")
    assert run.returncode == 0, run.stdout[-20000:]
