from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from operations.demo_jobs import Supervisor, demo_children, demo_jobs
from operations.facts_consumer import EXCHANGE, QUEUE
from operations.management.commands.seed_demo import DEMO_CLIENT
from operations.worker import until_sigterm


class Command(BaseCommand):
    help = (
        "bin/run-demo's background processes until SIGTERM: the outbox relay and the fact "
        "consumer as child processes (stopped with it), the scanners, the journal "
        "sequencer, the ledger checkpoint and reconciliation on their schedule "
        "(docs/operating.md)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--client",
            default=DEMO_CLIENT,
            help="The service client whose facts the consumer reads (default: seed_demo's).",
        )
        parser.add_argument("--facts-exchange", default=EXCHANGE)
        parser.add_argument("--facts-queue", default=QUEUE)
        parser.add_argument(
            "--checkpoint-every",
            type=float,
            default=60.0,
            help="seconds between two checkpoints (default 60)",
        )
        parser.add_argument(
            "--new-chain",
            action="store_true",
            help="the first checkpoint starts a new chain (a new signing key)",
        )

    def handle(
        self, *args, client, facts_exchange, facts_queue, checkpoint_every, new_chain, **options
    ):
        if checkpoint_every <= 0:
            raise CommandError("--checkpoint-every needs a number of seconds above 0.")
        jobs = demo_jobs(checkpoint_every=checkpoint_every, new_chain=new_chain)
        children = demo_children(
            client=client, facts_exchange=facts_exchange, facts_queue=facts_queue
        )
        supervisor = Supervisor(
            jobs,
            children,
            manage=str(settings.BASE_DIR / "manage.py"),
            report=lambda line: self.stderr.write(line),
        )
        with until_sigterm() as stop:
            supervisor.run(stop)
