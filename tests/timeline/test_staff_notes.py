"""Staff notes on a coupon: written by support and operators, read in the timeline in their own
lane, edited as new notes naming the old, never changed, hidden from who may not read them."""

import re
import uuid

import pytest
from django.urls import reverse

from timeline.models import StaffNote

pytestmark = pytest.mark.django_db


def add(client, coupon, text, key=None, replaces=None):
    data = {"text": text, "form_key": key or str(uuid.uuid4())}
    if replaces:
        data["replaces"] = replaces
    return client.post(reverse("console:note_add", args=[coupon.pk]), data)


def timeline_of(client, coupon) -> str:
    page = client.get(reverse("console:coupon", args=[coupon.pk])).content.decode()
    return page[page.index('id="timeline"'):page.index('id="ledger"')] \
        if 'id="ledger"' in page else page[page.index('id="timeline"'):]


def test_support_writes_a_note_and_it_shows_in_the_timeline_in_its_own_lane(signed_in, coupon):
    client = signed_in("support", "sam")

    answer = add(client, coupon, "Customer called: says the coupon vanished at checkout.")

    assert answer.status_code == 302
    note = StaffNote.objects.get()
    assert (note.author, note.coupon_id) == ("user:sam", coupon.pk)
    timeline = timeline_of(client, coupon)
    assert "Customer called: says the coupon vanished at checkout." in timeline
    entry = timeline[timeline.index("tl-entry tl-note"):]
    assert "by user:sam" in entry[:entry.index("</li>")]
    # The note's lane is the last one, drawn on the note's row only.
    assert 'style="--lanes: 1"' in timeline  # no order yet: the notes' lane alone
    assert entry[:entry.index("</li>")].count("lane here") == 1


def test_the_same_form_sent_twice_writes_one_note(signed_in, coupon):
    client = signed_in("operator")
    key = str(uuid.uuid4())

    add(client, coupon, "Checked with payments.", key=key)
    add(client, coupon, "Checked with payments.", key=key)

    assert StaffNote.objects.count() == 1


@pytest.mark.parametrize("second", ["another person", "other text"])
def test_a_form_key_sent_again_with_another_note_is_refused_not_answered_as_written(
    signed_in, coupon, second
):
    key = str(uuid.uuid4())
    client = signed_in("operator", "olga")
    add(client, coupon, "Checked with payments.", key=key)
    if second == "another person":
        client = signed_in("operator", "oscar")
    text = "Checked with payments." if second == "another person" else "Refund sent."

    answer = add(client, coupon, text, key=key)

    assert answer.status_code == 409
    assert "was already sent with another note" in answer.content.decode()
    assert text in answer.content.decode()  # kept in the form
    assert StaffNote.objects.count() == 1


def test_an_edit_is_a_new_note_and_the_timeline_shows_the_latest_with_its_chain(signed_in,
                                                                              coupon):
    client = signed_in("operator", "olga")
    add(client, coupon, "Refund pending at the bank.")
    first = StaffNote.objects.get()

    answer = add(client, coupon, "Refund arrived on 3 Dec.", replaces=first.pk)

    latest = StaffNote.objects.exclude(pk=first.pk).get()
    assert latest.replaces_id == first.pk
    assert StaffNote.objects.get(pk=first.pk).text == "Refund pending at the bank."
    assert answer["Location"] == reverse("console:note", args=[coupon.pk, latest.pk])
    timeline = timeline_of(client, coupon)
    assert "Refund arrived on 3 Dec." in timeline
    assert "Refund pending at the bank." not in timeline
    assert "Edited staff note" in timeline
    chain = client.get(answer["Location"]).content.decode()
    assert chain.index("Refund arrived on 3 Dec.") < chain.index("Refund pending at the bank.")
    assert f"replaces #{first.pk}" in chain


def test_a_second_edit_of_the_same_wording_is_refused_and_keeps_the_text(signed_in, coupon):
    client = signed_in("operator")
    add(client, coupon, "v1")
    first = StaffNote.objects.get()
    add(client, coupon, "v2 by the first editor", replaces=first.pk)

    answer = add(client, coupon, "v2 by the second editor", replaces=first.pk)

    assert answer.status_code == 409
    page = answer.content.decode()
    assert "NOTE_ALREADY_EDITED" in page
    assert "v2 by the first editor" in page  # what won, to read before editing again
    assert "v2 by the second editor" in page  # their own text, kept in the form
    latest = StaffNote.objects.get(text="v2 by the first editor")
    assert re.search(rf'name="replaces" value="{latest.pk}"', page)
    assert StaffNote.objects.count() == 2


def test_an_empty_note_is_refused_and_writes_nothing(signed_in, coupon):
    answer = add(signed_in("support"), coupon, "   ")

    assert answer.status_code == 400
    assert StaffNote.objects.count() == 0


def test_a_note_of_another_coupon_cannot_be_edited_from_this_one(signed_in, coupon, template,
                                                                ctx):
    from coupons.services import coupon_issue

    client = signed_in("operator")
    add(client, coupon, "on the first coupon")
    other = coupon_issue(template_id=template.pk, user_id="u-2", ctx=ctx).coupon

    answer = add(client, other, "hijack", replaces=StaffNote.objects.get().pk)

    assert answer.status_code == 404
    assert StaffNote.objects.count() == 1


def test_policy_admins_see_that_a_note_exists_but_not_its_text(signed_in, coupon, client):
    add(signed_in("support"), coupon, "Customer's phone is 555-0100.")
    client.logout()

    timeline = timeline_of(signed_in("policy_admin", "pat"), coupon)

    assert "tl-entry tl-note" in timeline
    assert "555-0100" not in timeline
    assert "its text is for those who write notes or see case notes" in timeline
    assert 'id="add-note"' not in timeline


def test_policy_admins_cannot_write_notes(signed_in, coupon):
    answer = add(signed_in("policy_admin"), coupon, "not mine to write")

    assert answer.status_code == 403
    assert StaffNote.objects.count() == 0


def test_a_note_row_cannot_be_saved_again_or_deleted_through_the_orm(signed_in, coupon):
    add(signed_in("support"), coupon, "kept")
    note = StaffNote.objects.get()

    note.text = "rewritten"
    with pytest.raises(TypeError):
        note.save()
    with pytest.raises(TypeError):
        note.delete()


def test_a_new_note_is_confirmed_and_the_timeline_opens_at_it(signed_in, coupon):
    client = signed_in("support", "sam")

    answer = add(client, coupon, "customer called twice")

    note = StaffNote.objects.get()
    location = answer["Location"]
    key = location.rsplit("#t-", 1)[1]
    assert location == f"/coupons/{coupon.pk}/?from={key}#t-{key}"
    page = client.get(location).content.decode()
    assert f"Note #{note.pk} added; the timeline opens at it." in page
    assert f'<li id="t-{key}" class="tl-entry tl-note"' in page
