"""Nothing the application's login can hold stalls the sequencer: it takes turns on the log
table in a mode only the sequencer's role may take, and it waits for another sequencer a
bounded time, then says so and exits 75 (operations/db_roles.py, sequence_journal)."""

import io

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from coupons.models import JournalLeaf
from operations.db_roles import SEQUENCER_LOCK_SQL
from tests.coupons.safety.test_db_roles import app_login

pytestmark = pytest.mark.django_db


def owner_login():
    settings = connection.settings_dict
    return psycopg.connect(host=settings["HOST"], port=settings["PORT"] or 5432,
                           dbname=settings["NAME"], user=settings["USER"],
                           password=settings["PASSWORD"] or None, autocommit=False)


def sequence(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("sequence_journal", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        return exit_.code, out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def test_the_app_login_holding_the_old_advisory_lock_does_not_stall_the_sequencer(redeemed):
    with app_login() as app:
        app.execute("SELECT pg_advisory_lock(9162)")

        status, out, _ = sequence("--lock-timeout", "1")

    assert status == 0 and out.startswith("5 journal entries sequenced")
    assert JournalLeaf.objects.count() == 5


def test_the_app_login_cannot_take_the_sequencers_lock(db):
    with app_login() as app, pytest.raises(psycopg.errors.InsufficientPrivilege), \
            app.transaction():
        app.execute(SEQUENCER_LOCK_SQL)


def test_another_sequencer_holding_the_log_makes_it_exit_75_within_its_timeout(redeemed):
    with owner_login() as other:
        other.execute(SEQUENCER_LOCK_SQL)  # the other run's turn, not committed yet

        status, out, err = sequence("--lock-timeout", "0.2")

    assert status == 75 and out == ""
    assert err == ("sequence_journal: another sequencer held the journal log for 0.2 s; 0 "
                   "journal entries sequenced, the next run sequences the rest\n")
    assert not JournalLeaf.objects.exists()
