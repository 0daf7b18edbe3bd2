"""Impact replay: a draft version re-decides stored refunds; the counts equal deciding them one
by one, and nothing changes."""

import random
from collections import Counter
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from coupons.evidence.journal import existing_entries
from coupons.models import JournalEntry
from refunds.impact import outcome, policy_impact
from refunds.models import RefundCoupon, ReturnPolicy, ReturnPolicyVersion
from refunds.policy_engine import RefundFacts, decide
from refunds.services.policies import policy_draft_create, policy_draft_update
from tests.app_role import past_the_triggers
from tests.conftest import START
from tests.refunds.conftest import issue, redeem

pytestmark = pytest.mark.django_db

DRAFT_RULES = [
    {"label": "Exchange coupons are one-time: they stay used",
     "when": {"template_kind": ["EXCHANGE"]}, "action": "KEEP_USED"},
    {"label": "Risk-flagged refunds are reviewed by an operator",
     "when": {"risk_flag": True}, "action": "MANUAL_REVIEW"},
    {"label": "Refunds of half the order or more return the coupon",
     "when": {"refunded_share_min": "0.5", "days_since_redemption_max": 14}, "action": "RETURN"},
    {"label": "Closed campaigns get a credit instead",
     "when": {"campaign_closed": True}, "action": "COMPENSATE",
     "compensation": {"amount": "5.00"}},
    {"label": "Otherwise the coupon stays used", "when": {}, "action": "KEEP_USED"},
]


def random_facts(rng: random.Random) -> RefundFacts:
    share = Decimal(rng.randint(1, 100)) / 100
    return RefundFacts(
        refund_type="FULL" if share == 1 or rng.random() < 0.3 else "PARTIAL",
        refunded_share=share, coupon_expired=rng.random() < 0.2,
        template_kind=rng.choice(["AMOUNT_OFF", "PERCENT_OFF", "EXCHANGE"]),
        template_returnable=rng.random() < 0.9, campaign_closed=rng.random() < 0.1,
        risk_flag=rng.random() < 0.05, days_since_redemption=rng.randint(0, 60),
        face_value=Decimal(rng.choice(["10.00", "30.00", "50.00"])),
    )


def stored_history(coupons, count: int, *, seed=7) -> None:
    """`count` decided refunds under the default policy v1, spread over 100 days."""
    rng = random.Random(seed)
    version = ReturnPolicyVersion.objects.get(policy__code="default", number=1)
    rows = []
    for n in range(count):
        facts = random_facts(rng)
        verdict = decide(version, facts)
        rows.append(RefundCoupon(
            refund_id=f"hist-{n:05}", order_id=f"order-{n:05}", coupon=coupons[n % len(coupons)],
            refund_type=facts.refund_type, refund_amount=Decimal("10.00"),
            status=RefundCoupon.Status.DECIDED, created_by="test",
            received_at=START + timedelta(hours=n * 2400 // count), decided_at=START,
            facts=facts.as_json(), policy_version=version, action=verdict.action,
            rule_index=verdict.rule_index, rule_label=verdict.rule_label,
            requires_approval=verdict.requires_approval,
        ))
    # Written past the services, as rows that were there before the journal are (past the
    # triggers too: a decision opens AWAITING_REDEMPTION to everyone else).
    with past_the_triggers():
        RefundCoupon.objects.bulk_create(rows, batch_size=500)
        JournalEntry.objects.bulk_create(existing_entries(RefundCoupon, rows), batch_size=500)


@pytest.fixture
def draft(clock):
    default = ReturnPolicy.objects.get(code="default")
    return policy_draft_update(policy_draft_create(default, "user:policy"), DRAFT_RULES,
                               "user:policy")


@pytest.fixture
def history(template, ctx):
    coupons = [issue(template, ctx, user_id=f"u{n}") for n in range(3)]
    for n, coupon in enumerate(coupons):
        redeem(coupon, ctx, order_id=f"order-real-{n}")
    stored_history(coupons, 1200)


def one_by_one(version, decisions) -> Counter:
    changes = Counter()
    for decision in decisions:
        verdict = decide(version, RefundFacts.from_json(decision.facts))
        after = outcome(verdict.action, verdict.requires_approval)
        before = outcome(decision.action, decision.requires_approval)
        if after != before:
            changes[(before, after, verdict.rule_index, verdict.rule_label)] += 1
    return changes


def test_the_preview_counts_equal_deciding_every_stored_refund_one_by_one(history, draft):
    before = list(RefundCoupon.objects.order_by("pk").values())

    report = policy_impact(draft, chunk=97)  # chunks that do not divide the history

    expected = one_by_one(draft, RefundCoupon.objects.all())
    assert report["decisions"] == 1200
    assert report["changed"] == sum(expected.values()) > 100
    assert report["unchanged"] == 1200 - report["changed"]
    assert {(c["from"], c["to"], c["rule_index"], c["rule_label"]): c["count"]
            for c in report["changes"]} == dict(expected)
    assert sum(rule["decisions"] for rule in report["by_rule"]) == 1200
    for change in report["changes"]:
        assert 1 <= len(change["example_refund_ids"]) <= 5
        for refund_id in change["example_refund_ids"]:
            stored = RefundCoupon.objects.get(refund_id=refund_id)
            assert outcome(stored.action, stored.requires_approval) == change["from"]
    # A preview changes nothing.
    assert list(RefundCoupon.objects.order_by("pk").values()) == before
    draft.refresh_from_db()
    assert draft.status == "DRAFT"


def test_the_preview_of_the_version_that_decided_changes_nothing(history):
    current = ReturnPolicyVersion.objects.get(policy__code="default", number=1)

    report = policy_impact(current)

    assert (report["decisions"], report["changed"]) == (1200, 0)


def test_a_date_range_limits_the_replay_to_refunds_received_in_it(history, draft):
    start, end = START + timedelta(days=10), START + timedelta(days=20)

    report = policy_impact(draft, date_from=start, date_to=end)

    in_range = RefundCoupon.objects.filter(received_at__gte=start, received_at__lt=end)
    assert report["decisions"] == in_range.count() > 0
    assert report["changed"] == sum(one_by_one(draft, in_range).values())


def test_the_preview_api_is_for_policy_admins(history, draft, policy_admin, support):
    url = f"/api/v1/return-policies/{draft.policy_id}/versions/{draft.number}/preview"

    answer = policy_admin.post(url, {"from": (START + timedelta(days=10)).isoformat()},
                               format="json")
    refused = support.post(url, {}, format="json")
    missing = policy_admin.post(url.replace(f"/{draft.number}/", "/99/"), {}, format="json")
    backwards = policy_admin.post(url, {"from": START.isoformat(), "to": START.isoformat()},
                                  format="json")

    assert answer.status_code == 200, answer.json()
    body = answer.json()
    expected = RefundCoupon.objects.filter(received_at__gte=START + timedelta(days=10))
    assert body["decisions"] == expected.count()
    assert body["changed"] == sum(one_by_one(draft, expected).values())
    assert (body["policy"], body["version"], body["version_status"]) == ("default", 2, "DRAFT")
    assert refused.status_code == 403
    assert refused.json()["error"]["details"]["capability"] == "edit_policies"
    assert missing.status_code == 404
    assert backwards.status_code == 400


def test_preview_policy_command_prints_the_counts(history, draft):
    out = StringIO()

    call_command("preview_policy", "default", "2", stdout=out)

    report = policy_impact(draft)
    first_line = out.getvalue().splitlines()[0]
    assert first_line == (f"default v2 (DRAFT): 1200 stored decisions, {report['changed']} "
                          f"would change, {report['unchanged']} unchanged.")
    top = report["changes"][0]
    assert f"{top['count']:>6}  {top['from']} → {top['to']}" in out.getvalue()


def test_preview_policy_shows_its_progress_over_the_decisions_it_replays(history, draft,
                                                                          settings):
    settings.IMPACT_REPLAY_SAMPLE = 500
    out, err = StringIO(), StringIO()

    call_command("preview_policy", "default", "2", stdout=out, stderr=err)
    assert err.getvalue().startswith("preview_policy: 500 of 500 decisions (100%)")

    err = StringIO()
    call_command("preview_policy", "default", "2", "--all", stdout=out, stderr=err)
    assert err.getvalue().startswith("preview_policy: 1,200 of 1,200 decisions (100%)")
