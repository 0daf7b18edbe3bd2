"""Pressing a queue button the way the page does: the form's fields, a key, confirmed."""

import uuid

from django.urls import reverse

HTMX = {"HTTP_HX_REQUEST": "true"}


def new_key() -> str:
    return str(uuid.uuid4())


def press(client, name, key=None, htmx=True, confirmed=True, **fields):
    """POST one queue action. `name` is a console URL name with its kwargs in `fields` ending
    in `_id`; the rest is the form. Answers the response."""
    kwargs = {k: fields.pop(k) for k in list(fields) if k in ("case_id", "decision_id",
                                                              "compensation_id")}
    data = {"idempotency_key": key or new_key(), **fields}
    if confirmed:
        data["confirmed"] = "yes"
    return client.post(reverse(f"console:{name}", kwargs=kwargs), data, **(HTMX if htmx else {}))


def text(response) -> str:
    return response.content.decode()
