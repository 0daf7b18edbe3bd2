"""Who on the floor does what with notes and the Activity page, as docs/console.md says."""

import uuid

import pytest
from django.urls import reverse

from timeline.models import StaffNote

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("role", "status"), [("support", 403), ("operator", 200),
                                              ("policy_admin", 200)])
def test_operators_and_policy_admins_audit_the_floor_support_does_not(signed_in, role, status):
    assert signed_in(role).get(reverse("console:activity")).status_code == status


@pytest.mark.parametrize(("role", "status"), [("support", 302), ("operator", 302),
                                              ("policy_admin", 403)])
def test_support_and_operators_write_notes(signed_in, coupon, role, status):
    answer = signed_in(role).post(reverse("console:note_add", args=[coupon.pk]),
                                  {"text": "Customer called.", "form_key": str(uuid.uuid4())})

    assert answer.status_code == status
    assert StaffNote.objects.count() == (1 if status == 302 else 0)


def test_support_supersedes_an_operators_note_and_the_operators_wording_stays(signed_in,
                                                                               coupon):
    def add(client, text, replaces=None):
        data = {"text": text, "form_key": str(uuid.uuid4())}
        if replaces:
            data["replaces"] = replaces
        return client.post(reverse("console:note_add", args=[coupon.pk]), data)

    add(signed_in("operator", "olga"), "Refund pending.")
    first = StaffNote.objects.get()
    add(signed_in("support", "sam"), "Refund sent, customer told.", replaces=first.pk)

    wordings = list(StaffNote.objects.order_by("pk").values_list("author", "text", "replaces"))
    assert wordings == [("user:olga", "Refund pending.", None),
                        ("user:sam", "Refund sent, customer told.", first.pk)]
