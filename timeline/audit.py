"""The console's view log: who opened which coupon, queue or search, and who exported what.

One statement per view, in the request (the row; the database journals it): a view that cannot be
recorded is not shown, as an action that cannot be logged is not done.
"""

from coupons import clock
from coupons.identity import actor_of
from coupons.write.declared import declared_insert
from timeline.models import ViewRecord

PATH_MAX = 500


def record_view(request, *, page: str, coupon_id: int | None = None,
                kind: str = ViewRecord.Kind.VIEW) -> ViewRecord:
    actor = actor_of(request.user)
    return declared_insert(ViewRecord(
        actor=actor, kind=kind, page=page, path=request.get_full_path()[:PATH_MAX],
        coupon_id=coupon_id, created_at=clock.now()), actor=actor)
