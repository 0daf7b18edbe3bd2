"""JSON Schemas of the facts (schemas/facts/<FactType>.json), derived from the API's own schema
of POST /events: a fact on the broker's `facts` exchange is the same body (manage.py
consume_facts runs it through the same inbox), so both state one contract. Written by
`scripts/write_fact_schemas.py`; tests/contract/test_asyncapi.py checks the files are current.
"""

from drf_spectacular.generators import SchemaGenerator

from coupons.models import FactType

ID_BASE = "https://coupon-console.example/schemas/facts/"
DESCRIPTION = (
    "One {fact_type} fact from an order, payment, refund or user service: the body of POST "
    "/api/v1/events, and of a message on the topic exchange `facts` (any routing key; "
    "`manage.py consume_facts` reads it from its queue). The inbox records it once per "
    "(sender, message_id); other fields in the body are ignored."
)


def fact_schemas() -> dict[str, dict]:
    components = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]

    def inline(node):
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(components[node["$ref"].rsplit("/", 1)[1]])
            # No fact field is nullable; OpenAPI's own keyword has no place in JSON Schema.
            return {key: inline(value) for key, value in node.items() if key != "nullable"}
        if isinstance(node, list):
            return [inline(value) for value in node]
        return node

    return {
        fact_type: {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"{ID_BASE}{fact_type}.json",
            "title": fact_type,
            "description": DESCRIPTION.format(fact_type=fact_type),
            **inline(components[f"{fact_type}EventRequest"]),
        }
        for fact_type in FactType.values
    }
