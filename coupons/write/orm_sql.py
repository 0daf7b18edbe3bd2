"""The only place that leans on Django's ORM internals for the commands' hand-written SQL.

The commands' statements are built from the models' fields (coupons.write.statements) and
read back as select_related would leave them (coupons.write.rows). One thing there is still
the ORM's own work, taken from an API Django does not document, so it lives here and nowhere
else:

- `cache_related`: a related object set on an instance as select_related leaves it
  (the field's set_cached_value), so reading `coupon.current_lock` after the row lock costs no
  query.

tests/coupons/write/test_orm_sql.py pins it: a Django upgrade that changes it fails there
before any command does.
"""


def cache_related(instance, field_name: str, related) -> None:
    """`instance.<field_name>` answers `related` (None too) without a query."""
    instance._meta.get_field(field_name).set_cached_value(instance, related)
