"""Staff notes on a coupon page: write one, read the chain of an edited one, edit it."""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from coupons.errors import CouponError, NotFound
from coupons.identity import actor_of
from coupons.selectors import coupon_get
from timeline.capabilities import ConsoleCapability, can_read_notes
from timeline.note_forms import NoteForm
from timeline.notes import (
    NoteAlreadyEdited,
    note_add,
    note_chain,
    note_get,
    note_source,
    note_text,
)
from timeline.views.access import ConsolePage


def coupon_or_404(coupon_id: int):
    try:
        return coupon_get(coupon_id=coupon_id)
    except NotFound as missing:
        raise Http404(f"No coupon {coupon_id}") from missing


class NoteAdd(ConsolePage):
    """A new note, or (with `replaces`) the new wording of one; back to where it shows."""

    capabilities = {"POST": ConsoleCapability.ADD_NOTES}

    def post(self, request, coupon_id: int):
        coupon = coupon_or_404(coupon_id)
        form = NoteForm(request.POST)
        replaces = None
        try:
            if form.is_valid():
                if form.cleaned_data["replaces"]:
                    replaces = note_get(coupon_id=coupon.pk, note_id=form.cleaned_data["replaces"])
                note = note_add(coupon_id=coupon.pk, author=actor_of(request.user),
                                text=form.cleaned_data["text"],
                                form_key=form.cleaned_data["form_key"], replaces=replaces)
                if note.replaces_id:
                    return redirect("console:note", coupon_id=coupon.pk, note_id=note.pk)
                # The timeline opens at the new note, said in the flash: a note added under a
                # long history would otherwise land below the fold, unconfirmed.
                key = note_source(can_read=True).key(note)
                messages.success(request, _("Note #%(id)s added; the timeline opens at it.")
                                 % {"id": note.pk})
                return redirect(f"{reverse('console:coupon', args=[coupon.pk])}"
                                f"?from={key}#t-{key}")
        except NoteAlreadyEdited as refusal:
            # The retry edits the wording that won, under a new key; the text is theirs.
            latest = note_chain(replaces)[0]
            again = NoteForm(initial={"text": form.cleaned_data["text"], "replaces": latest.pk})
            return render(request, "timeline/notes/refused.html", {
                "coupon": coupon, "form": again, "error": refusal.as_body()["error"],
                "latest": latest, "latest_text": note_text(latest, can_read=True),
            }, status=refusal.http_status)
        except CouponError as refusal:
            return render(request, "timeline/notes/refused.html", {
                "coupon": coupon, "form": form, "error": refusal.as_body()["error"],
            }, status=refusal.http_status)
        return render(request, "timeline/notes/refused.html",
                      {"coupon": coupon, "form": form}, status=400)


class NoteChain(ConsolePage):
    """Every wording of one note, newest first, with the form that edits the latest."""

    audit_page = "note"

    def get(self, request, coupon_id: int, note_id: int):
        coupon = coupon_or_404(coupon_id)
        try:
            chain = note_chain(note_get(coupon_id=coupon.pk, note_id=note_id))
        except CouponError as missing:
            raise Http404("No such note.") from missing
        readable = can_read_notes(request.user)
        versions = [{"note": n, "text": note_text(n, can_read=readable)} for n in chain]
        form = None
        if readable and request.user.has_perm(ConsoleCapability.ADD_NOTES.perm):
            form = NoteForm(initial={"text": chain[0].text, "replaces": chain[0].pk},
                            prefix_id=str(chain[0].pk))
        return render(request, "timeline/notes/chain.html",
                      {"coupon": coupon, "versions": versions, "form": form})
