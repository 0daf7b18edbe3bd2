"""The per-coupon check's journal half: every evidence row of the coupon is the fold of its
entries (coupons/evidence/replay.py, invariant 9).

The ledger rows are folded where the replay reads them. Every other journaled table with a
coupon column is read here:

- a table whose rows move (refund decisions, compensations, cases, redemptions): every row of
  the coupon, on every check; an UPDATE past the services shows as soon as it is made, and a
  coupon has few such rows;
- a table written once per row (order bindings, refusals, notes, view records): the rows after
  the last check's mark, and the number of rows up to it, counted again on every check. The
  mark moves only over rows whose entries the newest verified signed head covers
  (coupons/evidence/signed_coverage.py): a row not covered yet is folded on every check. A row
  inserted below the mark, whatever its id (-1 included), or one deleted there, changes that
  count, and the whole table is folded again for the coupon. An edit of a covered row that
  gets past the triggers (the owner's) is the full check's, the signer's and
  `verify_ledger`'s to name.

A view reads at most the newest COUPON_CHECK_NEWEST_ROWS rows of a table after its mark (of a
table whose rows move, of the table): more, and the older ones are left to the full check,
the mark stays where it was and the check says so. The statement that counts the rows also
reads the journal's newest entries about the coupon (coupons/evidence/journal_tail.py).
"""

from dataclasses import dataclass

from django.db import connection
from django.utils.translation import gettext

from coupons.evidence.journal import fold_problem, journaled_models, with_journal
from coupons.evidence.journal_tail import tail_problems, tail_sql
from coupons.evidence.signed_coverage import covered_prefix, with_log_position
from coupons.models import CouponOperation


def coupon_tables() -> list:
    """The journaled models about one coupon, the ledger left out (the replay folds it)."""
    return [model for model in journaled_models()
            if model is not CouponOperation and model.JOURNAL_COUPON]


def _moves(model) -> bool:
    return bool(model.JOURNAL_STEPS)


def _counts(coupon_id: int, marks: dict, newest: int | None) -> tuple[dict, str | None]:
    """({label: (rows after the mark, rows up to it)} for every table, the journal's newest
    entries about the coupon (journal_tail.tail_sql)), in one query. A table whose rows move
    has no mark: (its rows, 0), so that a coupon with none costs no query."""
    parts, params, labels = [], [], []
    for model in coupon_tables():
        label = model._meta.label_lower
        table = connection.ops.quote_name(model._meta.db_table)
        column = connection.ops.quote_name(model._meta.get_field(model.JOURNAL_COUPON).column)
        if _moves(model):
            parts.append(f"(SELECT count(*) FROM {table} WHERE {column} = %s), 0")  # noqa: S608
            params.append(coupon_id)
        else:
            parts.append(f"(SELECT count(*) FROM {table} WHERE {column} = %s AND id > %s), "  # noqa: S608
                         f"(SELECT count(*) FROM {table} WHERE {column} = %s AND id <= %s)")
            mark = marks.get(label, [0, 0])[0]
            params += [coupon_id, mark, coupon_id, mark]
        labels.append(label)
    tail, tail_params = tail_sql(coupon_id, newest)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join([*parts, tail])}", [*params, *tail_params])
        values = cursor.fetchone()
    return ({label: (values[2 * i], values[2 * i + 1]) for i, label in enumerate(labels)},
            values[-1])


@dataclass
class JournalChecked:
    problems: list  # sentences, invariant 9
    marks: dict  # where the next check resumes, past the rows the signed head covers
    unread: int  # rows left to the full check (more than a view reads after a mark)
    tail: list  # (invariant, sentence) of the journal's newest entries (journal_tail)


def coupon_journal_problems(coupon_id: int, marks: dict | None, signed: int, *,
                            newest: int | None = None) -> JournalChecked:
    """Every row of the coupon that is not the fold of its entries, and the marks the next
    check resumes from: past the rows the signed journal size `signed` covers. `marks` is
    what the last check that held returned; None: fold every row. With `newest`, at most the
    newest `newest` rows of each table after its mark."""
    marks = marks or {}
    counts, tail = _counts(coupon_id, marks, newest)
    problems, new_marks, unread = [], {}, 0
    for model in coupon_tables():
        label = model._meta.label_lower
        rows = model.objects.filter(**{model.JOURNAL_COUPON: coupon_id})
        after, up_to = counts[label]
        mark, counted = (0, 0) if _moves(model) else marks.get(label, [0, 0])
        if up_to != counted:
            # A row inserted or deleted below the mark: fold the table again from the start.
            mark, counted, after = 0, 0, after + up_to
        elif not _moves(model):
            rows = rows.filter(pk__gt=mark)
        rows = with_log_position(with_journal(rows))
        if newest is not None and after > newest:
            found = _newest(rows, newest, signed)
        else:
            found = list(rows.order_by("pk")) if after else []
        unread += after - len(found)
        problems += row_problems(found)
        if not _moves(model):
            # Rows left unread sit below the ones read: the mark moves over none of them.
            covered = found[:covered_prefix(found, signed)] if len(found) == after else []
            new_marks[label] = [max([mark, *(row.pk for row in covered)]),
                                counted + len(covered)]
    return JournalChecked(problems=problems, marks=new_marks, unread=unread,
                          tail=tail_problems(tail))


def _newest(rows, newest: int, signed: int) -> list:
    """More than `newest` rows: the newest `newest`, or all of them when the signed size
    `signed` covers the one before those (and so the older ones): a covered history is read
    once, and the mark moves over it; one no signed head covers is left to the full check."""
    found = list(rows.order_by("-pk")[:newest + 1])[::-1]
    if covered_prefix(found[:1], signed):
        return list(rows.order_by("pk"))
    return found[1:]


def row_problems(rows) -> list[str]:
    """One sentence per row of `rows` (read with_journal) that is not its entries' fold."""
    return [gettext("%(row)s %(id)s: %(problem)s") % {
        "row": row._meta.verbose_name, "id": row.pk, "problem": problem}
        for row in rows if (problem := fold_problem(row)) is not None]
