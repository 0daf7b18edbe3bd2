"""The relay counts what the broker refused (coupons_relay_publish_failures_total)."""

import pika.exceptions
import pytest
from prometheus_client import REGISTRY

from coupons.models import OutboxEvent
from tests.operations.relay.history import many_events

pytestmark = pytest.mark.django_db


def failures(stage: str) -> float:
    return REGISTRY.get_sample_value("coupons_relay_publish_failures_total",
                                     {"stage": stage}) or 0.0


def test_an_unconfirmed_publish_is_counted_once(template, ctx, broker_queue, make_relay):
    many_events(template, ctx, coupons=1)
    relay, before = make_relay(), failures("publish")
    send, lose_first = relay.publish, OutboxEvent.objects.order_by("id").first().pk

    def lose_confirm(event):
        send(event)
        if event.pk == lose_first:
            raise pika.exceptions.NackError([])

    relay.publish = lose_confirm

    result = relay.run_batch()

    assert result.failed == 1
    assert failures("publish") == before + 1
