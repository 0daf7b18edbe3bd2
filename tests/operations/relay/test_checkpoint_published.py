"""A LedgerCheckpointed event belongs to no coupon: the relay sends it in id order, from
shard 0, with null coupon headers, and never holds it behind a coupon's events."""

import pytest

from coupons.models import OutboxEvent
from operations.checkpoint import ledger_checkpoint
from tests.operations.relay.history import many_events

pytestmark = pytest.mark.django_db


@pytest.fixture
def checkpointed(template, ctx, settings, tmp_path):
    settings.LEDGER_CHECKPOINT_DIR = str(tmp_path)
    many_events(template, ctx, coupons=2)
    ledger_checkpoint()
    ledger_checkpoint()
    return list(OutboxEvent.objects.filter(event_type="LedgerCheckpointed").order_by("pk"))


def test_checkpoints_arrive_with_their_signed_body_and_no_coupon(checkpointed, broker_queue,
                                                                   make_relay):
    assert make_relay().run_batch().published == OutboxEvent.objects.count()

    sent = [m for m in broker_queue.drain() if m["routing_key"] == "LedgerCheckpointed"]
    assert [m["body"]["number"] for m in sent] == [1, 2]
    assert sent[0]["headers"] == {"event_id": checkpointed[0].pk,
                                  "event_type": "LedgerCheckpointed", "coupon_id": None,
                                  "state_version": None}
    assert sent[1]["body"]["signed"] == checkpointed[1].payload["signed"]


def test_with_shards_shard_zero_sends_the_checkpoints(checkpointed, broker_queue, make_relay):
    make_relay(shard=1, shards=2).run_batch()
    assert set(OutboxEvent.objects.filter(published_at__isnull=True)
               .values_list("event_type", flat=True)) >= {"LedgerCheckpointed"}

    make_relay(shard=0, shards=2).run_batch()

    assert not OutboxEvent.objects.filter(published_at__isnull=True).exists()
