"""Which database a query goes to when read replicas are configured (docs/deploy.md).

Writes always go to the primary ("default"). A read goes to a replica only when the request was
judged safe for one (common/replica_reads.py sets `reading_from`) and none of these holds:
- the model is one whose staleness would be wrong rather than old: who may sign in and what
  they may do (auth, sessions, django-axes' lockouts, service clients' keys) and the
  idempotency records a command claims;
- the primary's connection is inside a transaction: whatever a block reads under a row lock
  or before it writes must be what it writes against, so it reads where it writes.
"""

from contextvars import ContextVar

from django.db import DEFAULT_DB_ALIAS, connections

# The replica alias this request's reads may use; None (the default) means the primary.
reading_from: ContextVar[str | None] = ContextVar("reading_from", default=None)

PRIMARY_APPS = frozenset({"auth", "sessions", "axes", "contenttypes", "admin"})
PRIMARY_MODELS = frozenset({"coupons.serviceclient", "coupons.idempotencyrecord"})


def read_alias(model, replica: str, *, in_transaction: bool) -> str:
    """Where a read of `model` goes in a request that may read from `replica`."""
    meta = model._meta
    if meta.app_label in PRIMARY_APPS or meta.label_lower in PRIMARY_MODELS or in_transaction:
        return DEFAULT_DB_ALIAS
    return replica


class ReplicaRouter:
    def db_for_read(self, model, **hints):
        replica = reading_from.get()
        if replica is None:  # most requests: no look at the connection at all
            return DEFAULT_DB_ALIAS
        return read_alias(model, replica,
                          in_transaction=connections[DEFAULT_DB_ALIAS].in_atomic_block)

    def db_for_write(self, model, **hints):
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        return True  # a replica holds the same rows as the primary, a little later

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == DEFAULT_DB_ALIAS  # replicas replay the primary's schema
