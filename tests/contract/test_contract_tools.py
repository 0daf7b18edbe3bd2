"""The contract checks that need node: `redocly lint` (recommended rules) over the generated
OpenAPI schema, and the AsyncAPI parser over schemas/asyncapi.yaml.

The tools are pinned in tools/contract/package-lock.json; `.ci/run` installs them (`npm ci`,
once) and sets CONTRACT_TOOLS_REQUIRED=1, so there a missing tool fails. Elsewhere these tests
skip with the reason until `cd tools/contract && npm ci` has run.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiYamlRenderer

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "contract"


@pytest.fixture(scope="module")
def node():
    node = shutil.which("node")
    missing = ("node is not installed" if node is None else
               None if (TOOLS / "node_modules").is_dir() else
               "tools/contract/node_modules is missing: cd tools/contract && npm ci")
    if missing:
        if os.environ.get("CONTRACT_TOOLS_REQUIRED") == "1":
            pytest.fail(f"{missing} (.ci/run installs them)")
        pytest.skip(missing)
    return node


def run(*command) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=TOOLS, capture_output=True, text=True, timeout=120)


@pytest.mark.django_db
def test_redocly_finds_nothing_wrong_with_the_openapi_schema(node, tmp_path):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    path = tmp_path / "openapi.yaml"
    path.write_bytes(OpenApiYamlRenderer().render(schema, renderer_context={}))

    linted = run(node, "node_modules/@redocly/cli/bin/cli.js", "lint", str(path),
                 "--format=summary")

    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert "error" not in linted.stdout.replace("0 errors", ""), linted.stdout


def test_the_asyncapi_parser_finds_the_document_valid(node):
    parsed = run(node, "check-asyncapi.mjs", str(ROOT / "schemas" / "asyncapi.yaml"))

    assert parsed.returncode == 0, parsed.stdout + parsed.stderr
    assert "valid AsyncAPI 3.0.0, 21 messages" in parsed.stdout


def test_the_asyncapi_parser_catches_a_broken_reference(node, tmp_path):
    broken = (ROOT / "schemas" / "asyncapi.yaml").read_text().replace(
        "./events/CouponLocked.json", "./events/NoSuchEvent.json")
    (tmp_path / "asyncapi.yaml").write_text(broken)

    parsed = run(node, "check-asyncapi.mjs", str(tmp_path / "asyncapi.yaml"))

    assert parsed.returncode == 1
    assert "invalid-ref" in parsed.stdout


@pytest.mark.django_db
def test_the_asyncapi_parser_finds_the_served_document_valid(node, tmp_path, client):
    served = client.get("/api/v1/asyncapi/")
    (tmp_path / "asyncapi.yaml").write_bytes(served.content)

    parsed = run(node, "check-asyncapi.mjs", str(tmp_path / "asyncapi.yaml"))

    assert parsed.returncode == 0, parsed.stdout + parsed.stderr
    assert "valid AsyncAPI 3.0.0, 21 messages" in parsed.stdout
