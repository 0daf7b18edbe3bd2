"""Retention runs on the database's clock, which tests cannot freeze: they set the app's clock
to the database's and age rows on the database's clock instead."""

from datetime import datetime, timedelta

from django.db import connection

from tests.app_role import past_the_triggers


def db_now() -> datetime:
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        return cursor.fetchone()[0]


def aged(model, pks, column: str, **ago) -> None:
    """Sets `column` of the rows to `ago` (timedelta's arguments) before the database's now,
    past the triggers: what those rows would say had they been written that long ago."""
    table = model._meta.db_table
    with past_the_triggers(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {column} = now() - %s WHERE id = ANY(%s)",
                       [timedelta(**ago), list(pks)])
