"""The outbox's day partitions, made ahead (PostgreSQL; docs/operating.md).

Creating a partition needs the owner of the outbox (the migrating login), so this runs in
`setup_db_roles` and in `manage.py outbox_partitions` (cron, daily, with the owner's login),
never in the server. Each day partition is handed to coupon_pruner, whose prune function may
then drop it whole once it is past the window and fully published. A day nobody made in time
is not lost: its rows go to the DEFAULT partition and are pruned row by row, as before; that
day then cannot be made any more (PostgreSQL refuses a partition whose rows sit in DEFAULT),
and is skipped.
"""

from datetime import date, timedelta

from django.db import DatabaseError, connection, transaction
from psycopg import sql

from coupons.models.append_only import PRUNER_ROLE

OUTBOX = "coupons_outboxevent"
DAYS_AHEAD = 7


def partition_name(day: date) -> str:
    return f"{OUTBOX}_{day:%Y%m%d}"


def outbox_partition_create(cursor, day: date) -> bool:
    """The partition of `day` (UTC), owned by the pruner; False when it cannot be made."""
    name = sql.Identifier(partition_name(day))
    try:
        with transaction.atomic():
            cursor.execute(sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} PARTITION OF {} FOR VALUES FROM ({}) TO ({})"
            ).format(name, sql.Identifier(OUTBOX), sql.Literal(f"{day.isoformat()} 00:00+00"),
                     sql.Literal(f"{(day + timedelta(days=1)).isoformat()} 00:00+00"))
                .as_string(cursor.connection))
            cursor.execute(sql.SQL("ALTER TABLE {} OWNER TO {}").format(
                name, sql.Identifier(PRUNER_ROLE)).as_string(cursor.connection))
    except DatabaseError:
        return False  # that day's rows are in DEFAULT already
    return True


def outbox_partitions_ahead(days: int = DAYS_AHEAD) -> list[str]:
    """Yesterday's to `days` ahead's partitions (those missing); answers the ones that exist."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT (now() AT TIME ZONE 'UTC')::date")
        today = cursor.fetchone()[0]
        return [partition_name(day) for day in (today + timedelta(days=n)
                                                for n in range(-1, days + 1))
                if outbox_partition_create(cursor, day)]
