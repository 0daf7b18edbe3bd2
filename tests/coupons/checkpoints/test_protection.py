"""The stored checkpoints are history: the database refuses to change them."""

import pytest
from django.db import DatabaseError, connection, transaction

from coupons.models import LedgerCheckpoint
from operations.checkpoint import ledger_checkpoint

pytestmark = [
    pytest.mark.django_db,]


@pytest.mark.parametrize(("model", "sql"), [
    (LedgerCheckpoint, "UPDATE coupons_ledgercheckpoint SET signature = 'AAAA'"),
    (LedgerCheckpoint, "DELETE FROM coupons_ledgercheckpoint"),
])
def test_raw_writes_to_a_stored_checkpoint_are_refused(redeemed, checkpoint_dir, model, sql):
    ledger_checkpoint()
    before = list(model.objects.values())

    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)

    assert list(model.objects.values()) == before
