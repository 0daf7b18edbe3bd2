"""The per-coupon check (docs/design.md) from the command line, for support and for scripts.

Without --full it resumes after the last version a check verified and the newest verified signed
head covers, and reads at most the newest COUPON_CHECK_NEWEST_ROWS rows no signed head covers, as
the console and the API do (coupons/evidence/check_watermark.py); --full, the background check
that verifies what they leave, re-reads and re-hashes the whole ledger, every evidence row of
the coupon and every journal entry of its ledger rows, bindings and redemptions, the rows that
head covers included, and moves the watermark to what it verified and the head covers. Exit
status 1 when an invariant fails, naming each problem.
"""

from django.core.management.base import BaseCommand, CommandError

from coupons.errors import NotFound
from coupons.evidence.replay import coupon_check
from coupons.selectors import coupon_get


class Command(BaseCommand):
    help = ("Check one coupon's ledger against the invariants (docs/design.md); "
            "--full verifies the "
            "whole history, not only what is newer than the last verified version.")

    def add_arguments(self, parser):
        parser.add_argument("coupon_id", type=int)
        parser.add_argument("--full", action="store_true",
                            help="re-verify every ledger row and evidence row of the coupon")

    def handle(self, *args, coupon_id, full, **options):
        try:
            coupon = coupon_get(coupon_id=coupon_id)
        except NotFound as missing:
            raise CommandError(f"no coupon {coupon_id}") from missing
        report = coupon_check(coupon, full=full).as_dict()
        if full:
            how = "whole history"
        elif report["verified_up_to"] is not None:
            how = (f"verified up to v{report['verified_up_to']} and from "
                   f"v{report['read_from_version']} on")
        else:
            how = "newer rows since the last verified version"
        for note in report["notes"]:
            self.stdout.write(f"note: {note}")
        problems = [(item["number"], problem) for item in report["invariants"]
                    for problem in item["problems"]]
        for number, problem in problems:
            self.stdout.write(f"invariant {number}: {problem}")
        verdict = (f"coupon {coupon_id} replays to {report['replayed_state']} "
                   f"v{report['replayed_version']} ({how})")
        if problems:
            raise CommandError(f"{verdict}: {len(problems)} problem(s)")
        if report["complete"]:
            self.stdout.write(f"{verdict}: every invariant holds")
        else:
            self.stdout.write(f"{verdict}: no invariant fails in the rows read; run --full "
                              "to verify the rest")
