import itertools

import pytest

_message_ids = itertools.count(1)


@pytest.fixture
def send(api, clock):
    """POST a fact to the inbox; answers the response. A message id is made unless given."""

    def send(fact_type, message_id=None, expect=202, **payload):
        body = {
            "message_id": message_id or f"m-{next(_message_ids)}",
            "type": fact_type,
            "occurred_at": clock.now().isoformat(),
            "payload": payload,
        }
        response = api.post("/api/v1/events", body, format="json")
        assert response.status_code == expect, response.json()
        return response.json()

    return send
