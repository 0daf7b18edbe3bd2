"""The consumer's log lines carry the client it runs as and the coupon the fact moved."""

import pytest

from tests.common.observability.capture import console_lines
from tests.conftest import lock
from tests.operations.facts.conftest import event_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def log_lines():
    with console_lines() as lines:
        yield lines


def test_a_consumed_fact_logs_its_client_and_coupon(
    coupon, ctx, clock, service_client, facts_broker, make_consumer, log_lines
):

    lock(coupon, ctx, order_id="O1")
    facts_broker.publish(event_body("m1", "OrderClosed", clock.now(), order_id="O1"))

    make_consumer(service_client[0]).run(once=True)

    [line] = [line for line in log_lines() if line["logger"] == "operations.facts_consumer"]
    assert line["message"] == "fact consumer: PROCESSED m1"
    assert (line["client"], line["coupon_id"]) == ("client:order-service", coupon.pk)
