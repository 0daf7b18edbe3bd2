"""Faults to inject in tests: a TCP proxy that can cut or blackhole its connections,
killing a process's database connection from outside, a Redis of a test's own to stop, and a
port where nothing listens."""

import asyncio
import contextlib
import shutil
import socket
import subprocess
import threading
import time

import psycopg
from django.db import connection


class TcpProxy:
    """Forwards 127.0.0.1:<port> to `target` on an asyncio loop in its own thread.

    `cut()` resets every open connection (a broker restart, a dropped NAT entry);
    `blackhole()` keeps them open but drops whatever either side sends, and lets new ones
    connect and hang (a silent partition), until `heal()`.
    """

    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.blackholed = False
        self.streams: set[asyncio.StreamWriter] = set()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = self._call(asyncio.start_server(self._accept, "127.0.0.1", 0))
        self.port = self.server.sockets[0].getsockname()[1]

    def url(self, user: str = "guest", password: str = "guest") -> str:
        return f"amqp://{user}:{password}@127.0.0.1:{self.port}/%2F"

    def _call(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(10)

    async def _accept(self, client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.close()
            return
        self.streams |= {client_writer, server_writer}
        await asyncio.gather(self._pipe(client_reader, server_writer),
                             self._pipe(server_reader, client_writer))

    async def _pipe(self, reader, writer):
        try:
            while data := await reader.read(65536):
                if self.blackholed:
                    continue  # lost on the way, as in a partition; nothing is closed
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            self.streams.discard(writer)
            writer.close()

    def cut(self) -> None:
        async def reset_all():
            for writer in list(self.streams):
                writer.transport.abort()
        self._call(reset_all())

    def blackhole(self) -> None:
        self.blackholed = True

    def heal(self) -> None:
        self.blackholed = False

    def close(self) -> None:
        async def shut():
            self.server.close()
            for writer in list(self.streams):
                writer.transport.abort()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        self._call(shut())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


def owner_connection() -> psycopg.Connection:
    """A connection of its own to the server (not pooled), to act from outside."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params["dbname"] = "postgres"
    return psycopg.connect(**params, autocommit=True)


# How long terminate_backends waits for each backend to be gone.
TERMINATE_WAIT_MS = 30_000


def terminate_backends(database: str, *, sparing: tuple[int, ...] = ()) -> int:
    """pg_terminate_backend of every connection to `database` but `sparing`; how many.

    It returns once each backend has exited (PostgreSQL's own wait, bounded): a terminated
    backend only gets the signal, and on a loaded machine one still running would answer its
    client's next query, then die in the middle of the one after.
    """
    with owner_connection() as owner:
        return owner.execute(
            "SELECT count(pg_terminate_backend(pid, %s)) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid() AND NOT pid = ANY(%s)",
            [TERMINATE_WAIT_MS, database, list(sparing)],
        ).fetchone()[0]


def terminate_this_threads_backend() -> None:
    """Kill the calling thread's own database connection, as an administrator or a failover
    would: its next query fails with OperationalError."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with owner_connection() as owner, contextlib.suppress(psycopg.Error):
        owner.execute("SELECT pg_terminate_backend(%s, %s)", [pid, TERMINATE_WAIT_MS])


# Ports the fault tests may take for servers of their own (a Redis to stop, a refusing address).
FAULT_PORTS = range(7220, 7240)


def free_port() -> int:
    """A port of FAULT_PORTS where nothing listens now (a connection to it is refused)."""
    for port in FAULT_PORTS:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return port
    raise RuntimeError(f"every port of {FAULT_PORTS} is taken")


class RedisServer:
    """A redis-server of the test's own on a free fault port, without persistence; `stop()`
    kills it (what an application sees when Redis dies: its connections reset, new ones
    refused)."""

    def __init__(self):
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not installed")
        self.port = free_port()
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", "/tmp"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not self.answers():
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def answers(self) -> bool:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", self.port)) == 0

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
