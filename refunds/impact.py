"""Impact replay: what a (draft) policy version would have decided for past refunds.

Every stored decision of the policy is decided again from the RefundFacts stored with it, under
the given version, and compared with what was decided then. Nothing is written: publishing a
version never changes a past decision, and a preview changes nothing at all. `decide` is pure,
so this is a read of (id, facts, decision) in keyset chunks and a loop.

Bounded: the newest `IMPACT_REPLAY_SAMPLE` decisions of the range at most, the
sample size stated in the report, and one replay at a time per person (`replay_slot`), so a
policy with 200,000 stored refunds costs what 10,000 do and cannot be replayed eight times over.
"""

from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.core.cache import cache

from coupons.errors import ReplayInProgress
from refunds.models import RefundCoupon
from refunds.policy_engine import RefundFacts, decide

CHUNK = 2000
EXAMPLES = 5


def outcome(action: str, requires_approval: bool) -> str:
    """A decision as compared here: its action, and whether a person must approve it."""
    return f"{action} (approval)" if requires_approval else action


@dataclass
class Impact:
    decisions: int = 0
    changed: int = 0
    # (from, to, rule index, rule label) → count, and a few refund ids
    changes: Counter = field(default_factory=Counter)
    examples: dict = field(default_factory=lambda: defaultdict(list))
    by_rule: Counter = field(default_factory=Counter)  # (rule index, label) → decisions

    def add(self, refund_id: str, before: str, verdict) -> None:
        self.decisions += 1
        rule = (verdict.rule_index, verdict.rule_label)
        self.by_rule[rule] += 1
        after = outcome(verdict.action, verdict.requires_approval)
        if after == before:
            return
        self.changed += 1
        key = (before, after, *rule)
        self.changes[key] += 1
        if len(self.examples[key]) < EXAMPLES:
            self.examples[key].append(refund_id)


def stored_decisions(version, *, date_from=None, date_to=None):
    """Decisions taken under any version of the version's policy (those with stored facts)."""
    decisions = RefundCoupon.objects.filter(
        policy_version__policy_id=version.policy_id, facts__isnull=False
    )
    if date_from is not None:
        decisions = decisions.filter(received_at__gte=date_from)
    if date_to is not None:
        decisions = decisions.filter(received_at__lt=date_to)
    return decisions


def policy_impact(version, *, date_from=None, date_to=None, chunk: int = CHUNK,
                  sample: int | None = None, progress=None) -> dict:
    """Replay the newest `sample` decisions of the range (IMPACT_REPLAY_SAMPLE unless told;
    0: all of them, for `manage.py preview_policy --all`); `progress` (common/progress.py)
    advanced by each chunk. A replay changes nothing: interrupted, it is run again."""
    sample = settings.IMPACT_REPLAY_SAMPLE if sample is None else sample
    impact = Impact()
    rows = stored_decisions(version, date_from=date_from, date_to=date_to).values_list(
        "pk", "refund_id", "action", "requires_approval", "facts"
    ).order_by("-pk")  # newest first, by the primary key's index
    last = None
    while not sample or impact.decisions < sample:
        size = min(chunk, sample - impact.decisions) if sample else chunk
        batch = list((rows if last is None else rows.filter(pk__lt=last))[:size])
        for _, refund_id, action, requires_approval, facts in batch:
            verdict = decide(version, RefundFacts.from_json(facts))
            impact.add(refund_id, outcome(action, requires_approval), verdict)
        if progress is not None:
            progress.advance(len(batch))
        if len(batch) < size:
            break
        last = batch[-1][0]
    sampled = bool(sample) and impact.decisions == sample and (
        rows.filter(pk__lt=last).exists() if last is not None else False)
    return _report(version, impact, date_from, date_to, sample=sample, sampled=sampled)


@contextmanager
def replay_slot(owner: str):
    """At most one replay per person (or client) at a time, across processes with Redis.

    The slot expires by itself after IMPACT_REPLAY_SLOT_SECONDS, should a worker die holding it.
    """
    key = f"impact-replay:{owner}"
    if not cache.add(key, 1, settings.IMPACT_REPLAY_SLOT_SECONDS):
        raise ReplayInProgress(retry_after=settings.IMPACT_REPLAY_SLOT_SECONDS)
    try:
        yield
    finally:
        cache.delete(key)


def _report(version, impact: Impact, date_from, date_to, *, sample: int,
            sampled: bool) -> dict:
    return {
        "policy": version.policy.code,
        "version": version.number,
        "version_status": version.status,
        "from": date_from.isoformat() if date_from else None,
        "to": date_to.isoformat() if date_to else None,
        "decisions": impact.decisions,
        # The cap on decisions replayed (0: none), and whether older decisions were left out.
        "sample_size": sample,
        "sampled": sampled,
        "unchanged": impact.decisions - impact.changed,
        "changed": impact.changed,
        "changes": [
            {"from": before, "to": after, "rule_index": index, "rule_label": label,
             "count": count, "example_refund_ids": impact.examples[(before, after, index, label)]}
            for (before, after, index, label), count in sorted(
                impact.changes.items(), key=lambda item: (-item[1], item[0][:2]))
        ],
        "by_rule": [
            {"rule_index": index, "rule_label": label, "decisions": count}
            for (index, label), count in sorted(impact.by_rule.items(),
                                                key=lambda item: (item[0][0] is None, item[0]))
        ],
    }
