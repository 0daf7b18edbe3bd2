"""common/embedded_postgres.py on a cluster of its own (a scratch folder, never the checkout's):
made, reused, recovered after a crash, stopped."""

import os
import signal
import time

import psutil
import psycopg
import pytest

from common import embedded_postgres


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.setattr(embedded_postgres, "ROOT", tmp_path / ".pgdata")
    yield tmp_path / ".pgdata" / "demo"
    embedded_postgres.stop("demo")


def query(cluster, sql):
    with psycopg.connect(cluster.url(), autocommit=True) as conn:
        return conn.execute(sql).fetchall() if sql.startswith("SELECT") else conn.execute(sql)


def test_a_cluster_is_made_reused_recovered_after_a_crash_and_stopped(scratch):
    first = embedded_postgres.start("demo")
    assert first.started and first.socket_dir == scratch  # the socket in its own folder
    assert query(first, "SELECT current_setting('listen_addresses')") == [("",)]  # no TCP
    query(first, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)")
    again = embedded_postgres.start("demo")
    assert not again.started

    # A crash, and the machine restarted: the postmaster is gone and its pid now names
    # another program (this test's process).
    postmaster = psutil.Process(int((scratch / "postmaster.pid").read_text().split()[0]))
    children = postmaster.children()
    os.kill(postmaster.pid, signal.SIGKILL)
    psutil.wait_procs([postmaster, *children], timeout=30)
    pid_file = (scratch / "postmaster.pid").read_text().split("\n")
    (scratch / "postmaster.pid").write_text("\n".join([str(os.getpid()), *pid_file[1:]]))
    assert not embedded_postgres.running("demo")

    recovered = embedded_postgres.start("demo")
    assert recovered.started
    assert query(recovered, "SELECT n FROM kept") == [(7,)]

    assert embedded_postgres.stop("demo")
    deadline = time.monotonic() + 30
    while embedded_postgres.running("demo") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not embedded_postgres.running("demo")
    assert not (scratch / "postmaster.pid").exists()
    assert embedded_postgres.stop("demo") is False


def test_only_the_checkout_s_clusters_have_names():
    with pytest.raises(ValueError, match="no embedded cluster 'prod'"):
        embedded_postgres.data_dir("prod")
