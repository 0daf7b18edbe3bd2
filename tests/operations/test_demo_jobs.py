"""bin/run-demo's background processes (operations/demo_jobs.py) when something is wrong: a
broker that does not answer, a job that fails, a child that exits. Each is said once, and
nothing is tried again before its turn. The demo itself runs them in
tests/deploy/test_embedded_demo.py."""

import os

import pytest

from operations import demo_jobs
from operations.demo_jobs import RESTART_SECONDS, Child, Job, Supervisor
from tests.deploy.test_serve import free_port


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def said():
    return []


def supervisor(said, clock, *, jobs=(), children=()) -> Supervisor:
    # `python -c CODE` stands for a `manage.py` command: no Django start per child.
    return Supervisor(list(jobs), list(children), manage="-c", report=said.append, clock=clock)


def test_without_the_broker_the_relay_is_named_as_not_running_once(settings, said):
    settings.BROKER_URL = f"amqp://guest:secret@127.0.0.1:{free_port()}/%2F"
    clock = Clock()
    relay = Child("outbox relay", ["raise SystemExit(0)"])
    running = supervisor(said, clock, children=[relay])

    running.tend_children()
    clock.now += 1
    running.tend_children()  # not its turn: no second attempt
    clock.now += RESTART_SECONDS
    running.tend_children()  # its turn: tried again, still down, not said again

    assert relay.process is None
    assert len(said) == 1
    assert said[0].startswith("demo: outbox relay NOT RUNNING: RabbitMQ (127.0.0.1:")
    assert "secret" not in said[0]


def test_a_failing_job_is_said_once_and_its_recovery_too(settings, said):
    settings.LEDGER_CHECKPOINT_DIR = ""
    clock = Clock()
    job = Job("checkpoint", [("ledger_checkpoint", {"quiet": True})], every=60)
    running = supervisor(said, clock, jobs=[job])

    running.run_job(job)
    running.run_job(job)
    job.commands = [("ledger_public_key", {})]
    running.run_job(job)

    assert said == [
        "demo: checkpoint: ledger_checkpoint failed: LEDGER_CHECKPOINT_DIR is not set: the "
        "directory that keeps the signer's own record of every signed checkpoint; again in "
        "1 min",
        "demo: checkpoint runs again",
    ]


def test_a_child_that_exits_is_started_again_at_its_turn_and_stopped_with_the_demo(
    monkeypatch, said
):
    monkeypatch.setattr(demo_jobs, "broker_problem", lambda: None)
    clock = Clock()
    relay = Child("outbox relay", ["raise SystemExit(3)"])
    running = supervisor(said, clock, children=[relay])

    running.tend_children()
    first = relay.process
    first.wait(timeout=60)
    running.tend_children()
    assert relay.process is None  # not at once
    relay.arguments = ["import time; time.sleep(600)"]
    clock.now += RESTART_SECONDS
    running.tend_children()
    second = relay.process
    running.stop_children()

    assert relay.exits == [3]
    assert said == [
        f"demo: outbox relay running (pid {first.pid})",
        f"demo: outbox relay exited with status 3: not running; starting it again in "
        f"{RESTART_SECONDS:.0f} s",
        f"demo: outbox relay running (pid {second.pid})",
    ]
    assert second.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(second.pid, 0)
