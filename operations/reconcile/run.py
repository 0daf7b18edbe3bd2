"""One reconciliation run: every coupon, in keyset batches, findings recorded per batch."""

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from coupons import clock
from coupons.models import (
    Finding,
    FindingKind,
    FindingStatus,
    ReconciliationRun,
    UserCoupon,
)
from coupons.write.declared import declared_insert, declared_moves
from operations.reconcile.checks import (
    COUPON_FIELDS,
    check_batch,
    coupon_range,
    load_batch,
)
from operations.reconcile.summaries import summary_fields

# The kinds only the order and payment systems' exports show (operations/reconcile/exports.py).
EXPORT_KINDS = (FindingKind.PAID_WITHOUT_BINDING, FindingKind.FACT_NEVER_SENT)
INTERNAL_KINDS = tuple(kind for kind in FindingKind.values if kind not in EXPORT_KINDS)

DISMISSED = "DISMISSED"


def reconcile_run(*, actor: str, batch_size: int | None = None,
                  run: ReconciliationRun | None = None, progress=None) -> ReconciliationRun:
    """Check every coupon; open new findings, refresh the ones still true, close the rest.

    Batches walk coupon ids upwards (`id > last`, never OFFSET), each read and recorded on
    its own, so memory stays at one batch and a long run holds no lock across batches. The
    run row keeps the last coupon recorded, so an interrupted run (`unfinished_run`) goes on
    from there: a batch cut short rolled back whole and is checked again.
    """
    size = batch_size or settings.COUPONS["RECONCILE_BATCH_SIZE"]
    if run is None:
        run = ReconciliationRun.objects.create(started_at=clock.now(), started_by=actor)
    while True:
        coupons = list(UserCoupon.objects.filter(id__gt=run.last_coupon_id).order_by("id")
                       .values(*COUPON_FIELDS)[:size])
        if not coupons:
            break
        new, still_open, closed = record_batch(coupons, check_batch(load_batch(coupons)),
                                              actor=actor)
        run.last_coupon_id = coupons[-1]["id"]
        run.coupons_checked += len(coupons)
        run.found_new += new
        run.still_open += still_open
        run.closed += closed
        run.save(update_fields=["last_coupon_id", "coupons_checked", "found_new",
                                "still_open", "closed"])
        if progress is not None:
            progress.advance(len(coupons))
    run.finished_at = clock.now()
    run.save(update_fields=["finished_at"])
    return run


def unfinished_run() -> ReconciliationRun | None:
    """The newest run that never finished (interrupted, or its process killed)."""
    return (ReconciliationRun.objects.filter(finished_at=None).order_by("-started_at", "-pk")
            .first())


def coupons_after(coupon_id: int) -> int:
    return UserCoupon.objects.filter(id__gt=coupon_id).count()


def moved_since(coupons: list[dict]) -> set[int]:
    """Coupons a command changed while the batch was read: their reads may disagree (a
    redeem committing between two queries), so they wait for the next run, untouched."""
    read = {c["id"]: c["state_version"] for c in coupons}
    now = UserCoupon.objects.filter(id__range=(coupons[0]["id"], coupons[-1]["id"]))
    return {pk for pk, version in now.values_list("id", "state_version")
            if pk in read and version != read[pk]}


def record_batch(coupons: list[dict], detected: list, *, actor: str,
                 kinds=INTERNAL_KINDS) -> tuple[int, int, int]:
    """Answers (new, still open, closed) for this batch. Only findings of `kinds` (what the
    caller's checks look for) are refreshed or closed: a run over the service's own rows
    never closes what only the other systems' exports can show, nor the other way round."""
    now = clock.now()
    moved = moved_since(coupons)
    ids = {c["id"] for c in coupons} - moved
    found = {d.key: d for d in detected if d.coupon_id not in moved}
    with transaction.atomic():
        known = Finding.objects.select_for_update().filter(
            Q(status=FindingStatus.OPEN) | Q(resolution=DISMISSED), **coupon_range(coupons),
            kind__in=kinds,
        )
        open_findings, dismissed = {}, set()
        for finding in known:
            if finding.coupon_id not in ids:
                continue  # moved meanwhile, or inserted inside the range after the read
            key = (finding.kind, finding.coupon_id, finding.subject)
            if finding.status == FindingStatus.OPEN:
                open_findings[key] = finding
            else:
                dismissed.add(key)
        seen = [finding for key, finding in open_findings.items() if key in found]
        for finding in seen:
            _change(finding, found[(finding.kind, finding.coupon_id, finding.subject)],
                    actor=actor)
        # Not evidence (Finding.JOURNAL_LEAVES_OUT): one plain UPDATE for the batch.
        if seen:
            Finding.objects.filter(pk__in=[finding.pk for finding in seen]).update(
                last_seen_at=now)
        gone = [finding.pk for key, finding in open_findings.items() if key not in found]
        closed = 0
        if gone:
            closed = declared_moves(
                Finding.objects.filter(pk__in=gone, status=FindingStatus.OPEN),
                {"status": FindingStatus.CLOSED, "closed_at": now}, step="closed", actor=actor)
        # A fault a person dismissed stays dismissed while it holds: their decision stands.
        # Another run recording the same fault at once already opened it: one open finding.
        new = [declared_insert(
            Finding(kind=f.kind, severity=f.severity, coupon_id=f.coupon_id, subject=f.subject,
                    order_ids=list(f.order_ids), evidence=f.evidence, **summary_fields(f.summary),
                    repair=f.repair, first_seen_at=now, last_seen_at=now),
            kind="opened", actor=actor, ignore_conflicts=True)
            for key, f in found.items() if key not in open_findings and key not in dismissed]
    return sum(1 for finding in new if finding is not None), len(seen), closed


def _change(finding: Finding, fault, *, actor: str) -> None:
    """The fault holds with other evidence (a severity, a summary, the order ids ...): an
    entry with what changed; nothing when the run saw it as it was."""
    now_says = {"severity": fault.severity, "repair": fault.repair, "evidence": fault.evidence,
                "order_ids": list(fault.order_ids), **summary_fields(fault.summary)}
    changes = {name: value for name, value in now_says.items()
               if getattr(finding, name) != value}
    if changes:
        declared_moves(Finding.objects.filter(pk=finding.pk, status=FindingStatus.OPEN),
                       changes, step="changed", actor=actor)
