"""The AsyncAPI document as this instance serves it (docs/events.md, "The contract"):
schemas/asyncapi.yaml with its message schemas bundled in and its broker server read from
BROKER_URL, never the credentials in it. Public, like the OpenAPI schema: YAML, or JSON with
`?format=json`."""

import json
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml
from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from operations.broker import node_urls

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


@cache
def bundled() -> dict:
    """schemas/asyncapi.yaml with each `./events/...` or `./facts/...` reference replaced by the
    schema it names, so a reader needs this one document."""

    def inline(node):
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("./"):
                return json.loads((SCHEMAS / ref).read_text())
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(value) for value in node]
        return node

    return inline(yaml.safe_load((SCHEMAS / "asyncapi.yaml").read_text()))


def vhost_of(broker_url: str) -> str:
    """The virtual host a BROKER_URL names (`%2F`, or no path, is the default `/`)."""
    path = urlsplit(node_urls(broker_url)[0]).path
    return unquote(path[1:]) if len(path) > 1 else "/"


def broker_server(broker_url: str) -> dict:
    """AsyncAPI's server for a BROKER_URL: host and port, the virtual host, no user or
    password; of a cluster's list of nodes, the first."""
    parts = urlsplit(node_urls(broker_url)[0])
    vhost = vhost_of(broker_url)
    return {
        "host": f"{parts.hostname}:{parts.port or 5672}",
        "pathname": "/" + vhost.lstrip("/"),
        "protocol": parts.scheme,
        "protocolVersion": "0.9.1",
        "description": f"This instance's broker (BROKER_URL), virtual host {vhost!r}.",
    }


def served_document() -> dict:
    """The document as this instance's processes use the broker: its server from BROKER_URL,
    every channel bound on that virtual host, and the events' channel to the exchange the relay
    publishes to (BROKER_EVENTS_EXCHANGE), so a consumer generated from it binds there."""
    document = json.loads(json.dumps(bundled()))  # a copy: the cached one stays as read
    server = broker_server(settings.BROKER_URL)
    document["servers"]["broker"] = server
    for channel in document["channels"].values():
        binding = channel["bindings"]["amqp"]
        binding["queue" if binding["is"] == "queue" else "exchange"]["vhost"] = vhost_of(
            settings.BROKER_URL)
    events = document["channels"]["couponEvents"]
    exchange = settings.BROKER_EVENTS_EXCHANGE
    events["bindings"]["amqp"]["exchange"]["name"] = exchange
    events["title"] = f"Coupon events (exchange `{exchange}`)"
    return document


@require_GET
def asyncapi_document(request):
    document = served_document()
    if request.GET.get("format") == "json":
        return JsonResponse(document)
    return HttpResponse(yaml.safe_dump(document, sort_keys=False, allow_unicode=True),
                        content_type="application/yaml; charset=utf-8")
