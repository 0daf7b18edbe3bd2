import uuid

import psycopg
import pytest
from django.db import connection


@pytest.fixture
def fresh_database():
    """A database of its own, made and dropped by the owner (the tests' login); roles are the
    cluster's, so coupon_app is shared with every other test database."""
    name = f"h_serve_{uuid.uuid4().hex[:12]}"
    settings = connection.settings_dict
    with psycopg.connect(host=settings["HOST"], port=settings["PORT"] or 5432,
                         user=settings["USER"], dbname="postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield name
        finally:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
