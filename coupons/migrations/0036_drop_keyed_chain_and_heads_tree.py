from django.db import migrations


class Migration(migrations.Migration):
    """The journal and its signed heads are the evidence: the ledger's keyed hash chain (its
    columns, the record of rows written before it was keyed) and the checkpoints' tree of every
    coupon's chain head (its columns, its stored chunks) go. The journal entries already leave
    them out, and the checkpoints signed before keep their signed text (`body`)."""

    dependencies = [
        ('coupons', '0035_inbox_journal'),
    ]

    operations = [
        migrations.DeleteModel(
            name='LedgerCheckpointChunk',
        ),
        migrations.RemoveField(
            model_name='couponoperation',
            name='chain_key_id',
        ),
        migrations.RemoveField(
            model_name='couponoperation',
            name='content_hash',
        ),
        migrations.RemoveField(
            model_name='couponoperation',
            name='prev_hash',
        ),
        migrations.RemoveField(
            model_name='ledgercheckpoint',
            name='chunk_first_ids',
        ),
        migrations.RemoveField(
            model_name='ledgercheckpoint',
            name='chunk_roots',
        ),
        migrations.RemoveField(
            model_name='ledgercheckpoint',
            name='root',
        ),
        migrations.RemoveField(
            model_name='ledgercheckpoint',
            name='tree_size',
        ),
        migrations.DeleteModel(
            name='UnkeyedLedgerPrefix',
        ),
    ]
