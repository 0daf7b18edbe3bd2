
from django.core.management.base import BaseCommand, CommandError

from coupons.models import ServiceClient
from operations.facts_consumer import EXCHANGE, QUEUE, FactConsumer, run_forever
from operations.metrics import serve_process_metrics
from operations.worker import until_sigterm


class Command(BaseCommand):
    help = ("Read order / payment / refund facts from RabbitMQ (BROKER_URL; exchange 'facts', "
            "queue 'coupons.facts') into the inbox of POST /api/v1/events, as one service "
            "client; poison messages go to '<queue>.dead' with the reason in headers.")

    def add_arguments(self, parser):
        parser.add_argument("--client", required=True,
                            help="The registered service client whose messages this queue "
                                 "carries (its fact-type grants and de-dup scope apply).")
        parser.add_argument("--once", action="store_true",
                            help="Consume until the queue is idle, then exit (for cron and "
                                 "tests); exit 1 on a broker error or a message left to retry.")
        parser.add_argument("--exchange", default=EXCHANGE)
        parser.add_argument("--queue", default=QUEUE)
        parser.add_argument("--metrics-port", type=int, default=None,
                            help="Serve this process's counters on 127.0.0.1:PORT/metrics.")

    def handle(self, *args, client, once, exchange, queue, metrics_port, **options):
        sender = ServiceClient.objects.filter(name=client, is_active=True).first()
        if sender is None:
            raise CommandError(f"No active service client named {client!r} "
                               "(manage.py create_service_client).")
        if metrics_port is not None:
            serve_process_metrics(metrics_port)
        consumer = FactConsumer(client=sender, exchange=exchange, queue=queue)
        try:
            if once:
                self._once(consumer)
            else:
                self._forever(consumer)
        finally:
            consumer.close()

    def _once(self, consumer):
        report = consumer.run(once=True)
        line = f"consumed: {report.summary()}"
        if report.error is not None:
            raise CommandError(f"{line}; broker error: {report.error!r}")
        if report.counts["RETRY"]:
            raise CommandError(f"{line}; a message was put back to retry (database down?)")
        self.stdout.write(line)

    def _forever(self, consumer):
        with until_sigterm() as stop:
            run_forever(consumer, stop=stop, report=self.stderr.write)
