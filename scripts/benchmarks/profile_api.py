"""Profile LOCK and REDEEM over the API as a server runs them (the lean API path).

Rerun (PostgreSQL; under a minute):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/profile_api.py --out docs/performance/after

Each request goes through Django's WSGI handler, the object gunicorn calls (config.wsgi), with
the settings bin/serve gives it: DEBUG off, pooled connections, metrics in multiprocess mode,
HTTPS behind the proxy, a service client's `Authorization: Token`. The script makes and drops
a database of its own. After --warm cycles it profiles --cycles LOCK + REDEEM cycles with
pyinstrument and writes, per command, `<out>-lock.svg` and `<out>-redeem.svg` (flame graphs:
flame and call-tree views; open in a browser), and prints the top of each call tree, the
statements per command and the wall time per command.
"""

import argparse
import io
import json
import os
import sys
import tempfile
import time
import uuid
from decimal import Decimal
from pathlib import Path

from bench_setup import setup_django, throwaway_database

ORDER_AMOUNT = "300.00"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=300, help="profiled LOCK + REDEEM cycles")
    parser.add_argument("--warm", type=int, default=30, help="cycles before profiling")
    parser.add_argument("--plain", type=int, default=400,
                        help="unprofiled cycles for the CPU figures (half HTTP, half services)")
    parser.add_argument("--calls", type=int, default=40,
                        help="cycles whose function calls are counted (half HTTP, half services)")
    parser.add_argument("--top", type=int, default=30, help="functions printed per command")
    parser.add_argument("--out", default="", help="path prefix of the SVG flame graphs")
    parser.add_argument("--tree", default="", help="path prefix of the text call trees")
    parser.add_argument("--db-name", default="coupon_profile_api",
                        help="throwaway PostgreSQL database, created and dropped by this script")
    return parser.parse_args()


def setup_served(database_url: str) -> None:
    """Django as bin/serve runs it (pooled connections, multiprocess metrics), migrated."""
    os.environ.update({"DJANGO_ALLOWED_HOSTS": "127.0.0.1", "DJANGO_BEHIND_TLS_PROXY": "1",
                       "TRUSTED_PROXY_ADDRESSES": "127.0.0.1",
                       "API_THROTTLE_SERVICE_CLIENT": "1000000/min",
                       "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="coupon-profile-")})
    setup_django(database_url)
    from django.db import connections

    connections.close_all()
    # setup_django turns the pool off for the benchmarks that fork; one process may keep it.
    connections["default"].settings_dict["OPTIONS"]["pool"] = {"min_size": 1, "max_size": 2}


class Caller:
    """Calls the WSGI application as gunicorn does, one request at a time."""

    def __init__(self, api_key: str):
        from django.core.handlers.wsgi import WSGIHandler

        self.app = WSGIHandler()
        self.api_key = api_key

    def post(self, path: str, body: dict) -> dict:
        data = json.dumps(body).encode()
        environ = {
            "REQUEST_METHOD": "POST", "PATH_INFO": f"/api/v1/coupons/{path}", "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1", "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(data)), "HTTP_HOST": "127.0.0.1:8000",
            "HTTP_AUTHORIZATION": f"Token {self.api_key}", "HTTP_X_FORWARDED_PROTO": "https",
            "HTTP_IDEMPOTENCY_KEY": uuid.uuid4().hex, "wsgi.input": io.BytesIO(data),
            "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr, "wsgi.multithread": True,
            "wsgi.multiprocess": True, "wsgi.run_once": False, "wsgi.version": (1, 0),
        }
        status = []
        chunks = self.app(environ, lambda given, headers: status.append(given))
        answer = b"".join(chunks)
        chunks.close()
        if not status[0].startswith("200"):
            sys.exit(f"{path}: {status[0]} {answer[:500]!r}")
        return json.loads(answer)


def cycle(caller: Caller, coupon_id: int, profiles=None) -> None:
    order = f"profile-{coupon_id}"
    with profiles["lock"] if profiles else _nothing():
        locked = caller.post(f"{coupon_id}/lock", {"order_id": order, "user_id": "profile",
                                                   "order_amount": ORDER_AMOUNT})
    with profiles["redeem"] if profiles else _nothing():
        caller.post(f"{coupon_id}/redeem", {"order_id": order, "lock_token": locked["lock_token"],
                                            "expected_version": locked["state_version"],
                                            "payment_id": f"pay-{coupon_id}"})


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Resumable:
    """One pyinstrument profiler started and stopped around each request of one command."""

    def __init__(self):
        from pyinstrument import Profiler

        self.profiler = Profiler(interval=0.0005)
        self.seconds = self.cpu_seconds = 0.0

    def __enter__(self):
        self.started, self.cpu_started = time.perf_counter(), time.process_time()
        self.profiler.start()

    def __exit__(self, *exc):
        self.profiler.stop()
        self.seconds += time.perf_counter() - self.started
        self.cpu_seconds += time.process_time() - self.cpu_started
        return False


def cpu_per_command(caller: Caller, coupon_ids) -> dict:
    """CPU ms per LOCK and per REDEEM, without the profiler: over the WSGI handler, and the
    same commands through the services in-process as run_command calls them (claim, command,
    answer), so the difference is what the HTTP layer costs."""
    from coupons.services import LeaseProof, coupon_lock, coupon_redeem
    from coupons.write.idempotency import run_once

    half = len(coupon_ids) // 2
    spent = {"http": [0.0, 0.0], "services": [0.0, 0.0]}
    for coupon_id in coupon_ids[:half]:
        order = f"plain-{coupon_id}"
        begun = time.process_time()
        locked = caller.post(f"{coupon_id}/lock", {"order_id": order, "user_id": "profile",
                                                   "order_amount": ORDER_AMOUNT})
        middle = time.process_time()
        caller.post(f"{coupon_id}/redeem", {"order_id": order, "lock_token": locked["lock_token"],
                                            "expected_version": locked["state_version"],
                                            "payment_id": f"pay-{coupon_id}"})
        spent["http"][0] += middle - begun
        spent["http"][1] += time.process_time() - middle

    def keyed(command):
        """The command's result; its payload is the stored answer, as over the API."""
        key, made = uuid.uuid4().hex, []
        run_once(scope="profile", key=key, request_hash=key, actor="profile",
                 command=lambda ctx: made.append(command(ctx)) or made[-1].payload())
        return made[-1]

    for coupon_id in coupon_ids[half:]:
        order = f"plain-{coupon_id}"
        begun = time.process_time()
        locked = keyed(lambda ctx, cid=coupon_id, order=order: coupon_lock(
            coupon_id=cid, order_id=order, user_id="profile",
            order_amount=Decimal(ORDER_AMOUNT), ctx=ctx))
        middle = time.process_time()
        lease = LeaseProof.from_token(order_id=order, lock_token=locked.lock_token,
                                      expected_version=locked.state_version)
        keyed(lambda ctx, cid=coupon_id, lease=lease: coupon_redeem(
            coupon_id=cid, lease=lease, payment_id=f"pay-{cid}", ctx=ctx))
        spent["services"][0] += middle - begun
        spent["services"][1] += time.process_time() - middle
    return {way: [seconds / half * 1000 for seconds in pair] for way, pair in spent.items()}


def calls_per_command(caller: Caller, coupon_ids) -> dict:
    """Python function calls per LOCK and per REDEEM (cProfile's count), over the WSGI handler
    and through the services in-process, alternately: unlike time, a count the machine's other
    load does not move, so the HTTP layer's share can be compared between two versions."""
    import cProfile
    import pstats

    from coupons.services import LeaseProof, coupon_lock, coupon_redeem
    from coupons.write.idempotency import run_once

    def keyed(command):
        """The command's result; its payload is the stored answer, as over the API."""
        key, made = uuid.uuid4().hex, []
        run_once(scope="profile", key=key, request_hash=key, actor="profile",
                 command=lambda ctx: made.append(command(ctx)) or made[-1].payload())
        return made[-1]

    def http(coupon_id, order, profiles):
        with profiles[0]:
            locked = caller.post(f"{coupon_id}/lock", {"order_id": order, "user_id": "profile",
                                                       "order_amount": ORDER_AMOUNT})
        with profiles[1]:
            caller.post(f"{coupon_id}/redeem", {"order_id": order,
                                                "lock_token": locked["lock_token"],
                                                "expected_version": locked["state_version"],
                                                "payment_id": f"pay-{coupon_id}"})

    def services(coupon_id, order, profiles):
        with profiles[0]:
            locked = keyed(lambda ctx: coupon_lock(coupon_id=coupon_id, order_id=order,
                                                   user_id="profile", ctx=ctx,
                                                   order_amount=Decimal(ORDER_AMOUNT)))
        with profiles[1]:
            lease = LeaseProof.from_token(order_id=order, lock_token=locked.lock_token,
                                          expected_version=locked.state_version)
            keyed(lambda ctx: coupon_redeem(coupon_id=coupon_id, lease=lease,
                                            payment_id=f"pay-{coupon_id}", ctx=ctx))

    profiles = {way: (cProfile.Profile(), cProfile.Profile()) for way in ("http", "services")}
    for number, coupon_id in enumerate(coupon_ids):
        way = ("http", "services")[number % 2]
        (http if way == "http" else services)(coupon_id, f"calls-{coupon_id}", profiles[way])
    per_way = len(coupon_ids) // 2
    return {way: [pstats.Stats(profile).total_calls / per_way for profile in pair]
            for way, pair in profiles.items()}


def statements_of(caller: Caller, coupon_ids) -> dict:
    """Statements per command (BEGIN and COMMIT included, as tests/api/test_statement_counts)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = {"lock": 0, "redeem": 0}
    for coupon_id in coupon_ids:
        order = f"count-{coupon_id}"
        with CaptureQueriesContext(connection) as lock:
            locked = caller.post(f"{coupon_id}/lock", {"order_id": order, "user_id": "profile",
                                                       "order_amount": ORDER_AMOUNT})
        with CaptureQueriesContext(connection) as redeem:
            caller.post(f"{coupon_id}/redeem", {
                "order_id": order, "lock_token": locked["lock_token"],
                "expected_version": locked["state_version"], "payment_id": f"pay-{coupon_id}"})
        counts["lock"] += len(lock.captured_queries)
        counts["redeem"] += len(redeem.captured_queries)
    return {name: count / len(coupon_ids) for name, count in counts.items()}


def profile(args) -> None:
    from coupons.services import (
        CommandContext,
        coupon_issue,
        service_client_create,
        template_create,
    )

    template = template_create(
        code="profile", name="profile 30 off", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
        min_order_amount=Decimal("0.00"), valid_days=3650)
    ctx = CommandContext(actor="profile")
    coupons = [coupon_issue(template_id=template.pk, user_id="profile", ctx=ctx).coupon.pk
               for _ in range(args.warm + args.cycles + args.plain + args.calls + 5)]
    _, api_key = service_client_create(name="profile",
                                       capabilities=["lock_coupon", "redeem_coupon"])
    caller = Caller(api_key)
    for coupon_id in coupons[:args.warm]:
        cycle(caller, coupon_id)
    profiles = {"lock": Resumable(), "redeem": Resumable()}
    for coupon_id in coupons[args.warm:args.warm + args.cycles]:
        cycle(caller, coupon_id, profiles)
    statements = statements_of(caller, coupons[-5:])
    plain = cpu_per_command(caller, coupons[-5 - args.plain:-5]) if args.plain else None
    calls = calls_per_command(caller, coupons[-5 - args.plain - args.calls:-5 - args.plain])
    from pyinstrument.renderers import ConsoleRenderer

    print(f"{args.cycles} cycles over the WSGI handler (pyinstrument's own cost included)")
    for name, resumable in profiles.items() if args.cycles else ():
        session = resumable.profiler.last_session
        per_command = resumable.seconds / args.cycles * 1000
        cpu = resumable.cpu_seconds / args.cycles * 1000
        print(f"\n{name.upper()}: {per_command:.2f} ms per command ({cpu:.2f} ms CPU), "
              f"{statements[name]:.0f} statements (BEGIN and COMMIT included)")
        flat = ConsoleRenderer(unicode=True, color=False, time="percent_of_total", flat=True)
        print("\n".join(flat.render(session).splitlines()[:args.top]))
        if args.out:
            path = Path(f"{args.out}-{name}.svg")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(flame_svg(session.root_frame(), f"{name.upper()} over the API: "
                                      f"{per_command:.1f} ms, {cpu:.1f} ms CPU per command"))
            print(f"written {path}")
        if args.tree:
            tree = ConsoleRenderer(unicode=True, color=False, time="percent_of_total")
            Path(f"{args.tree}-{name}.txt").write_text(tree.render(session))
    if plain:
        print_plain(plain)
    print("\nPython function calls per command | LOCK | REDEEM")
    for way, label in (("http", "over the WSGI handler"), ("services", "services in-process")):
        print(f"{label} | {calls[way][0]:,.0f} | {calls[way][1]:,.0f}")
    print(f"the HTTP layer (difference) | {calls['http'][0] - calls['services'][0]:,.0f} | "
          f"{calls['http'][1] - calls['services'][1]:,.0f}")


# --- a flame graph as SVG -----------------------------------------------------------------

WIDTH, ROW = 1200, 16
PALETTE = (("coupons/", "#f4a259"), ("refunds/", "#f4a259"), ("config/", "#f4a259"),
           ("django_prometheus", "#e05252"), ("prometheus_client", "#e05252"),
           ("rest_framework", "#8cc084"), ("psycopg", "#5b8def"), ("django/", "#b9a3e3"))


def flame_svg(root, title: str) -> str:
    """Callers below callees, width = share of the samples; hover a box for its name and
    share. Colours: the project orange, metrics red, DRF green, psycopg blue, Django violet."""
    from html import escape

    boxes, total = [], root.time or 1.0

    def merged(frames):
        """Calls of one function from one caller, wherever in the caller: one box."""
        groups = {}
        for frame in frames:
            label = f"{frame.class_name + '.' if frame.class_name else ''}{frame.function}"
            group = groups.setdefault((label, frame.file_path_short or ""), [0.0, []])
            group[0] += frame.time
            group[1].extend(frame.children)
        return sorted(((*key, *value) for key, value in groups.items()), key=lambda g: -g[2])

    def walk(label, where, seconds, children, x: float, depth: int) -> None:
        width = seconds / total * WIDTH
        if width < 3:
            return
        colour = next((c for part, c in PALETTE if part in where), "#cfcfcf")
        boxes.append((x, depth, width, label, where, seconds / total, colour))
        for child in merged(children):
            walk(*child, x, depth + 1)
            x += child[2] / total * WIDTH

    walk(*merged([root])[0], 0.0, 0)
    depth = max(box[1] for box in boxes) + 1
    height = depth * ROW + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'font-family="monospace" font-size="11">',
             f'<text x="4" y="16" font-size="13">{escape(title)}</text>']
    for x, level, width, label, where, share, colour in boxes:
        y = height - (level + 1) * ROW
        text = label[:int(width / 7)]
        parts.append(f'<rect x="{x:.0f}" y="{y}" width="{width:.1f}" height="{ROW - 1}" '
                     f'fill="{colour}"><title>{escape(label)} {escape(where)} {share:.1%}'
                     '</title></rect>'
                     + (f'<text x="{x + 2:.0f}" y="{y + 12}">{escape(text)}</text>'
                        if len(text) > 2 else ""))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def print_plain(plain: dict) -> None:
    http, services = plain["http"], plain["services"]
    print("\nCPU ms per command without the profiler | LOCK | REDEEM")
    print(f"over the WSGI handler | {http[0]:.2f} | {http[1]:.2f}")
    print(f"services in-process | {services[0]:.2f} | {services[1]:.2f}")
    print(f"the HTTP layer (difference) | {http[0] - services[0]:.2f} | "
          f"{http[1] - services[1]:.2f}")


def main() -> None:
    args = parse_args()
    with throwaway_database(args.db_name, setup_served):
        profile(args)


if __name__ == "__main__":
    main()
