"""Policy writes: drafts copied from the latest version, published versions frozen, and the
version in force at a refund's time."""

from datetime import timedelta
from decimal import Decimal

import pytest

from coupons.errors import (
    InvalidState,
    NotFound,
    PolicyDraftExists,
    PolicyVersionFrozen,
    ValidationFailed,
)
from coupons.models import CouponTemplateVersion
from coupons.services import coupon_issue, template_create, template_update
from coupons.services.templates import template_set_issuable
from refunds.models import ReturnPolicy, ReturnPolicyVersion
from refunds.policy_engine import policy_version_for
from refunds.services.policies import (
    policy_create,
    policy_draft_create,
    policy_draft_update,
    policy_publish,
)
from tests.conftest import START

pytestmark = pytest.mark.django_db

RETURN_ALL = [{"label": "everything comes back", "when": {}, "action": "RETURN"}]
STORED_RETURN_ALL = [{"label": "everything comes back", "when": {}, "action": "RETURN",
                      "requires_approval": False, "compensation": {}}]
KEEP_ALL = [{"label": "nothing comes back", "when": {}, "action": "KEEP_USED"}]


def default_v1() -> ReturnPolicyVersion:
    return ReturnPolicyVersion.objects.get(policy__code="default", number=1)


def published_policy(clock, code="strict", rules=KEEP_ALL) -> ReturnPolicy:
    policy = policy_create(code=code, name=code, rules=rules, actor="test")
    policy_publish(policy.versions.get(), "test")
    return policy


def test_new_policy_starts_with_a_draft_of_its_rules_stored_in_full(clock):
    policy = policy_create(code="generous", name="Generous", rules=RETURN_ALL, actor="ann")

    (draft,) = policy.versions.all()
    assert (draft.number, draft.status, draft.created_by) == (1, "DRAFT", "ann")
    assert draft.rules == STORED_RETURN_ALL
    assert draft.published_at is None


def test_new_policy_without_rules_copies_the_default_policy(clock):
    policy = policy_create(code="mine", name="Mine", actor="ann")

    draft = policy.versions.get()
    assert draft.rules == default_v1().rules
    assert draft.based_on == default_v1()


def test_policy_code_is_unique(clock):
    policy_create(code="mine", name="Mine", actor="ann")

    with pytest.raises(ValidationFailed) as caught:
        policy_create(code="mine", name="Again", actor="ann")

    assert caught.value.details == {"code": ["already taken"]}
    assert ReturnPolicy.objects.filter(code="mine").count() == 1


def test_invalid_rules_create_nothing(clock):
    with pytest.raises(ValidationFailed):
        policy_create(code="bad", name="Bad", rules=[{"label": "x", "action": "NOPE"}],
                      actor="ann")

    assert not ReturnPolicy.objects.filter(code="bad").exists()


def test_publish_freezes_the_draft_with_who_and_when(clock):
    policy = policy_create(code="p", name="P", rules=RETURN_ALL, actor="ann")

    published = policy_publish(policy.versions.get(), "bob")

    published.refresh_from_db()
    assert (published.status, published.published_by, published.published_at) == (
        "PUBLISHED", "bob", START)


def test_new_draft_copies_the_latest_version_and_names_it(clock):
    policy = published_policy(clock, rules=RETURN_ALL)

    draft = policy_draft_create(policy, "ann")

    assert (draft.number, draft.status) == (2, "DRAFT")
    assert draft.based_on == policy.versions.get(number=1)
    assert draft.rules == STORED_RETURN_ALL


def test_new_draft_may_bring_its_own_rules(clock):
    policy = published_policy(clock, rules=RETURN_ALL)

    draft = policy_draft_create(policy, "ann", rules=KEEP_ALL)

    assert draft.rules[0]["action"] == "KEEP_USED"
    assert draft.based_on.number == 1


def test_one_draft_at_a_time(clock):
    policy = policy_create(code="p", name="P", rules=RETURN_ALL, actor="ann")

    with pytest.raises(PolicyDraftExists) as caught:
        policy_draft_create(policy, "ann")

    assert caught.value.http_status == 409
    assert caught.value.code == "INVALID_STATE"
    assert caught.value.details["current_state"] == "DRAFT"
    assert policy.versions.count() == 1


def test_draft_rules_can_be_replaced_until_published(clock):
    policy = policy_create(code="p", name="P", rules=RETURN_ALL, actor="ann")
    draft = policy.versions.get()

    policy_draft_update(draft, KEEP_ALL, "ann")
    policy_publish(draft, "ann")

    assert ReturnPolicyVersion.objects.get(pk=draft.pk).rules[0]["action"] == "KEEP_USED"


def test_draft_update_refuses_invalid_rules_and_keeps_the_old_ones(clock):
    policy = policy_create(code="p", name="P", rules=RETURN_ALL, actor="ann")
    draft = policy.versions.get()

    with pytest.raises(ValidationFailed):
        policy_draft_update(draft, [{"label": "x", "when": {"risk_flag": "yes"},
                                     "action": "VOID"}], "ann")

    assert ReturnPolicyVersion.objects.get(pk=draft.pk).rules == STORED_RETURN_ALL


def test_published_version_refuses_update_and_second_publish(clock):
    version = default_v1()
    rules_before = version.rules

    with pytest.raises(PolicyVersionFrozen) as caught:
        policy_draft_update(version, KEEP_ALL, "mallory")
    assert caught.value.details == {"current_state": "PUBLISHED", "current_version": 1,
                                    "policy": "default"}
    with pytest.raises(PolicyVersionFrozen):
        policy_publish(version, "mallory")

    version.refresh_from_db()
    assert version.rules == rules_before
    assert version.published_by == "migration"


def test_a_stale_draft_object_cannot_edit_the_version_once_published(clock):
    """The caller's copy still says DRAFT; the service reads the row, not the copy."""
    policy = policy_create(code="p", name="P", rules=RETURN_ALL, actor="ann")
    stale = policy.versions.get()
    policy_publish(ReturnPolicyVersion.objects.get(pk=stale.pk), "bob")

    with pytest.raises(PolicyVersionFrozen):
        policy_draft_update(stale, KEEP_ALL, "ann")
    assert ReturnPolicyVersion.objects.get(pk=stale.pk).rules == STORED_RETURN_ALL


# --- which version applies ----------------------------------------------------------------


def make_template(code="off30", **terms):
    return template_create(code=code, name=code, kind="AMOUNT_OFF",
                           face_value=Decimal("30.00"), valid_days=30, **terms)


def test_a_template_without_policy_uses_the_default(clock):
    template = make_template()

    assert policy_version_for(template.versions.get(), START) == default_v1()


def test_version_in_force_at_refund_time_is_kept_after_a_newer_one(clock):
    policy = published_policy(clock, rules=RETURN_ALL)
    template = make_template(return_policy="strict")
    terms = template.versions.get()
    refund_time = clock.now() + timedelta(hours=1)
    clock.advance(days=1)
    v2 = policy_draft_create(policy, "ann", rules=KEEP_ALL)
    policy_publish(v2, "ann")

    assert policy_version_for(terms, refund_time).number == 1
    assert policy_version_for(terms, clock.now()) == ReturnPolicyVersion.objects.get(pk=v2.pk)
    # A draft is never in force.
    policy_draft_create(policy, "ann")
    assert policy_version_for(terms, clock.now() + timedelta(days=9)).number == 2


def test_before_its_policy_was_published_the_default_applies(clock):
    published_policy(clock)
    terms = make_template(return_policy="strict").versions.get()

    assert policy_version_for(terms, START - timedelta(seconds=1)) == default_v1()


def test_template_versions_keep_the_policy_they_were_frozen_with(clock, ctx):
    published_policy(clock, code="strict")
    generous = published_policy(clock, code="generous", rules=RETURN_ALL)
    template = make_template(return_policy="strict")
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    template_update(template_id=template.pk, return_policy=generous.pk)

    v1, v2 = CouponTemplateVersion.objects.filter(template=template).order_by("version")
    assert (v1.return_policy.code, v2.return_policy.code) == ("strict", "generous")
    assert policy_version_for(coupon.template_version, clock.now()).policy.code == "strict"


@pytest.mark.parametrize("value", ["nope", 999999])
def test_template_refuses_an_unknown_policy_naming_what_was_given(clock, value):
    with pytest.raises(NotFound) as caught:
        make_template(return_policy=value)

    assert caught.value.details == {"return_policy": value}


def test_template_refuses_a_policy_with_no_published_version(clock):
    policy_create(code="unpublished", name="U", actor="ann")

    with pytest.raises(ValidationFailed) as caught:
        make_template(return_policy="unpublished")

    assert caught.value.details == {
        "return_policy": ["This policy has no published version yet."]}


def test_template_accepts_the_policy_by_id_as_text(clock):
    policy = published_policy(clock)

    assert make_template(return_policy=str(policy.pk)).return_policy == policy


def test_closed_campaign_issues_no_coupons(clock, ctx):
    template = make_template()
    template_set_issuable(template_id=template.pk, issuable=False)

    with pytest.raises(InvalidState) as caught:
        coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx)

    assert caught.value.details["current_state"] == "CLOSED"
    template.refresh_from_db()
    assert (template.issuable, template.version) == (False, 1)

