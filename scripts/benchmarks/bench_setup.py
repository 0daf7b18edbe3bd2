"""The benchmark scripts' shared set-up: a database of their own, Django, a scratch broker
exchange, a started server's readiness.

Not a benchmark itself; the scripts next to it import it (a script's own directory is first on
sys.path when it runs).
"""

import http.client
import os
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]


# --- a database of our own ---------------------------------------------------------------


def server_admin_url(url: str) -> str:
    """The same server, its `postgres` maintenance database."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/postgres"))


def create_postgres_database(url: str, name: str) -> str:
    """(Re)create database `name` on the server of `url`; answers its URL."""
    import psycopg
    from psycopg import sql

    if name == urlsplit(url).path.lstrip("/") or name in {"postgres", "template0", "template1"}:
        sys.exit(f"refusing to use {name!r}: the benchmark needs a database of its own")
    with psycopg.connect(server_admin_url(url), autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def drop_postgres_database(url: str, name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(server_admin_url(url), autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))


@contextmanager
def throwaway_database(name: str, setup=None):
    """Run a benchmark in a database of its own, never the one DATABASE_URL names.

    Database `name` on DATABASE_URL's server (unset: the checkout's embedded `test` cluster,
    common/embedded_postgres.py), made, set up with `setup(url)` and dropped afterwards.
    DATABASE_URL then names the throwaway database.
    """
    setup = setup or setup_django
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        sys.path.insert(0, str(ROOT))
        from common import embedded_postgres

        url = embedded_postgres.start("test").url()
    bench_url = create_postgres_database(url, name)
    try:
        setup(bench_url)
        yield
    finally:
        from django.db import connections

        connections.close_all()
        drop_postgres_database(url, name)


def setup_django(database_url: str, *, settings_module: str | None = None) -> None:
    """Django on `database_url`, migrated; config.settings unless `settings_module`."""
    os.environ["DATABASE_URL"] = database_url
    if settings_module:
        os.environ["DJANGO_SETTINGS_MODULE"] = settings_module
    else:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DJANGO_DEBUG"] = "0"  # DEBUG keeps every query in memory: not what we measure
    # No connection pool: the setup and parallel runs fork, and a pool's open connections
    # would cross the fork (connections.close_all() only hands them back to the pool).
    os.environ["DB_POOL_MAX_SIZE"] = "0"
    # The settings have no default secrets; a throwaway database needs no real ones.
    os.environ.setdefault("DJANGO_SECRET_KEY", "benchmark-only-secret-key-of-32-bytes-or-more")
    os.environ.setdefault("IDEMPOTENCY_SEAL_SECRET", "benchmark-only-idempotency-seal-secret-32b")
    if not os.environ.get("LEASE_TOKEN_SECRETS"):
        os.environ.setdefault("LEASE_TOKEN_SECRET", "benchmark-only-lease-token-secret-of-32-bytes")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


@contextmanager
def client_test_databases():
    """Django's test databases (config.test_settings unless DJANGO_SETTINGS_MODULE), made and
    torn down around the block, ready for the test client; for the page benchmarks."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
    import django

    django.setup()
    from django.conf import settings
    from django.test.utils import setup_databases, teardown_databases

    # Not setup_test_environment(): it instruments every template render (a copy of each
    # context for assertions), which would be most of what the page benchmarks measure.
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    # A fast hasher: seed_demo's users get passwords while setting up, which is not measured.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    databases = setup_databases(verbosity=0, interactive=False)
    try:
        yield
    finally:
        teardown_databases(databases, verbosity=0)


# --- a scratch exchange on the broker ----------------------------------------------------


@contextmanager
def scratch_exchange(prefix: str, *, extra_queues: tuple[str, ...] = ()):
    """A durable topic exchange `<prefix>-<random>` and a queue of the same name bound to it
    with "#", on settings.BROKER_URL; yields (channel, name) and deletes both afterwards, with
    the queues `name + suffix` for each suffix in `extra_queues` (ones the code under test made).
    """
    import pika
    from django.conf import settings

    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    broker = pika.BlockingConnection(pika.URLParameters(settings.BROKER_URL))
    channel = broker.channel()
    channel.exchange_declare(name, exchange_type="topic", durable=True)
    channel.queue_declare(name, durable=True)
    channel.queue_bind(name, name, routing_key="#")
    try:
        yield channel, name
    finally:
        channel.queue_delete(name)
        for suffix in extra_queues:
            channel.queue_delete(f"{name}{suffix}")
        channel.exchange_delete(name)
        broker.close()


def load_average() -> str:
    return " ".join(f"{load:.1f}" for load in os.getloadavg())


# --- a server started for the run --------------------------------------------------------


def wait_ready(server, port: int, *, seconds: float = 120, log=None) -> None:
    """Until `server` (a Popen) answers /readyz on `port` with 200, as a load balancer asks;
    exits the script if it stops first or takes longer than `seconds`, with the end of `log`
    (the file its output goes to) when given."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and server.poll() is None:
        try:
            probe = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            probe.request("GET", "/readyz", headers={"X-Forwarded-Proto": "https"})
            if probe.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    why = (f"exited with {server.returncode}" if server.poll() is not None
           else f"was not ready in {seconds:g} s")
    if log is not None:
        log.seek(0)
        why += f":\n{log.read()[-3000:]}"
    sys.exit(f"the server {why}")
