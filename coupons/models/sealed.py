from django.db import models

from coupons.evidence.seals import row_seal


class SealedModel(models.Model):
    """An evidence row sealed when it is written (coupons/evidence/seals.py).

    `save()` seals a new row, and reseals it when one of SEALED_ON_UPDATE is saved with
    update_fields (the value written once later, as an inbox outcome). Bulk writes and
    QuerySet.update() skip it: they leave the row unsealed or stale, and the checks say so.
    """

    SEAL_LEAVES_OUT: tuple[str, ...] = ()
    SEALED_ON_UPDATE: tuple[str, ...] = ()

    seal = models.CharField(max_length=100, blank=True)

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        update_fields = kwargs.get("update_fields")
        if self._state.adding:
            self.seal = row_seal(self)
        elif update_fields and set(update_fields) & set(self.SEALED_ON_UPDATE):
            self.seal = row_seal(self)
            kwargs["update_fields"] = [*update_fields, "seal"]
        super().save(*args, **kwargs)
