"""The admin shows policies and versions; only drafts are editable, only through the services,
only by policy admins; a published version refuses every write."""

import json

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from refunds.models import ReturnPolicy, ReturnPolicyVersion
from refunds.services.policies import policy_create

pytestmark = pytest.mark.django_db

KEEP_ALL = [{"label": "nothing comes back", "when": {}, "action": "KEEP_USED"}]


def staff(group: str) -> Client:
    user = User.objects.create_user(f"{group}-staff", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    client = Client()
    client.force_login(user)
    return client


def version_url(version) -> str:
    return f"/admin/refunds/returnpolicyversion/{version.pk}/change/"


@pytest.fixture
def draft(clock):
    return policy_create(code="p", name="P", rules=KEEP_ALL, actor="ann").versions.get()


@pytest.fixture
def published():
    return ReturnPolicyVersion.objects.get(policy__code="default")


def test_support_sees_policies_and_versions_read_only(published, draft):
    support = staff("support")

    assert support.get("/admin/refunds/returnpolicy/").status_code == 200
    page = support.get(version_url(draft))
    assert page.status_code == 200
    assert b'name="rules"' not in page.content  # a view, not a form
    response = support.post(version_url(draft), {"rules": json.dumps(KEEP_ALL)})
    assert response.status_code == 403


def test_published_version_page_is_read_only_and_refuses_a_post(published):
    admin = staff("policy_admin")
    before = published.rules

    page = admin.get(version_url(published))
    assert page.status_code == 200
    assert b'name="rules"' not in page.content
    assert b"Full refund within 30 days" in page.content
    response = admin.post(version_url(published), {"rules": json.dumps(KEEP_ALL)})

    assert response.status_code == 403
    published.refresh_from_db()
    assert published.rules == before


def test_policy_admin_edits_a_draft_through_the_service(draft):
    admin = staff("policy_admin")
    rules = [{"label": "everything back", "when": {}, "action": "RETURN"}]

    assert b'name="rules"' in admin.get(version_url(draft)).content
    response = admin.post(version_url(draft), {"rules": json.dumps(rules)})

    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.rules == [{**rules[0], "requires_approval": False, "compensation": {}}]


def test_invalid_rules_are_shown_beside_the_field_and_change_nothing(draft):
    admin = staff("policy_admin")
    bad = [{"label": "x", "when": {"refunded_share_min": 2}, "action": "RETURN"}, *KEEP_ALL]

    response = admin.post(version_url(draft), {"rules": json.dumps(bad)})

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["rules"]
    assert errors == ["rule 0 › when › refunded_share_min: must be between 0 and 1"]
    draft.refresh_from_db()
    assert draft.rules[0]["label"] == "nothing comes back"


def test_publish_action_freezes_drafts_and_warns_on_published(draft, published):
    admin = staff("policy_admin")

    response = admin.post("/admin/refunds/returnpolicyversion/", {
        "action": "publish", "_selected_action": [draft.pk, published.pk]}, follow=True)

    assert response.status_code == 200
    shown = [str(message) for message in response.context["messages"]]
    assert "p v1 published." in shown
    assert any("never changes" in message for message in shown)
    draft.refresh_from_db()
    assert draft.status == "PUBLISHED"


def test_start_draft_action_and_adding_a_policy(clock, published):
    admin = staff("policy_admin")

    admin.post("/admin/refunds/returnpolicy/", {
        "action": "start_draft", "_selected_action": [published.policy_id]})
    response = admin.post("/admin/refunds/returnpolicy/add/", {
        "code": "new", "name": "New", "versions-TOTAL_FORMS": 0,
        "versions-INITIAL_FORMS": 0})

    assert response.status_code == 302
    assert ReturnPolicyVersion.objects.get(policy=published.policy, number=2).status == "DRAFT"
    created = ReturnPolicy.objects.get(code="new").versions.get()
    assert (created.status, created.rules) == ("DRAFT", published.rules)


def test_operator_can_neither_add_nor_publish(draft):
    operator = staff("operator")

    assert operator.get("/admin/refunds/returnpolicy/add/").status_code == 403
    operator.post("/admin/refunds/returnpolicyversion/", {
        "action": "publish", "_selected_action": [draft.pk]})
    draft.refresh_from_db()
    assert draft.status == "DRAFT"
    assert operator.post("/admin/refunds/returnpolicyversion/1/delete/").status_code == 403


def test_template_admin_offers_only_published_policies(draft):
    admin = User.objects.create_superuser("root", password="pw")
    client = Client()
    client.force_login(admin)

    form = client.get("/admin/coupons/coupontemplate/add/").context["adminform"].form

    assert [p.code for p in form.fields["return_policy"].queryset] == ["default"]
