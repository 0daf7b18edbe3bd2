"""Both contracts are published without a key: the OpenAPI schema (YAML or JSON) and the
AsyncAPI document, whose broker server is the instance's BROKER_URL without its credentials;
request components require only what a client must send."""

import json

import pytest
import yaml
from django.test import override_settings
from drf_spectacular.generators import SchemaGenerator

from operations.relay import Relay

pytestmark = pytest.mark.django_db


def test_the_openapi_schema_is_public_as_yaml_and_as_json(client):
    as_yaml = client.get("/api/v1/schema/")
    as_json = client.get("/api/v1/schema/", {"format": "json"})

    assert as_yaml.status_code == as_json.status_code == 200
    assert yaml.safe_load(as_yaml.content)["openapi"] == json.loads(as_json.content)["openapi"]
    assert as_json["Content-Type"].startswith("application/vnd.oai.openapi+json")


@override_settings(BROKER_URL="amqp://relay:s3cret-pw@broker.internal:5673/coupons-prod")
def test_the_asyncapi_document_is_public_and_names_this_instances_broker(client):
    response = client.get("/api/v1/asyncapi/")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/yaml")
    document = yaml.safe_load(response.content)
    assert document["servers"]["broker"]["host"] == "broker.internal:5673"
    assert document["servers"]["broker"]["pathname"] == "/coupons-prod"
    assert b"s3cret-pw" not in response.content and b"relay:" not in response.content
    assert "variables" not in document["servers"]["broker"]


@override_settings(BROKER_URL="amqp://relay:pw@broker.internal:5673/coupons-prod",
                   BROKER_EVENTS_EXCHANGE="coupons-staging")
def test_the_asyncapi_document_binds_the_channels_where_the_relay_publishes(client):
    """A consumer generated from the served document binds to the exchange and virtual host
    the relay uses (BROKER_EVENTS_EXCHANGE, BROKER_URL), not the file's defaults."""
    document = yaml.safe_load(client.get("/api/v1/asyncapi/").content)
    channels = document["channels"]
    events = channels["couponEvents"]["bindings"]["amqp"]["exchange"]

    assert (events["name"], events["vhost"]) == ("coupons-staging", "coupons-prod")
    assert Relay().exchange == "coupons-staging"
    assert channels["facts"]["bindings"]["amqp"]["exchange"]["vhost"] == "coupons-prod"
    assert channels["deadFacts"]["bindings"]["amqp"]["queue"]["vhost"] == "coupons-prod"
    assert "coupons-staging" in channels["couponEvents"]["title"]


def test_the_asyncapi_document_bundles_its_message_schemas(client):
    document = client.get("/api/v1/asyncapi/", {"format": "json"}).json()

    assert "./events/" not in json.dumps(document) and "./facts/" not in json.dumps(document)
    assert document["components"]["messages"]["CouponLocked"]["payload"]["title"]
    assert document["servers"]["broker"]["host"] == "127.0.0.1:5672"  # the test settings'


def test_request_components_require_only_what_a_client_must_send():
    """A request field the server fills in says so in words, not with `default`, which
    generators with their default settings read as "required" (openapi-typescript did)."""
    schemas = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    requests = {name: schema for name, schema in schemas.items() if name.endswith("Request")}

    assert "LockInputRequest" in requests  # COMPONENT_SPLIT_REQUEST: their own components
    assert "lease_seconds" not in requests["LockInputRequest"].get("required", [])
    with_default = [(name, field) for name, schema in requests.items()
                    for field, spec in schema.get("properties", {}).items() if "default" in spec]
    assert with_default == []
    quote_id = requests["LockInputRequest"]["properties"]["quote_id"]
    assert "quote_id" not in requests["LockInputRequest"]["required"]
    assert quote_id["description"].endswith('Left out, the server takes `""`.')
    risk_flag = requests["RefundInputRequest"]["properties"]["risk_flag"]
    assert risk_flag["description"] == "Left out, the server takes `false`."
    assert all("readOnly" not in spec for schema in requests.values()
               for spec in schema.get("properties", {}).values())
