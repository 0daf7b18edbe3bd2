"""The impact replay is for policy admins, bounded, and one at a time.

Before: the console's impact page accepted anyone who may read and replayed every stored
decision: with 200,000 of them a support session's GET took 30 s, and eight in parallel starved
/healthz. Now the page needs edit_policies (as the API's preview), replays the newest
IMPACT_REPLAY_SAMPLE decisions and says so, and a second replay by the same person while one
runs is 429 REPLAY_IN_PROGRESS.
"""

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from refunds.impact import policy_impact
from refunds.models import RefundCoupon, ReturnPolicy
from refunds.services.policies import policy_draft_create, policy_draft_update
from tests.api.roles import person, signed_in
from tests.refunds.conftest import issue, redeem
from tests.refunds.test_impact_replay import DRAFT_RULES, one_by_one, stored_history

pytestmark = pytest.mark.django_db

SAMPLE = 500


@pytest.fixture
def draft(clock):
    default = ReturnPolicy.objects.get(code="default")
    return policy_draft_update(policy_draft_create(default, "user:policy"), DRAFT_RULES,
                               "user:policy")


@pytest.fixture
def history(template, ctx):
    """1,200 stored decisions, bulk-inserted (the replay reads only their stored facts)."""
    coupons = [issue(template, ctx, user_id=f"u{n}") for n in range(3)]
    for n, coupon in enumerate(coupons):
        redeem(coupon, ctx, order_id=f"order-real-{n}")
    stored_history(coupons, 1200)


@pytest.fixture
def capped(settings):
    settings.IMPACT_REPLAY_SAMPLE = SAMPLE
    cache.clear()


def impact_url(version):
    return reverse("console:policy_version_impact",
                   kwargs={"policy_id": version.policy_id, "number": version.number})


def console(username, group):
    browser = Client()
    browser.force_login(person(username, group=group))
    return browser


@pytest.mark.parametrize("method", ["get", "head"])
@pytest.mark.parametrize("group", ["support", "operator"])
def test_readers_cannot_start_a_replay_from_the_console(history, draft, group, method,
                                                       django_assert_max_num_queries):
    browser = console("reader", group)

    with django_assert_max_num_queries(12):  # refused before any decision is read
        answer = getattr(browser, method)(impact_url(draft))

    assert answer.status_code == 403


def test_the_replay_takes_the_newest_decisions_and_says_so(history, draft, capped):
    browser = console("pia", "policy_admin")

    page = browser.get(impact_url(draft)).content.decode()
    report = policy_impact(draft)

    assert (report["decisions"], report["sample_size"], report["sampled"]) == (500, 500, True)
    newest = RefundCoupon.objects.order_by("-pk")[:SAMPLE]
    expected = one_by_one(draft, newest)
    assert {(c["from"], c["to"], c["rule_index"], c["rule_label"]): c["count"]
            for c in report["changes"]} == dict(expected)
    assert f"the newest {SAMPLE} decisions" in page
    assert '<strong id="impact-decisions">500</strong>' in page


def test_the_api_answer_states_the_sample(history, draft, capped):
    admin = signed_in(person("pia", group="policy_admin"))

    body = admin.post(f"/api/v1/return-policies/{draft.policy_id}/versions/{draft.number}"
                      "/preview", {}, format="json").json()

    assert (body["decisions"], body["sample_size"], body["sampled"]) == (500, 500, True)


def test_under_the_cap_everything_is_replayed(history, draft, settings):
    settings.IMPACT_REPLAY_SAMPLE = 5000

    report = policy_impact(draft)

    assert report["decisions"] == RefundCoupon.objects.count()
    assert report["sampled"] is False


def test_a_second_replay_while_one_runs_is_429_for_that_person_only(draft, capped):
    pia = person("pia", group="policy_admin")
    api = signed_in(pia)
    browser = Client()
    browser.force_login(pia)
    url = f"/api/v1/return-policies/{draft.policy_id}/versions/{draft.number}/preview"
    cache.add(f"impact-replay:user:{pia.pk}", 1)  # a replay of pia's still running

    refused = api.post(url, {}, format="json")
    page = browser.get(impact_url(draft))
    other = signed_in(person("paul", group="policy_admin")).post(url, {}, format="json")

    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "REPLAY_IN_PROGRESS"
    assert set(refused.json()) == {"error"}
    wait = refused.json()["error"]["details"]["retry_after"]
    assert isinstance(wait, int) and refused["Retry-After"] == str(wait)
    assert page.status_code == 429 and "REPLAY_IN_PROGRESS" in page.content.decode()
    assert other.status_code == 200


def test_the_slot_is_freed_when_a_replay_ends_or_fails(draft, capped, monkeypatch):
    admin = signed_in(person("pia", group="policy_admin"))
    url = f"/api/v1/return-policies/{draft.policy_id}/versions/{draft.number}/preview"

    assert admin.post(url, {}, format="json").status_code == 200
    assert admin.post(url, {}, format="json").status_code == 200

    def broken(*args, **kwargs):
        raise RuntimeError("replay failed")

    monkeypatch.setattr("refunds.api.refund_views.policy_impact", broken)
    with pytest.raises(RuntimeError):
        admin.post(url, {}, format="json")
    monkeypatch.undo()
    assert admin.post(url, {}, format="json").status_code == 200
