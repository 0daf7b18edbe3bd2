"""`verify_ledger`'s journal half: does the journal's Merkle log still hold what was signed?

Given the chain of signed checkpoints (oldest first, each verified under the auditor's key and
naming the one before), it reads every log position once and checks:

1. the positions are consecutive from 0 and each leaf hash is SHA-256(0x00 || its entry's
   content), recomputed here (the log's tree is built from the recomputed leaves);
2. between each consecutive pair of signed journal heads, an RFC 9162 consistency proof computed
   from those leaves holds, and the newest head's root is the root of its first `journal_size`
   leaves;
3. every signed claim about a range of leaves (each head's root, each node of the consistency
   proof the signer put into a checkpoint) still holds: the smallest ranges that fail name the
   positions one of which was rewritten or removed, and the entries at them with their coupons;
4. every journaled row is the fold of its entries (coupons.evidence.journal.journal_problems).

With the signer's leaves files (operations/signer_files.py: the leaf hashes each checkpoint
signed), once they make the newest signed root, 3 is exact: every position whose entry no
longer makes the leaf signed there is named, and no other. Without them, the ranges of 3.

Only the signed text is trusted; the stored subtree hashes (JournalNode) are not read here.
"""

from dataclasses import dataclass, field

from django.db import connection

from coupons.evidence import merkle
from coupons.evidence.journal import journal_problems, journaled_models
from coupons.models import JournalEntry

PAGE = 5000
NAMED_PER_RANGE = 20  # positions named one by one per failing range; the rest are counted
MISSING = bytes(32)  # stands for a position with no leaf: no signed claim over it holds


@dataclass
class Log:
    leaves: list[bytes] = field(default_factory=list)
    entry_ids: list[int | None] = field(default_factory=list)
    # (position, problem) found reading the positions themselves
    broken: list[tuple[int, str]] = field(default_factory=list)


def read_log(progress=None) -> Log:
    """Every position in order, its leaf recomputed from its entry's content (by pages);
    `progress` (common/progress.py) advanced by each page."""
    log = Log()
    with connection.cursor() as cursor:
        while True:
            cursor.execute(
                "SELECT l.index, l.entry_id, l.leaf_hash, e.content FROM coupons_journalleaf l "
                "LEFT JOIN coupons_journalentry e ON e.id = l.entry_id WHERE l.index >= %s "
                "ORDER BY l.index LIMIT %s", [len(log.leaves), PAGE])
            rows = cursor.fetchall()
            for index, entry_id, stored, content in rows:
                while len(log.leaves) < index:
                    log.broken.append((len(log.leaves), "is missing: no leaf holds it"))
                    log.leaves.append(MISSING)
                    log.entry_ids.append(None)
                if content is None:
                    log.broken.append((index, f"names entry {entry_id}, which is gone"))
                    log.leaves.append(MISSING)
                    log.entry_ids.append(None)
                    continue
                leaf = merkle.leaf_hash(content.encode())
                if leaf.hex() != stored:
                    log.broken.append((index, "its leaf hash is not SHA-256(0x00 || its "
                                              "entry's content)"))
                log.leaves.append(leaf)
                log.entry_ids.append(entry_id)
            if progress is not None:
                progress.advance(len(rows))
            if len(rows) < PAGE:
                return log


def _claims(heads: list[dict], log_size: int) -> tuple[list, list[str]]:
    """((start, end, signed hash, checkpoint number)) every head signs, and the problems of
    heads that sign more positions than the log has or carry a proof of the wrong shape."""
    claims, problems = [], []
    for body in heads:
        size, number = body["journal_size"], body["number"]
        if size > log_size:
            problems.append(f"checkpoint {number} signed a journal log of {size} positions; "
                            f"the log holds {log_size}: positions {log_size}..{size - 1} are gone")
            continue
        if size:
            claims.append((0, size, body["journal_root"], number))
        before, proof = body.get("previous_journal_size") or 0, body.get("journal_consistency")
        if before and proof is not None and before <= size:
            ranges = merkle.consistency_ranges(before, size)
            if len(ranges) != len(proof):
                problems.append(f"checkpoint {number}: its journal consistency proof has "
                                f"{len(proof)} nodes where {len(ranges)} belong")
                continue
            claims.extend((start, end, node, number) for (start, end), node in
                          zip(ranges, proof, strict=True))
    return claims, problems


def _consistency_problems(heads: list[dict], levels) -> list[str]:
    problems = []
    for older, newer in zip(heads, heads[1:], strict=False):
        m, n = older["journal_size"], newer["journal_size"]
        if n < m:
            problems.append(f"checkpoint {newer['number']} signed a journal of {n} positions, "
                            f"after {m} in checkpoint {older['number']}: the log went back")
            continue
        if not m or n > len(levels.levels[0]):
            continue
        proof = [merkle.range_root(levels, start, end)
                 for start, end in merkle.consistency_ranges(m, n)]
        if not merkle.consistency_holds(m, n, proof, bytes.fromhex(older["journal_root"]),
                                        bytes.fromhex(newer["journal_root"])):
            problems.append(f"the journal log is not consistent from checkpoint "
                            f"{older['number']} ({m} positions) to checkpoint {newer['number']} "
                            f"({n}): no RFC 9162 consistency proof from its leaves holds")
    if heads:
        newest = heads[-1]
        size = newest["journal_size"]
        if size <= len(levels.levels[0]) and (size and merkle.range_root(levels, 0, size).hex()
                                              != newest["journal_root"]):
            problems.append(f"the log's first {size} leaves do not make the journal root "
                            f"checkpoint {newest['number']} signed")
    return problems


def _smallest_failing(claims, levels) -> list[tuple[int, int, int]]:
    failing = sorted({(start, end, number) for start, end, signed, number in claims
                      if merkle.range_root(levels, start, end).hex() != signed},
                     key=lambda claim: claim[1] - claim[0])
    kept = []
    for start, end, number in failing:
        if not any(start <= s and e <= end for s, e, _ in kept):
            kept.append((start, end, number))
    return sorted(kept)


def coupons_of_entries(entry_ids) -> dict[int, tuple[str, int, int | None]]:
    """entry id -> (table, row id, the row's coupon id or None)."""
    rows = [(pk, (subject, subject_id)) for pk, subject, subject_id in
            JournalEntry.objects.filter(pk__in=entry_ids).values_list("pk", "subject",
                                                                      "subject_id")]
    return {pk: (table, row_id, coupon) for pk, (table, row_id), coupon in _with_coupons(rows)}


def _with_coupons(rows):
    """(key, (table, row id)) -> (key, (table, row id), coupon id or None), one query a table."""
    by_table = {}
    for _, (table, row_id) in rows:
        by_table.setdefault(table, set()).add(row_id)
    coupons = {}
    models = {model._meta.label_lower: model for model in journaled_models()}
    for table, ids in by_table.items():
        model = models.get(table)
        if model is None or not any(f.name == "coupon" and f.concrete
                                    for f in model._meta.get_fields()):
            continue
        coupons.update({(table, pk): coupon for pk, coupon in
                        model.objects.filter(pk__in=ids).values_list("pk", "coupon_id")})
    return [(key, (table, row_id), coupons.get((table, row_id))) for key, (table, row_id) in rows]


def signed_leaves(heads: list[dict], kept: dict[int, list[bytes]], verdict) -> list | None:
    """The leaf hashes the chain `heads` signed, from the signer's leaves files `kept` (by
    checkpoint number): None when one is missing, or when they do not make the newest signed
    root (then they prove nothing, and say so)."""
    leaves = []
    for body in heads:
        part = kept.get(body["number"])
        if part is None or (body.get("previous_journal_size") or 0) != len(leaves):
            return None
        leaves.extend(part)
    if not heads or len(leaves) != heads[-1]["journal_size"]:
        return None
    if merkle.root_of_nodes(leaves).hex() != heads[-1]["journal_root"]:
        verdict.problems.append(f"the leaves files do not make the journal root checkpoint "
                                f"{heads[-1]['number']} signed: positions are named by range")
        return None
    return leaves


def _exactly(heads: list[dict], signed: list[bytes], log: Log) -> list[tuple[int, str]]:
    """Every position whose entry no longer makes the leaf signed there."""
    named, first = [], 0
    for body in heads:
        what = f"its entry is not the one checkpoint {body['number']} signed there"
        named.extend((position, what) for position in range(first, body["journal_size"])
                     if position >= len(log.leaves) or log.leaves[position] != signed[position])
        first = body["journal_size"]
    return named


def verify_journal(heads: list[dict], verdict, kept: dict[int, list[bytes]] | None = None,
                   progress=None) -> None:
    """Adds to `verdict` (checkpoint_verify.Verdict) every broken position, entry and row:
    under its coupon when it has one, as a general problem otherwise. `kept`: the signer's
    leaves files, by checkpoint number, when the auditor has them; `progress` follows the
    reading of the log."""
    heads = [body for body in heads if body.get("journal_size") is not None]
    log = read_log(progress)
    levels = merkle.Levels(log.leaves)
    claims, problems = _claims(heads, len(log.leaves))
    verdict.problems.extend(problems)
    verdict.problems.extend(_consistency_problems(heads, levels))
    named: list[tuple[int, str]] = list(log.broken)
    signed = signed_leaves(heads, kept or {}, verdict)
    if signed is not None:
        named.extend(_exactly(heads, signed, log))
        claims = []  # each position checked alone: no range to name
    for start, end, number in _smallest_failing(claims, levels):
        what = (f"one of log positions {start}..{end - 1} was rewritten or removed after "
                f"checkpoint {number} signed them" if end - start > 1 else
                f"was rewritten or removed after checkpoint {number} signed it")
        positions = range(start, end)
        named.extend((position, what) for position in positions[:NAMED_PER_RANGE])
        if end - start > NAMED_PER_RANGE:
            verdict.problems.append(f"{end - start - NAMED_PER_RANGE} more log positions up to "
                                    f"{end - 1}: {what}")
    subjects = coupons_of_entries({log.entry_ids[p] for p, _ in named
                                   if p < len(log.entry_ids) and log.entry_ids[p]})
    for position, problem in named:
        entry_id = log.entry_ids[position] if position < len(log.entry_ids) else None
        table, row_id, coupon = subjects.get(entry_id, (None, None, None))
        text = (f"journal log position {position} (entry {entry_id}, {table} {row_id}): "
                f"{problem}" if entry_id else f"journal log position {position} {problem}")
        (verdict.broken[coupon].append(text) if coupon else verdict.problems.append(text))
    _fold_problems(verdict)
    verdict.journal_positions = len(log.leaves)


def _fold_problems(verdict) -> None:
    found = list(journal_problems())
    subjects = {pk: (subject, subject_id) for pk, subject, subject_id in
                JournalEntry.objects.filter(pk__in=[pk for what, pk, _ in found
                                                    if what == "journal entry"])
                .values_list("pk", "subject", "subject_id")}
    keyed = [((what, pk, problem),
              subjects.get(pk, (None, None)) if what == "journal entry" else (what, pk))
             for what, pk, problem in found]
    for (what, pk, problem), _, coupon in _with_coupons(keyed):
        text = f"{what} {pk}: {problem}"
        (verdict.broken[coupon].append(text) if coupon else verdict.problems.append(text))
