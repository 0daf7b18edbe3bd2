"""The staff-note form: the text, and the key it was rendered with (a double click writes one
note). An edit carries the id of the note it replaces."""

import uuid

from django import forms
from django.utils.translation import gettext_lazy as _

from timeline.models import StaffNote

TEXT_MAX = StaffNote._meta.get_field("text").max_length


class NoteForm(forms.Form):
    text = forms.CharField(label=_("Note"), max_length=TEXT_MAX, strip=True,
                           widget=forms.Textarea(attrs={"rows": 3}))
    form_key = forms.CharField(widget=forms.HiddenInput, max_length=64,
                               initial=lambda: str(uuid.uuid4()))
    replaces = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)

    def __init__(self, *args, prefix_id: str = "new", **kwargs):
        kwargs.setdefault("auto_id", f"note-{prefix_id}-%s")
        super().__init__(*args, **kwargs)

    def clean_form_key(self) -> str:
        key = self.cleaned_data["form_key"].strip()
        if not key.isprintable():
            raise forms.ValidationError(_("The form's key must be printable characters only."))
        return key
