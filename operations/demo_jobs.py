"""What bin/run-demo runs beside its server, so the demo shows what production would: the
relay and the fact consumer as child processes, and the cron jobs of docs/operating.md, run in
this process on their schedule (the checkpoint every minute instead of every 10, reconciliation
every 10 minutes instead of hourly: a demo is watched for minutes, not hours).

A job that fails is reported once (and again only when its failure changes) and runs at its
next turn; a child that exits, or that cannot start because the broker does not answer, is
named as not running and tried again a minute later: nothing restarts in a tight loop.
"""

import contextlib
import ctypes
import io
import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from operations import broker
from operations.worker import DATABASE_ERRORS

# Seconds between two attempts to start a child that is not running.
RESTART_SECONDS = 60.0
# Seconds at most between two looks at the children (one may have exited).
TEND_SECONDS = 5.0
# Seconds a child has to finish after SIGTERM before it is killed.
STOP_SECONDS = 20.0
PR_SET_PDEATHSIG = 1


@dataclass
class Job:
    """A cron job: `commands` (management command and options, in order) every `every`
    seconds, the first run `first` seconds after the start."""

    name: str
    commands: list[tuple[str, dict]]
    every: float
    first: float = 0.0
    due: float = 0.0
    failure: str | None = None


@dataclass
class Child:
    """A long-running process: `manage.py` with `arguments`, needing the broker."""

    name: str
    arguments: list[str]
    process: subprocess.Popen | None = None
    retry_at: float = 0.0
    reported: str | None = None
    exits: list[int] = field(default_factory=list)


def demo_jobs(*, checkpoint_every: float, new_chain: bool) -> list[Job]:
    minute = 60.0
    return [
        # A new journal entry gets its log position first; the checkpoint signs up to it.
        Job(
            "journal sequencer and checkpoint",
            [
                ("sequence_journal", {}),
                ("ledger_checkpoint", {"quiet": True, "new_chain": new_chain}),
            ],
            every=checkpoint_every,
        ),
        Job("lease scanner", [("scan_leases", {"quiet": True})], every=minute),
        Job("expiry scanner", [("expire_coupons", {"quiet": True})], every=15 * minute),
        Job(
            "final-payment reminders",
            [("scan_final_payment_windows", {"quiet": True})],
            every=15 * minute,
        ),
        Job(
            "presale expiry warnings", [("scan_presale_expiry", {"quiet": True})], every=60 * minute
        ),
        # After the relay's first minute: an event the relay has not published yet would be a
        # finding of the demo's own making.
        Job("reconciliation", [("reconcile", {"quiet": True})], every=10 * minute, first=minute),
    ]


def demo_children(*, client: str, facts_exchange: str, facts_queue: str) -> list[Child]:
    return [
        Child("outbox relay", ["relay_outbox", "--exchange", settings.BROKER_EVENTS_EXCHANGE]),
        Child(
            "fact consumer",
            [
                "consume_facts",
                "--client",
                client,
                "--exchange",
                facts_exchange,
                "--queue",
                facts_queue,
            ],
        ),
    ]


def broker_problem() -> str | None:
    """Why the broker cannot be used now, or None when it answers. pika's own lines about
    the failed attempt are left out: the one line that says what is not running is enough."""
    pika_log = logging.getLogger("pika")
    level = pika_log.level
    pika_log.setLevel(logging.CRITICAL)
    try:
        broker.connect(settings.BROKER_URL).close()
    except (*broker.BROKER_ERRORS, OSError) as error:
        return f"{error!r}"
    finally:
        pika_log.setLevel(level)
    return None


def _die_with_parent() -> None:
    """A child gets SIGTERM when this process dies, even by SIGKILL (Linux): no relay is left
    publishing for a demo that is gone."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Supervisor:
    def __init__(
        self,
        jobs: list[Job],
        children: list[Child],
        *,
        manage: str,
        report: Callable[[str], object],
        clock: Callable[[], float] = time.monotonic,
    ):
        self.jobs, self.children, self.manage = jobs, children, manage
        self.report, self.clock = report, clock

    def run(self, stop: threading.Event) -> None:
        start = self.clock()
        self.report(
            "demo: cron jobs: "
            + "; ".join(f"{job.name} every {seconds(job.every)}" for job in self.jobs)
        )
        for job in self.jobs:
            job.due = start + job.first
        try:
            while not stop.is_set():
                self.tend_children()
                for job in self.jobs:
                    if stop.is_set():
                        break
                    if self.clock() >= job.due:
                        self.run_job(job)
                        job.due = self.clock() + job.every
                next_due = min(job.due for job in self.jobs) - self.clock()
                stop.wait(min(max(next_due, 0.1), TEND_SECONDS))
        finally:
            self.stop_children()

    def tend_children(self) -> None:
        for child in self.children:
            if child.process is not None and child.process.poll() is not None:
                child.exits.append(child.process.returncode)
                self.say(
                    child,
                    f"{child.name} exited with status {child.process.returncode}: "
                    f"not running; starting it again in {RESTART_SECONDS:.0f} s",
                )
                child.process, child.retry_at = None, self.clock() + RESTART_SECONDS
        waiting = [
            child
            for child in self.children
            if child.process is None and self.clock() >= child.retry_at
        ]
        if not waiting:
            return
        problem = broker_problem()
        for child in waiting:
            if problem is not None:
                child.retry_at = self.clock() + RESTART_SECONDS
                self.say(
                    child,
                    f"{child.name} NOT RUNNING: RabbitMQ ({broker_hosts()}) does "
                    f"not answer ({problem}); trying again every "
                    f"{RESTART_SECONDS:.0f} s",
                )
                continue
            child.process = subprocess.Popen(
                [sys.executable, self.manage, *child.arguments],
                stdin=subprocess.DEVNULL,
                preexec_fn=_die_with_parent,
            )
            self.say(child, f"{child.name} running (pid {child.process.pid})")

    def say(self, child: Child, line: str) -> None:
        if line != child.reported:
            child.reported = line
            self.report(f"demo: {line}")

    def run_job(self, job: Job) -> None:
        failure = None
        for command, options in job.commands:
            out, err = io.StringIO(), io.StringIO()
            try:
                call_command(command, stdout=out, stderr=err, **options)
            except SystemExit as exit_:
                failure = f"{command} exited with status {exit_.code}: {err.getvalue().strip()}"
            except CommandError as error:
                failure = f"{command} failed: {error}"
            except DATABASE_ERRORS as error:
                # The next run opens a new connection.
                with contextlib.suppress(*DATABASE_ERRORS):
                    connection.close()
                failure = f"{command}: database error {error!r}"
            if failure is not None:
                break
        if failure == job.failure:
            return
        if failure is not None:
            self.report(f"demo: {job.name}: {failure}; again in {seconds(job.every)}")
        elif job.failure is not None:
            self.report(f"demo: {job.name} runs again")
        job.failure = failure
        if failure is None:
            # A new chain (the demo's key is new) is started once.
            for _, options in job.commands:
                options.pop("new_chain", None)

    def stop_children(self) -> None:
        running = [child.process for child in self.children if child.process is not None]
        for process in running:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        deadline = self.clock() + STOP_SECONDS
        for process in running:
            try:
                process.wait(timeout=max(0.1, deadline - self.clock()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def broker_hosts() -> str:
    """BROKER_URL's nodes without their passwords."""
    return ", ".join(url.rsplit("@", 1)[-1] for url in broker.node_urls(settings.BROKER_URL))


def seconds(every: float) -> str:
    return f"{every / 60:g} min" if every >= 60 else f"{every:g} s"
