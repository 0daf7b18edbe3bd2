"""What the journal costs the commands that write it: statements and CPU ms per command.

Rerun (PostgreSQL; about a minute on a 2-core machine):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_journal.py --rounds 200

In a throwaway database (`coupon_bench_journal`), through the services in-process, one
transaction per command as the API runs them: a compensation proposed and approved, a refund
received for a redeemed coupon (decided and executed at once) and one waiting for an
operator, then approved; a conflict case opened and resolved. Per command: statements (BEGIN
and COMMIT included) and the process's CPU ms. Then --log-entries synthetic entries: the
sequencer's rate and the signer's recompute of the whole log. The same script runs unchanged
on a checkout without the journal (it skips the log part there), which is the baseline the
figures are compared with (docs/evidence.md).
"""

import argparse
import io
import os
import statistics
import time
from decimal import Decimal

from bench_setup import load_average, throwaway_database


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--db-name", default="coupon_bench_journal")
    parser.add_argument("--log-entries", type=int, default=100_000,
                        help="synthetic entries for the sequencer's and the signer's rates")
    parser.add_argument("--smoke", action="store_true", help="5 rounds: shows the script works")
    return parser.parse_args()


def measure(samples: dict, name: str, command):
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    started = time.process_time()
    with CaptureQueriesContext(connection) as queries, transaction.atomic():
        result = command()
    samples.setdefault(name, []).append((len(queries) + 2, time.process_time() - started))
    return result


def one_round(n: int, template, samples: dict) -> None:
    from coupons.evidence.tips import journal_tip
    from coupons.services import CommandContext, coupon_issue, coupon_redeem
    from coupons.services.cases import case_open, case_resolve
    from coupons.services.lock import coupon_lock
    from coupons.write.context import LeaseProof
    from refunds.models import Compensation, RefundCoupon
    from refunds.services.compensation_decide import compensation_approve
    from refunds.services.compensation_propose import compensation_propose
    from refunds.services.refund_receive import refund_receive
    from refunds.services.refund_review import refund_approve

    alice, bob = CommandContext(actor="user:alice"), CommandContext(actor="user:bob")

    def redeemed(order_id):
        coupon = coupon_issue(template_id=template.pk, user_id=f"u{n}", ctx=alice).coupon
        locked = coupon_lock(coupon_id=coupon.pk, order_id=order_id, user_id=f"u{n}",
                             order_amount=Decimal("300.00"), ctx=alice)
        result = coupon_redeem(coupon_id=coupon.pk, payment_id=f"pay-{order_id}", ctx=alice,
                               lease=LeaseProof.from_lock(locked.lock,
                                                          expected_version=locked.state_version))
        return coupon, result

    coupon, _ = redeemed(f"order-c{n}")
    redeem_op = coupon.operations.get(op_type="REDEEM")
    proposal = measure(samples, "compensation propose", lambda: compensation_propose(
        coupon_id=coupon.pk, operation_id=redeem_op.pk, reason="paid twice",
        amount=Decimal("20.00"), ctx=alice))
    seen = journal_tip(Compensation, proposal.pk)  # what the operator read, before it
    measure(samples, "compensation approve", lambda: compensation_approve(
        compensation_id=proposal.pk, seen_entry=seen, note="fine", ctx=bob))

    redeemed(f"order-r{n}")
    measure(samples, "refund receive (executed)", lambda: refund_receive(
        refund_id=f"r{n}", order_id=f"order-r{n}", payment_id=f"pay-order-r{n}",
        refund_amount=Decimal("270.00"), refund_type="FULL", ctx=alice))

    redeemed(f"order-m{n}")
    receipt = measure(samples, "refund receive (to review)", lambda: refund_receive(
        refund_id=f"m{n}", order_id=f"order-m{n}", payment_id=f"pay-order-m{n}",
        refund_amount=Decimal("270.00"), refund_type="FULL", ctx=alice, risk_flag=True))
    seen = journal_tip(RefundCoupon, receipt.decisions[0].pk)
    measure(samples, "refund approve", lambda: refund_approve(
        decision_id=receipt.decisions[0].pk, seen_entry=seen, note="verified",
        action="RETURN", ctx=bob))

    case = measure(samples, "case open", lambda: case_open(
        coupon=coupon, order_id=f"order-late{n}", fact_type="PAYMENT_SUCCEEDED",
        evidence={"payment_id": "late"}))
    measure(samples, "case resolve", lambda: case_resolve(
        case_id=case.pk, action="DISMISS", note="paid twice", ctx=bob))


def log_rates(count: int) -> None:
    """The sequencer's rate over `count` new entries, and the signer's recompute of the whole
    log (every leaf from its content, the root, a consistency proof from half of it)."""
    from django.core.management import call_command
    from django.db import connection

    from coupons.evidence import merkle
    from operations.checkpoint import read_log

    call_command("setup_db_roles", stdout=io.StringIO())
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO coupons_journalentry (subject, subject_id, kind, actor, parent_hash, "
            "content, content_hash, created_at) SELECT 'bench.synthetic', n, 'opened', 'bench', "
            "NULL, c, encode(sha256(convert_to(c, 'UTF8')), 'hex'), now() FROM "
            "generate_series(1, %s) n, LATERAL (SELECT '{\"id\":' || n || "
            "',\"row\":{\"amount\":\"20.00\",\"note\":\"' || repeat('x', 200) || "
            "'\"}}' AS c) t", [count])
    started = time.monotonic()
    call_command("sequence_journal", stdout=io.StringIO())
    sequenced = time.monotonic() - started
    started = time.monotonic()
    log = read_log()  # what the signer reads: every position, its leaf recomputed
    size, root = len(log.recomputed), merkle.root_of_nodes(log.recomputed).hex()
    head = time.monotonic() - started
    with connection.cursor() as cursor:
        cursor.execute("SELECT leaf_hash FROM coupons_journalleaf ORDER BY index")
        nodes = [bytes.fromhex(row[0]) for row in cursor.fetchall()]
    started = time.monotonic()
    proof = merkle.consistency_proof(size // 2, nodes)
    assert merkle.consistency_holds(size // 2, size, proof,
                                    merkle.root_of_nodes(nodes[:size // 2]), bytes.fromhex(root))
    consistency = time.monotonic() - started
    print(f"sequencer: {size} entries in {sequenced:.2f} s = {size / sequenced:.0f} entries/s; "
          f"signer's log recompute: {head:.2f} s ({head * 1_000_000 / size:.1f} s per million "
          f"entries); consistency proof + check at {size}: {consistency * 1000:.0f} ms; "
          f"load average {load_average()}")
    stored_paths(size, root, nodes)


def stored_paths(size: int, root: str, nodes: list) -> None:
    """What a proof pays for its journal half: paths read from the stored subtree hashes."""
    try:
        from coupons.evidence.checkpoint_proofs import stored_nodes
        from coupons.evidence.journal_verify import read_log
    except ImportError:  # a checkout without stored subtree hashes
        return
    from coupons.evidence import merkle

    indexes = [0, size // 3, size // 2, size - 1]
    started = time.monotonic()
    for index in indexes:
        ranges = merkle.inclusion_ranges(index, size)
        stored = stored_nodes(merkle.pieces_of(ranges))
        path = [merkle.range_root(stored.__getitem__, *r) for r in ranges]
        assert merkle.root_from_path(index, size, nodes[index], path).hex() == root
    per_path = (time.monotonic() - started) / len(indexes)
    started = time.monotonic()
    merkle.Levels(read_log().leaves)
    audit = time.monotonic() - started
    print(f"one inclusion path from stored subtrees at {size}: {per_path * 1000:.1f} ms, one "
          f"query; verify_ledger's read of the whole log and its subtrees: {audit:.2f} s; "
          f"load average {load_average()}")


def main():
    args = parse_args()
    rounds = 5 if args.smoke else args.rounds
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    with throwaway_database(args.db_name):
        from coupons.services import template_create

        template = template_create(
            code="bench", name="30 off 200", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
            min_order_amount=Decimal("200.00"), valid_days=30)
        samples: dict = {}
        for n in range(rounds):
            one_round(n, template, samples)
        print(f"{rounds} rounds; load average {load_average()}")
        print(f"{'command':28} {'statements':>10} {'CPU ms p50':>11} {'CPU ms mean':>12}")
        for name, values in samples.items():
            statements = statistics.median(v[0] for v in values)
            cpu = [v[1] * 1000 for v in values]
            print(f"{name:28} {statements:>10.0f} {statistics.median(cpu):>11.2f} "
                  f"{statistics.fmean(cpu):>12.2f}")
        if os.path.exists(os.path.join(os.path.dirname(__file__), "..", "..", "operations",
                                       "management", "commands", "sequence_journal.py")):
            log_rates(100 if args.smoke else args.log_entries)


if __name__ == "__main__":
    main()
