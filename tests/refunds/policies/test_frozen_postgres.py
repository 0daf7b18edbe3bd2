"""On PostgreSQL a published policy version cannot change even past the services: a trigger
refuses UPDATE and DELETE of a PUBLISHED row (raw SQL, bulk ORM writes); drafts stay editable.
Plus the real races on a policy: two new drafts at once, an edit racing a publish."""

import importlib

import pytest
from django.apps import apps
from django.db import DatabaseError, connection, transaction

from refunds.models import ReturnPolicy, ReturnPolicyVersion
from refunds.services.policies import (
    policy_create,
    policy_draft_create,
    policy_draft_update,
    policy_publish,
)
from tests.coupons.concurrency.threads import race

KEEP_ALL = [{"label": "nothing comes back", "when": {}, "action": "KEEP_USED"}]
RETURN_ALL = [{"label": "everything back", "when": {}, "action": "RETURN"}]
TABLE = ReturnPolicyVersion._meta.db_table


def refused_by_trigger(write):
    with pytest.raises(DatabaseError, match="pgtrigger"), transaction.atomic():
        write()


@pytest.fixture
def published(db):
    return ReturnPolicyVersion.objects.get(policy__code="default", number=1)


@pytest.mark.django_db
@pytest.mark.owner_role  # the trigger holds against the owner; the app role has no DELETE
def test_raw_sql_cannot_update_or_delete_a_published_version(published):
    rules_before = published.rules

    def raw(sql):
        with connection.cursor() as cursor:
            cursor.execute(sql, [published.pk])

    refused_by_trigger(lambda: raw(f"UPDATE {TABLE} SET rules = '[]' WHERE id = %s"))
    refused_by_trigger(lambda: raw(f"UPDATE {TABLE} SET status = 'DRAFT' WHERE id = %s"))
    refused_by_trigger(lambda: raw(f"DELETE FROM {TABLE} WHERE id = %s"))

    published.refresh_from_db()
    assert (published.status, published.rules) == ("PUBLISHED", rules_before)


@pytest.mark.django_db
@pytest.mark.owner_role  # the trigger holds against the owner; the app role has no DELETE
def test_bulk_orm_writes_cannot_change_a_published_version(published):
    versions = ReturnPolicyVersion.objects.filter(pk=published.pk)

    refused_by_trigger(lambda: versions.update(rules=KEEP_ALL))
    refused_by_trigger(lambda: versions.delete())
    published.rules = KEEP_ALL
    refused_by_trigger(lambda: published.save())

    assert ReturnPolicyVersion.objects.get(pk=published.pk).rules != KEEP_ALL


@pytest.mark.django_db
def test_drafts_stay_editable_and_publishing_passes_the_trigger(clock):
    draft = policy_create(code="p", name="P", rules=KEEP_ALL, actor="ann").versions.get()

    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {TABLE} SET created_by = 'raw' WHERE id = %s", [draft.pk])
    policy_publish(draft, "bob")

    refused_by_trigger(lambda: ReturnPolicyVersion.objects.filter(pk=draft.pk)
                       .update(created_by="again"))
    assert ReturnPolicyVersion.objects.get(pk=draft.pk).created_by == "raw"


# --- races (own connections, so committed data; the default policy is made again because a
# transactional test starts from truncated tables) -------------------------------------------


@pytest.fixture
def committed_policy(transactional_db, clock):
    migration = importlib.import_module("refunds.migrations.0002_return_policies")
    if not ReturnPolicy.objects.filter(code="default").exists():
        migration.add_default_policy(apps, None)
    policy = policy_create(code="raced", name="Raced", rules=KEEP_ALL, actor="ann")
    policy_publish(policy.versions.get(), "ann")
    return policy


def test_two_new_drafts_at_once_make_exactly_one(committed_policy):
    outcomes = race(*[lambda: policy_draft_create(committed_policy, "ann").number] * 2)

    assert sorted(outcomes) == [("ok", 2), ("refused", "INVALID_STATE")]
    assert list(committed_policy.versions.values_list("number", "status")) == [
        (1, "PUBLISHED"), (2, "DRAFT")]


def test_an_edit_racing_a_publish_never_changes_the_published_rules(committed_policy):
    # Relabelled, so the draft differs from v1 and publishing it first is not refused.
    draft = policy_draft_create(committed_policy, "ann",
                                rules=[{**KEEP_ALL[0], "label": "still nothing comes back"}])

    outcomes = race(lambda: policy_draft_update(draft.pk, RETURN_ALL, "ann").number,
                    lambda: policy_publish(draft.pk, "bob").number)

    published = ReturnPolicyVersion.objects.get(pk=draft.pk)
    assert published.status == "PUBLISHED"
    if outcomes[0] == ("ok", 2):  # the edit went first: it is what was published
        assert published.rules[0]["action"] == "RETURN"
    else:  # the publish went first: the edit was refused and changed nothing
        assert outcomes[0] == ("refused", "INVALID_STATE")
        assert published.rules[0]["action"] == "KEEP_USED"
    assert outcomes[1] == ("ok", 2)
