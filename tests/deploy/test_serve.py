"""bin/serve: gunicorn with the production settings answers the probes and static files."""

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

from operations.db_roles import APP_PASSWORD_ENV, APP_ROLE
from tests.api.test_production_defaults import PRODUCTION_ENV
from tests.timeline.i18n.catalogue import NOT_COPIED

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 120
PUBLIC_HOST = PRODUCTION_ENV["DJANGO_ALLOWED_HOSTS"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str, **headers) -> tuple[int, dict, bytes]:
    """Status, headers and body; a redirect is returned, not followed."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    try:
        request = urllib.request.Request(url, headers=headers)
        with urllib.request.build_opener(NoRedirect).open(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def url_for(user: str, database: str, password: str = "") -> str:
    settings = connection.settings_dict
    login = f"{user}:{password}" if password else user
    host = quote(settings["HOST"], safe="")
    return f"postgres://{login}@{host}:{settings['PORT'] or 5432}/{database}"


@contextmanager
def serving(tmp_path, root=ROOT, **environment):
    """`root`'s bin/serve on a free port with a server's environment (plus `environment`: the
    database's URLs), migrated by the release step first (SERVE_MIGRATE=1); yields its base
    URL."""
    if shutil.which("bash") is None:
        pytest.skip("bin/serve is a bash script and bash is not installed")
    try:
        import gunicorn  # noqa: F401
    except ImportError:
        pytest.skip("gunicorn is not installed: pip install -e .")
    port = free_port()
    # Not tmp_path: under xdist its path is too long for the control socket's (bin/serve).
    short_tmp = tempfile.mkdtemp(prefix="serve-", dir="/tmp")
    env = {
        "PATH": os.environ.get("PATH", ""), **PRODUCTION_ENV,
        "PYTHON": sys.executable, "PORT": str(port), "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "1", "GUNICORN_THREADS": "2", "SERVE_MIGRATE": "1",
        "TMPDIR": short_tmp, **environment,
    }
    log = (tmp_path / "serve.log").open("w+")
    server = subprocess.Popen([str(root / "bin" / "serve")], cwd=tmp_path, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and server.poll() is None:
            try:
                get(f"{base}/healthz")
                break
            except OSError:
                time.sleep(0.5)
        else:
            log.seek(0)
            pytest.fail(f"bin/serve did not answer within {START_SECONDS}s:\n{log.read()}")
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()
        shutil.rmtree(short_tmp, ignore_errors=True)


@pytest.fixture
def roles(fresh_database):
    """A fresh database as bin/serve runs on it: the owner migrates, coupon_app serves."""
    # The suite's setup_db_roles sets coupon_app's password from config/test_settings.py; the
    # role is the cluster's, so bin/serve's setup_db_roles must set the same one.
    password = os.environ[APP_PASSWORD_ENV]
    return {"MIGRATION_DATABASE_URL": url_for(connection.settings_dict["USER"], fresh_database),
            APP_PASSWORD_ENV: password,
            "DATABASE_URL": url_for(APP_ROLE, fresh_database, password)}


@pytest.fixture
def served(tmp_path, roles):
    with serving(tmp_path, **roles) as base:
        yield base


def test_bin_serve_answers_the_probes_over_plain_http_and_serves_static_files(served):
    status, headers, body = get(f"{served}/healthz")
    assert (status, body) == (200, b'{"status": "ok"}')
    # Migrated at start: ready.
    assert get(f"{served}/readyz")[:3:2] == (200, b'{"status": "ok"}')
    # Everything else keeps the production guards: a bare address is not an allowed host,
    assert get(f"{served}/")[0] == 400
    # and plain HTTP to the public name redirects to HTTPS.
    status, headers, _ = get(f"{served}/", Host=PUBLIC_HOST)
    assert (status, headers["Location"]) == (301, f"https://{PUBLIC_HOST}/")
    # Through the TLS proxy, WhiteNoise serves the admin's collected CSS from the process.
    status, headers, _ = get(f"{served}/static/admin/css/base.css", Host=PUBLIC_HOST,
                             **{"X-Forwarded-Proto": "https"})
    assert status == 200
    assert headers["Content-Type"].startswith("text/css")
    # A long request line (every id filter at its longest, percent-encoded, and more) reaches
    # the API, which answers JSON; gunicorn's default 4094 answered its own HTML 414.
    emoji = "%F0%9F%98%80" * 64  # 64 characters of 4 bytes: 768 characters on the line
    query = "&".join(f"{name}={emoji}" for name in ("user_id", "order_id") * 4)
    status, headers, body = get(f"{served}/api/v1/coupons?{query}", Host=PUBLIC_HOST,
                                **{"X-Forwarded-Proto": "https"})
    assert len(query) > 6000
    assert (status, headers["Content-Type"]) == (401, "application/json"), body


def test_a_client_pausing_past_gunicorn_s_default_keep_alive_posts_on_the_same_socket(served):
    # gunicorn's default keep-alive is 2 s: a pool reusing a connection after a longer pause
    # sent its POST on a socket the server had closed. bin/serve keeps it for 75 s.
    host, port = served.removeprefix("http://").split(":")
    client = http.client.HTTPConnection(host, int(port), timeout=10)
    client.request("GET", "/healthz")
    assert client.getresponse().read() == b'{"status": "ok"}'
    first_socket = client.sock

    time.sleep(3)
    client.request("POST", "/api/v1/coupons/1/lock", body=b"{}",
                   headers={"Content-Type": "application/json", "Idempotency-Key": "k-1",
                            "Host": PUBLIC_HOST, "X-Forwarded-Proto": "https"})
    answer = client.getresponse()

    assert answer.status == 401  # answered: no key was sent
    answer.read()
    assert client.sock is first_socket  # on the connection the pool kept, not a new one
    client.close()


def test_bin_serve_sums_every_workers_counters_at_metrics(tmp_path, roles):
    token = "t" * 40
    through_proxy = {"Host": PUBLIC_HOST, "X-Forwarded-Proto": "https"}
    with serving(tmp_path, **roles, GUNICORN_WORKERS="2", METRICS_TOKEN=token,
                 PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "metrics")) as base:
        for _ in range(10):
            assert get(f"{base}/healthz")[0] == 200
        assert get(f"{base}/metrics", **through_proxy)[0] == 401
        status, _, body = get(f"{base}/metrics", Authorization=f"Bearer {token}",
                              **through_proxy)

    assert status == 200
    counted = next(line for line in body.decode().splitlines()
                   if line.startswith("django_http_requests_before_middlewares_total "))
    # Ten probes (and the waits for the start) whichever worker answered each.
    assert float(counted.split()[1]) >= 12
    assert b"coupons_outbox_unpublished 0.0" in body


def release(*args: str, cwd: Path, root: Path = ROOT, **environment) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(root / "bin" / "release"), *args], cwd=cwd, timeout=START_SECONDS,
        capture_output=True, text=True, env={
            "PATH": os.environ.get("PATH", ""), **PRODUCTION_ENV, "PYTHON": sys.executable,
            **environment})


def test_bin_serve_does_not_migrate_and_is_not_ready_until_the_release_step_ran(tmp_path,
                                                                               roles):
    # The assets of a release (any host's: no database), not its migrations.
    assert release("--assets-only", cwd=tmp_path).returncode == 0
    with serving(tmp_path, **roles, SERVE_MIGRATE="0") as base:
        status, _, body = get(f"{base}/readyz")
        assert status == 503  # the log says why: migrations not applied

        released = release(cwd=tmp_path, **roles)

        assert released.returncode == 0, released.stderr
        assert get(f"{base}/readyz")[0] == 200


def test_each_instance_has_its_own_control_socket_and_metrics_directory(tmp_path, roles):
    short = Path(tempfile.mkdtemp(prefix="instance-", dir="/tmp"))
    try:
        with serving(tmp_path, **roles, TMPDIR=str(short)) as base:
            port = base.rsplit(":", 1)[1]
            run_dir = short / f"coupon-console-127_0_0_1_{port}"
            assert (run_dir / "gunicorn.ctl").is_socket()
            assert any((run_dir / "metrics").glob("*.db"))  # the worker's counters
    finally:
        shutil.rmtree(short, ignore_errors=True)


def test_bin_serve_refuses_a_run_directory_too_long_for_its_control_socket(tmp_path):
    refused = subprocess.run(
        [str(ROOT / "bin" / "serve")], cwd=tmp_path, capture_output=True, text=True,
        timeout=START_SECONDS, env={"PATH": os.environ.get("PATH", ""), **PRODUCTION_ENV,
                                    "PYTHON": sys.executable, "SERVE_RUN_DIR": "/tmp/" + "x" * 90})

    assert refused.returncode == 1
    assert "too long for the control socket's path" in refused.stderr


def test_bin_serve_compiles_the_catalogue_and_answers_in_chinese(tmp_path, roles):
    """From a tree as it is committed (no compiled .mo), bin/serve answers the API and the
    console in the language the request asks for."""
    if shutil.which("msgfmt") is None:
        pytest.skip("gettext's msgfmt is not installed (apt-get install gettext)")
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=NOT_COPIED)
    mo = tree / "locale/zh_Hans/LC_MESSAGES/django.mo"
    assert not mo.exists()
    database = {"DATABASE_URL": roles["MIGRATION_DATABASE_URL"]}
    with serving(tmp_path, root=tree, **roles) as base:
        assert mo.exists()
        made = subprocess.run(
            [sys.executable, "manage.py", "create_service_client", "support-tool",
             "--allow", "read"], cwd=tree, capture_output=True, text=True, check=True,
            env={"PATH": os.environ.get("PATH", ""), **PRODUCTION_ENV, **database})
        key = made.stdout.strip().splitlines()[-1]
        chinese = {"Host": PUBLIC_HOST, "X-Forwarded-Proto": "https",
                   "Accept-Language": "zh-Hans"}

        status, headers, body = get(f"{base}/api/v1/coupons/999999",
                                    Authorization=f"Token {key}", **chinese)

        assert (status, headers["Content-Language"]) == (404, "zh-hans")
        assert "优惠券不存在。" in body.decode()
        status, _, page = get(f"{base}/login/", **chinese)
        assert status == 200 and "登录" in page.decode() and 'lang="zh-hans"' in page.decode()


def test_bin_serve_refuses_to_start_without_the_assets_of_the_sources_as_they_are(tmp_path):
    """The static files and the catalogue are built by bin/release; bin/serve only checks, and
    a tree never released, or changed since, is refused before gunicorn starts."""
    if shutil.which("msgfmt") is None:
        pytest.skip("gettext's msgfmt is not installed (apt-get install gettext)")
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=lambda path, names: NOT_COPIED(path, names) | (
        {".assets-fingerprint"} & set(names)))

    def serve():
        return subprocess.run(
            [str(tree / "bin" / "serve")], cwd=tmp_path, capture_output=True, text=True,
            timeout=START_SECONDS, env={"PATH": os.environ.get("PATH", ""), **PRODUCTION_ENV,
                                        "PYTHON": sys.executable,
                                        "SERVE_RUN_DIR": tempfile.mkdtemp(dir="/tmp")})

    never_released = serve()
    built = release("--assets-only", cwd=tmp_path, root=tree)
    source = tree / "timeline/static/timeline/console.js"
    source.write_text(source.read_text() + "\n")
    changed_since = serve()

    assert never_released.returncode == 1
    assert "are not built: run bin/release" in never_released.stderr
    assert built.returncode == 0, built.stderr
    assert (tree / "staticfiles/timeline/console.js").exists()
    assert (tree / "locale/zh_Hans/LC_MESSAGES/django.mo").exists()
    assert changed_since.returncode == 1
    assert "changed since bin/release built them" in changed_since.stderr
