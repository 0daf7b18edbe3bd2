"""The only place that leans on Django's ORM internals to write SQL by hand.

The commands' writes are hand-built PostgreSQL (coupons.write.one_statement, rows): one
statement each instead of the ORM's several. Two things there are still the ORM's own work,
taken from APIs Django does not document, so they live here and nowhere else:

- `update_sql`: the UPDATE the ORM would run for `queryset.update(**changes)`, compiled but not
  run (Query.chain(UpdateQuery), add_update_values, the SQL compiler's as_sql), so the
  compare-and-set's WHERE is exactly the queryset's filter;
- `cache_related`: a related object set on an instance as select_related leaves it
  (the field's set_cached_value), so reading `coupon.current_lock` after the row lock costs no
  query.

tests/coupons/write/test_orm_sql.py pins both: a Django upgrade that changes either fails it
before any command does.
"""

from django.db import connection
from django.db.models.sql import UpdateQuery


def update_sql(queryset, changes: dict) -> tuple[str, list]:
    """The SQL and parameters of `queryset.update(**changes)`, without running it."""
    query = queryset.query.chain(UpdateQuery)
    query.add_update_values(changes)
    sql, params = query.get_compiler(connection=connection).as_sql()
    return sql, list(params)


def cache_related(instance, field_name: str, related) -> None:
    """`instance.<field_name>` answers `related` (None too) without a query."""
    instance._meta.get_field(field_name).set_cached_value(instance, related)
