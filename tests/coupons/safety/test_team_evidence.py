"""Staff notes and the console's view log are evidence: the database refuses to change or
delete them (for the owner too), the application role may only read and add them, and
verify_journal finds an edited one."""


import pytest
from django.db import DatabaseError, connection, transaction

from coupons.write.declared import declared_insert
from tests.app_role import as_owner
from tests.coupons.safety.test_evidence_journal import edit_past_triggers, verify_journal
from timeline.models import StaffNote, ViewRecord
from timeline.notes import note_add

pytestmark = pytest.mark.django_db


@pytest.fixture
def note(coupon):
    return note_add(coupon_id=coupon.pk, author="user:sam", text="called", form_key="k-1")


@pytest.fixture
def view(coupon):
    return declared_insert(ViewRecord(actor="user:sam", page="coupon", path="/coupons/1/",
                                      coupon_id=coupon.pk, created_at=coupon.issued_at),
                           actor="user:sam")


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
    assert getattr(type(row).objects.get(pk=row.pk), column) == getattr(row, column)


@pytest.mark.parametrize("kind", TABLES)
def test_the_application_role_may_only_read_and_insert_them(request, kind):
    row = request.getfixturevalue(kind)
    table, column = TABLES[kind]

    assert "permission denied" in refused(f"UPDATE {table} SET {column} = 'x' WHERE id = %s",
                                          [row.pk])
    assert "permission denied" in refused(f"DELETE FROM {table} WHERE id = %s", [row.pk])


def test_saved_filters_stay_the_persons_to_change(django_user_model, coupon):
    from timeline.models import SavedFilter

    kept = SavedFilter.objects.create(user=django_user_model.objects.create_user("olga"),
                                      page="cases", name="open", query="status=open",
                                      created_at=coupon.issued_at)
    kept.delete()  # as the app role: personal settings, not evidence

    assert not SavedFilter.objects.exists()


def test_an_edited_note_is_named_by_its_journal(note, view, broken_on_purpose):
    assert verify_journal()[1] == ""

    broken_on_purpose.add(note.coupon_id)
    edit_past_triggers(StaffNote, note.pk, text="something else")

    out, failed = verify_journal()
    assert failed == "1 journal entries or rows fail."
    assert out == (f'timeline.staffnote id={note.pk}: text is "something else", its journal '
                   'says "called"\n')
