"""Staff notes and the console's view log are evidence: the database refuses to change or
delete them (for the owner too), the application role may only read and add them, and
verify_seals finds an edited one."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction

from console.models import StaffNote, ViewRecord
from console.notes import note_add
from tests.app_role import as_owner
from tests.coupons.safety.test_seals import edit_past_triggers

pytestmark = pytest.mark.django_db


@pytest.fixture
def note(coupon):
    return note_add(coupon_id=coupon.pk, author="user:sam", text="called", form_key="k-1")


@pytest.fixture
def view(coupon):
    return ViewRecord.objects.create(actor="user:sam", page="coupon", path="/coupons/1/",
                                     coupon_id=coupon.pk, created_at=coupon.issued_at)


def refused(sql: str, params=()) -> str:
    with pytest.raises(DatabaseError) as caught, transaction.atomic(), \
            connection.cursor() as cursor:
        cursor.execute(sql, params)
    return str(caught.value)


TABLES = {"note": ("timeline_staffnote", "author"), "view": ("timeline_viewrecord", "actor")}


@pytest.mark.parametrize("kind", TABLES)
def test_the_owner_cannot_rewrite_delete_or_truncate_them(request, kind):
    row = request.getfixturevalue(kind)
    table, column = TABLES[kind]
    with as_owner():
        with connection.cursor() as cursor:  # TRUNCATE waits for no deferred FK check
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for sql, params in ((f"UPDATE {table} SET {column} = %s WHERE id = %s",
                             ["user:intruder", row.pk]),
                            (f"DELETE FROM {table} WHERE id = %s", [row.pk]),
                            (f"TRUNCATE {table}", [])):
            assert "pgtrigger: Cannot" in refused(sql, params)
    assert type(row).objects.get(pk=row.pk).seal == row.seal


@pytest.mark.parametrize("kind", TABLES)
def test_the_application_role_may_only_read_and_insert_them(request, kind):
    row = request.getfixturevalue(kind)
    table, column = TABLES[kind]

    assert "permission denied" in refused(f"UPDATE {table} SET {column} = 'x' WHERE id = %s",
                                          [row.pk])
    assert "permission denied" in refused(f"DELETE FROM {table} WHERE id = %s", [row.pk])


def test_saved_filters_stay_the_persons_to_change(django_user_model, coupon):
    from console.models import SavedFilter

    kept = SavedFilter.objects.create(user=django_user_model.objects.create_user("olga"),
                                      page="cases", name="open", query="status=open",
                                      created_at=coupon.issued_at)
    kept.delete()  # as the app role: personal settings, not evidence

    assert not SavedFilter.objects.exists()


def test_an_edited_note_fails_its_seal(note, view, broken_on_purpose):
    out = io.StringIO()
    call_command("verify_seals", stdout=out)
    assert "every seal holds" in out.getvalue()

    edit_past_triggers(StaffNote, note.pk, text="something else")

    out = io.StringIO()
    with pytest.raises(CommandError, match="1 of"):
        call_command("verify_seals", stdout=out)
    assert out.getvalue() == f"timeline_staffnote id={note.pk}: was changed after it was " \
        "sealed\n"
