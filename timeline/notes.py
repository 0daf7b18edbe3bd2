"""Staff notes: what people write on a coupon, kept like the rest of its history.

A note is never changed: an edit is a new note that names the one it replaces (`replaces`,
unique, so two people editing one note at once cannot both succeed: the second is told, and
keeps their text). The timeline shows the latest wording of each note, in a lane of its own,
with a link to the chain of earlier wordings.
"""

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from coupons import clock
from coupons.errors import CouponError, ValidationFailed
from coupons.history import Source, entry, of
from coupons.redaction import visible
from coupons.write.declared import declared_insert
from timeline.models import StaffNote

NOTE_LANE_COLOUR = "#6e7781"
SEARCH_LIMIT = 20


class NoteAlreadyEdited(CouponError):
    code = "NOTE_ALREADY_EDITED"
    http_status = 409
    message = gettext_lazy("Someone edited this note first: read their wording, then edit it "
                           "again. Your text is kept in the form.")


class NoteFormAlreadySent(CouponError):
    code = "NOTE_FORM_ALREADY_SENT"
    http_status = 409
    message = gettext_lazy("This form was already sent with another note, so yours was not "
                           "written. Your text is kept in the form: open the coupon again to "
                           "add it.")


class NoteNotFound(CouponError):
    code = "NOT_FOUND"
    http_status = 404
    message = gettext_lazy("There is no such note on this coupon.")


def note_add(*, coupon_id: int, author: str, text: str, form_key: str,
             replaces: StaffNote | None = None) -> StaffNote:
    """Writes a note (or the new wording of `replaces`). The same form sent twice answers the
    note its first sending wrote; the key sent again by someone else, or with other text, is
    refused (NoteFormAlreadySent): answering the first note would tell them theirs was kept."""
    if replaces is not None and replaces.coupon_id != coupon_id:
        raise NoteNotFound(note_id=replaces.pk)
    try:
        with transaction.atomic():
            return declared_insert(StaffNote(
                coupon_id=coupon_id, author=author, text=text, form_key=form_key,
                replaces=replaces, created_at=clock.now()), actor=author)
    except IntegrityError:
        sent_before = StaffNote.objects.filter(form_key=form_key).first()
        if sent_before is not None:
            if sent_before.coupon_id != coupon_id:
                raise ValidationFailed(
                    form_key=_("This form's key was used on another coupon.")) from None
            replaces_id = replaces.pk if replaces is not None else None
            if (sent_before.author, sent_before.text, sent_before.replaces_id) != (
                author, text, replaces_id
            ):
                raise NoteFormAlreadySent(note_id=sent_before.pk) from None
            return sent_before
        raise NoteAlreadyEdited(note_id=replaces.pk if replaces else None) from None


def note_get(*, coupon_id: int, note_id) -> StaffNote:
    note = StaffNote.objects.filter(coupon_id=coupon_id, pk=note_id).first()
    if note is None:
        raise NoteNotFound(note_id=note_id)
    return note


def note_chain(note: StaffNote) -> list[StaffNote]:
    """Every wording of the note, newest first: from the latest back to the first. One query
    (the coupon's notes), walked here."""
    notes = {n.pk: n for n in StaffNote.objects.filter(coupon_id=note.coupon_id)}
    replaced_by = {n.replaces_id: n for n in notes.values() if n.replaces_id}
    latest = notes[note.pk]
    while latest.pk in replaced_by:
        latest = replaced_by[latest.pk]
    chain = [latest]
    while chain[-1].replaces_id:
        chain.append(notes[chain[-1].replaces_id])
    return chain


def note_text(note: StaffNote, *, can_read: bool) -> str | None:
    """The note's text, or None for a reader who may only see that a note exists."""
    return visible(StaffNote, {"text": note.text}, can_see_details=can_read).get("text")


def _note_entry(note, can_read):
    built = entry(note.created_at, "note", note.pk,
                  _("Edited staff note") if note.replaces_id else _("Staff note"),
                  actor=note.author)
    built["note"] = {"id": note.pk, "text": note_text(note, can_read=can_read),
                     "edited": bool(note.replaces_id)}
    return built


def note_source(*, can_read: bool) -> Source:
    """The latest wording of each note: one timeline entry per note, at its last edit. Who may
    read a note is the console's rule (timeline.capabilities.can_read_notes), not the case
    notes' flag the core passes to its own sources."""
    return Source("note", 0, "created_at",
                  lambda c: StaffNote.objects.filter(of(c, "coupon_id"),
                                                    replaced_by__isnull=True),
                  lambda note, _details: _note_entry(note, can_read))


def with_note_lane(entries: list[dict], lane_count: int) -> tuple[list[dict], int]:
    """Notes get a lane of their own after the orders' lanes (only on a page that has any)."""
    if not any(e["kind"] == "note" for e in entries):
        return entries, lane_count
    for e in entries:
        here = e["kind"] == "note"
        e["cells"] = [*e["cells"], {"colour": NOTE_LANE_COLOUR if here else "", "here": here}]
    return entries, lane_count + 1


def notes_matching(text: str, *, can_read: bool) -> list[StaffNote]:
    """The latest notes whose text holds `text` (any case), newest first, at most
    SEARCH_LIMIT. A reader who may not read notes finds none by their text."""
    if not can_read or not text:
        return []
    return list(StaffNote.objects.filter(text__icontains=text, replaced_by__isnull=True)
                .order_by("-created_at", "-id")[:SEARCH_LIMIT])
