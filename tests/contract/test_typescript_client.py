"""A TypeScript client generated from the live schema (openapi-typescript + openapi-fetch)
tells the incident story against a live server (tools/contract/ts-story): issue, lock, a late
payment that opens a case, facts out of order, the check, a refund that returns the coupon and
a compensation two operators decide. The story passes `tsc --strict --noEmit` with no cast, and
ajv validates every answer it got against the schema. Like the other node tools it needs
tools/contract/node_modules (`.ci/run` installs them and sets CONTRACT_TOOLS_REQUIRED=1)."""

import json
import secrets
import subprocess

import pytest
import yaml
from django.contrib.auth.models import Group, User
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer

from coupons.services import service_client_create
from tests.conftest import ALL_GRANTS
from tests.contract.test_contract_tools import TOOLS, node  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def operator_session(username) -> dict:
    """A signed-in operator's cookies, and the CSRF token the API wants beside a session."""
    user = User.objects.create_user(username, password="pw-123456", is_staff=True)
    user.groups.add(Group.objects.get(name="operator"))
    browser = Client()
    browser.force_login(user)
    csrf = secrets.token_hex(16)  # an unmasked secret of 32 characters, as Django accepts
    session = browser.cookies["sessionid"].value
    return {"cookie": f"sessionid={session}; csrftoken={csrf}", "csrfToken": csrf}


STORY = TOOLS / "ts-story" / "story.ts"


def tell(node_path, folder, base_url, schema, story=STORY) -> subprocess.CompletedProcess:
    """Runs the story (tools/contract/ts-story/run.mjs) with `schema` against `base_url`."""
    (folder / "openapi.json").write_bytes(OpenApiJsonRenderer().render(schema, {}))
    _, key = service_client_create(name=f"order-service-{secrets.token_hex(3)}", **ALL_GRANTS)
    (folder / "env.json").write_text(json.dumps({
        "baseUrl": base_url, "serviceKey": key,
        "alice": operator_session("alice"), "bob": operator_session("bob"),
    }))
    return subprocess.run([node_path, "ts-story/run.mjs", str(folder), str(story)], cwd=TOOLS,
                          capture_output=True, text=True, timeout=120)


def live_schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def test_a_generated_typescript_client_tells_the_incident_story(node, live_server, tmp_path):  # noqa: F811
    told = tell(node, tmp_path, live_server.url, live_schema())

    assert told.returncode == 0, told.stdout + told.stderr
    assert "tsc --strict --noEmit: no errors, no casts" in told.stdout
    assert "answers match the schema" in told.stdout


def test_an_answer_the_schema_does_not_describe_fails_the_story(node, live_server, tmp_path):  # noqa: F811
    schema = live_schema()
    coupon = schema["components"]["schemas"]["CouponOutput"]
    coupon["properties"]["loyalty_tier"] = {"type": "string"}
    coupon["required"].append("loyalty_tier")

    told = tell(node, tmp_path, live_server.url, schema)

    assert told.returncode == 1, told.stdout + told.stderr
    assert "answers the schema does not describe" in told.stdout
    assert "GET /api/v1/coupons/{coupon_id} 200 application/json" in told.stdout


def test_a_field_the_schema_lost_fails_the_type_check(node, tmp_path):  # noqa: F811
    schema = live_schema()
    del schema["components"]["schemas"]["LockOutput"]["properties"]["discount_amount"]

    told = tell(node, tmp_path, "http://127.0.0.1:9", schema)

    assert told.returncode == 1, told.stdout + told.stderr
    assert "tsc --strict --noEmit failed" in told.stdout
    assert "discount_amount" in told.stdout


def test_a_cast_in_the_story_fails_it(node, tmp_path):  # noqa: F811
    story = tmp_path / "cast.ts"
    story.write_text(STORY.read_text().replace(
        "const coupon: Schemas[\"CouponOutput\"] = issued.data;",
        "const coupon = issued.data as Schemas[\"CouponOutput\"];"))
    (tmp_path / "work").mkdir()

    told = tell(node, tmp_path / "work", "http://127.0.0.1:9", live_schema(), story)

    assert told.returncode == 1, told.stdout + told.stderr
    assert "casts in story.ts" in told.stdout and "as Schemas" in told.stdout


def test_the_released_schema_fails_with_the_generators_default_settings(node, tmp_path):  # noqa: F811
    """What 1.0.0 published, through openapi-typescript's default settings: the fields with a
    `default` came out required, and bodies the server refuses (both lease shapes, `{}` for a
    case resolution) compiled, so refused.ts's expected errors are missing."""
    released = yaml.safe_load((TOOLS.parents[1] / "schemas" / "released" /
                               "openapi-1.0.0.yaml").read_text())

    told = tell(node, tmp_path, "http://127.0.0.1:9", released)

    assert told.returncode == 1, told.stdout + told.stderr
    assert "tsc --strict --noEmit failed" in told.stdout
    assert "'quote_id' is missing" in told.stdout
    assert "Unused '@ts-expect-error' directive" in told.stdout
