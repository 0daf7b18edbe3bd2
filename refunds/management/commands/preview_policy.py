"""`manage.py preview_policy POLICY_CODE VERSION [--from ISO] [--to ISO] [--all] [--json]`"""

import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime

from common.progress import command_progress
from refunds.impact import policy_impact, stored_decisions
from refunds.models import ReturnPolicyVersion


def moment(value: str):
    parsed = parse_datetime(value)
    if parsed is None or parsed.tzinfo is None:
        raise CommandError(f"{value!r} is not an ISO 8601 time with an offset.")
    return parsed


class Command(BaseCommand):
    help = ("Re-decide the stored refund decisions of a policy under one of its versions (a draft, "
            "usually) and report what would change. Changes nothing.")

    def add_arguments(self, parser):
        parser.add_argument("policy_code")
        parser.add_argument("version", type=int)
        parser.add_argument("--from", dest="date_from", type=moment,
                            help="only refunds received at or after this time")
        parser.add_argument("--to", dest="date_to", type=moment,
                            help="only refunds received before this time")
        parser.add_argument("--all", dest="replay_all", action="store_true",
                            help="every decision in the range, not the newest "
                                 "IMPACT_REPLAY_SAMPLE (an operator's choice, off the web)")
        parser.add_argument("--json", dest="as_json", action="store_true",
                            help="print the report as JSON")
        parser.add_argument("--quiet", action="store_true",
                            help="no progress on stderr (a bar on a terminal, else a line "
                                 "every 10 s with the rate and the time left)")

    def handle(self, *args, policy_code, version, date_from, date_to, replay_all: bool,
               as_json: bool, quiet: bool = False, **options):
        found = (ReturnPolicyVersion.objects.select_related("policy")
                 .filter(policy__code=policy_code, number=version).first())
        if found is None:
            raise CommandError(f"No version {version} of return policy {policy_code!r}.")
        sample = 0 if replay_all else settings.IMPACT_REPLAY_SAMPLE
        in_range = stored_decisions(found, date_from=date_from, date_to=date_to).count()
        progress = command_progress(self, "preview_policy",
                                    min(in_range, sample) if sample else in_range,
                                    unit="decisions", quiet=quiet)
        report = policy_impact(found, date_from=date_from, date_to=date_to, sample=sample,
                               progress=progress)
        progress.finish()
        if as_json:
            self.stdout.write(json.dumps(report, indent=2))
            return
        out = self.stdout.write
        out(f"{report['policy']} v{report['version']} ({report['version_status']}): "
            f"{report['decisions']} stored decisions, {report['changed']} would change, "
            f"{report['unchanged']} unchanged.")
        if report["sampled"]:
            out(f"  (the newest {report['sample_size']} only; --all replays every one)")
        for change in report["changes"]:
            out(f"  {change['count']:>6}  {change['from']} → {change['to']}  by rule "
                f"{change['rule_index']} {change['rule_label']!r}  "
                f"e.g. {', '.join(change['example_refund_ids'])}")
        out("  decisions per rule of this version:")
        for rule in report["by_rule"]:
            out(f"  {rule['decisions']:>6}  rule {rule['rule_index']} {rule['rule_label']!r}")
