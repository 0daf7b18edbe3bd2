
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from operations.metrics import serve_process_metrics
from operations.relay import Relay, run_forever
from operations.selectors import outbox_lag
from operations.worker import until_sigterm


class Command(BaseCommand):
    help = ("Publish unpublished outbox rows to RabbitMQ (BROKER_URL), topic exchange "
            "BROKER_EVENTS_EXCHANGE ('coupons'), routing key = event type; sets published_at "
            "after the broker confirmed.")

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true",
                            help="Drain the outbox once and exit (for cron); exit 1 if the "
                                 "broker refused anything.")
        parser.add_argument("--batch-size", type=int, default=200)
        parser.add_argument("--shard", type=int, default=0, help="This relay's shard (K).")
        parser.add_argument("--shards", type=int, default=1,
                            help="Number of shards (N): this relay takes coupon_id %% N == K.")
        parser.add_argument(
            "--exchange", default=None,
            help="Default BROKER_EVENTS_EXCHANGE. Set that instead where the web servers run "
                 "too: the AsyncAPI document they serve names it, so consumers bind there.")
        parser.add_argument("--metrics-port", type=int, default=None,
                            help="Serve this process's counters on 127.0.0.1:PORT/metrics.")

    def handle(self, *args, once, batch_size, shard, shards, exchange, metrics_port, **options):
        if shards < 1 or not 0 <= shard < shards:
            raise CommandError("--shard K --shards N needs 0 <= K < N.")
        if metrics_port is not None:
            serve_process_metrics(metrics_port)
        relay = Relay(exchange=exchange or settings.BROKER_EVENTS_EXCHANGE,
                      batch_size=batch_size, shard=shard, shards=shards)
        try:
            if once:
                self._drain_once(relay)
            else:
                self._run_forever(relay)
        finally:
            relay.close()

    def _drain_once(self, relay):
        total = 0
        while True:
            result = relay.run_batch()
            total += result.published
            if result.error is not None:
                raise CommandError(f"published {total}; broker error: {result.error!r}; "
                                   f"lag: {outbox_lag()}")
            if result.published < relay.batch_size:
                break
        self.stdout.write(f"published {total}; lag: {outbox_lag()}")

    def _run_forever(self, relay):
        with until_sigterm() as stop:
            run_forever(relay, stop=stop, report=self.stderr.write)
