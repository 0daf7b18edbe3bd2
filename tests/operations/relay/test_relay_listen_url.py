"""RELAY_LISTEN_DATABASE_URL: behind PgBouncer in transaction pooling mode the
relay's LISTEN would hear nothing, so it may hold its session straight on the primary."""

from urllib.parse import quote

import psycopg
import pytest
from django.db import connection

from operations.relay import NOTIFY_CHANNEL, Wakeup


def direct_url(port) -> str:
    settings = connection.settings_dict
    host = quote(settings["HOST"] or "127.0.0.1", safe="")
    return (f"postgres://{settings['USER']}@{host}:{port}/"
            f"{settings['NAME']}?application_name=relay-listen")


@pytest.mark.django_db
def test_the_listen_connection_is_opened_on_the_url_given(settings):
    settings.RELAY_LISTEN_DATABASE_URL = direct_url(connection.settings_dict["PORT"] or 5432)
    wakeup = Wakeup()
    try:
        wakeup.listen()
        listener = wakeup.listener
        assert listener.execute("SHOW application_name").fetchone() == ("relay-listen",)
        assert listener.execute("SELECT pg_listening_channels()").fetchall() == [
            (NOTIFY_CHANNEL,)]
    finally:
        wakeup.close()


@pytest.mark.django_db
def test_an_unreachable_listen_url_fails_the_listen_not_the_batch_connection(settings):
    """Nothing listens on port 1: the LISTEN connection fails (the relay backs off and retries)
    while Django's own connection, on DATABASE_URL, still answers."""
    settings.RELAY_LISTEN_DATABASE_URL = direct_url(1)
    wakeup = Wakeup()
    with pytest.raises(psycopg.OperationalError):
        wakeup.listen()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
