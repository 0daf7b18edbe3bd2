"""Pressing a queue button the way the page does: the form's fields, a key, confirmed."""

import uuid

from django.urls import reverse

from coupons.evidence.tips import journal_tip
from coupons.models import GoodwillProposal
from refunds.models import Compensation, RefundCoupon

HTMX = {"HTTP_HX_REQUEST": "true"}
RECORDS = {"decision_id": RefundCoupon, "compensation_id": Compensation,
           "goodwill_id": GoodwillProposal}
# The version a key's form was rendered with: the same form sent again sends it again.
_shown_with_key: dict[str, str] = {}


def new_key() -> str:
    return str(uuid.uuid4())


def press(client, name, key=None, htmx=True, confirmed=True, **fields):
    """POST one queue action. `name` is a console URL name with its kwargs in `fields` ending
    in `_id`; the rest is the form. Answers the response."""
    kwargs = {k: fields.pop(k) for k in list(fields) if k in ("case_id", "decision_id",
                                                              "compensation_id", "goodwill_id")}
    data = {"idempotency_key": key or new_key(), **fields}
    for record_id, model in RECORDS.items():
        if record_id in kwargs and "seen_entry" not in data:
            # A decision form names the version the page showed with it: the current one,
            # or the one its key's form was first shown with.
            data["seen_entry"] = _shown_with_key.setdefault(
                data["idempotency_key"], journal_tip(model, kwargs[record_id]) or "")
    if confirmed:
        data["confirmed"] = "yes"
    return client.post(reverse(f"console:{name}", kwargs=kwargs), data, **(HTMX if htmx else {}))


def text(response) -> str:
    return response.content.decode()
