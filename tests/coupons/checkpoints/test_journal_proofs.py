"""The journal half of GET /api/v1/coupons/{id}/proof and of the offline check: every entry
about the coupon, bound by its content to the signed journal head, and the consistency proof
from an older head (`?since=`, `--since`)."""

import hashlib
import json
import subprocess
import sys

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from coupons.evidence.checkpoint_proofs import coupon_entries
from coupons.models import JournalEntry
from coupons.services import coupon_issue
from operations.checkpoint import ledger_checkpoint
from tests.app_role import past_the_triggers
from tests.coupons.checkpoints.conftest import checkpoint_file, save_json
from tests.coupons.checkpoints.test_journal_log import open_cases, sequence
from tests.coupons.checkpoints.test_proofs import SCRIPT, WITHOUT_DJANGO, offline, proof_of

pytestmark = pytest.mark.django_db


def other_coupon(template, ctx):
    return coupon_issue(template_id=template.pk, user_id="someone-else", ctx=ctx).coupon


def cases_of(proof) -> list[dict]:
    return [e for e in proof["journal_entries"] if e["table"] == "coupons.conflictcase"]


def offline_since(proof, public_key, older_file, tmp_path):
    path = save_json(tmp_path / "proof.json", proof)
    done = subprocess.run([sys.executable, "-c", WITHOUT_DJANGO, str(SCRIPT), path,
                           "--public-key", public_key, "--since", str(older_file)],
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
def journaled(redeemed, template, ctx, checkpoint_dir):
    """Three cases on the coupon between four on another coupon, sequenced and signed: log
    positions 0..4 are the coupon's ledger rows, binding and redemption, 5 the other coupon's
    ISSUE, 8..10 the coupon's cases."""
    other = other_coupon(template, ctx)
    open_cases(other, 2)
    open_cases(redeemed, 3, start=10)
    open_cases(other, 2, start=20)
    sequence()
    ledger_checkpoint()
    return redeemed


def test_the_coupon_s_journal_entries_verify_offline_bound_to_the_signed_head(
        journaled, reader, public_key, tmp_path):
    proof = proof_of(reader, journaled.pk)

    entries = proof["journal_entries"]
    assert sorted(e["log_index"] for e in entries) == [0, 1, 2, 3, 4, 8, 9, 10]
    assert {e["table"] for e in entries} == {"coupons.couponoperation", "coupons.ordercoupon",
                                             "coupons.redemption", "coupons.conflictcase"}
    assert [(e["kind"], e["log_index"]) for e in entries
            if e["table"] == "coupons.conflictcase"] == [("opened", 8), ("opened", 9),
                                                         ("opened", 10)]
    assert all(json.loads(e["content"])["row"]["coupon_id"] == journaled.pk for e in entries)
    assert proof["journal_head"] == {"checkpoint": 1, "size": 13,
                                     "root": json.loads(proof["checkpoint"]["signed"])[
                                         "journal_root"]}
    assert proof["journal_consistency"] is None
    status, out = offline(proof, public_key, tmp_path)
    assert status == 0, out
    assert out.rstrip().endswith("; 8 of 8 journal entries are in the journal log signed there")


@pytest.mark.parametrize(("old", "new"), [('"kind":"opened"', '"kind":"dismissed"'),
                                          ('"n":11', '"n":99')])
def test_an_entry_edited_in_a_saved_proof_fails_offline(
        journaled, reader, public_key, tmp_path, old, new):
    proof = proof_of(reader, journaled.pk)
    entry = cases_of(proof)[1]
    assert old in entry["content"]
    entry["content"] = entry["content"].replace(old, new)

    status, out = offline(proof, public_key, tmp_path)
    assert status == 1
    assert (f"FAILED: journal entry {entry['entry_id']}: its content_hash is not the SHA-256 of "
            f"its content (the content was edited)") in out

    # The hash recomputed to match: the content is still not the one signed.
    entry["content_hash"] = hashlib.sha256(entry["content"].encode()).hexdigest()
    status, out = offline(proof, public_key, tmp_path)
    assert status == 1
    assert out.splitlines() == [
        f"FAILED: journal entry {entry['entry_id']} (log position 9): its content is not the "
        f"one in the journal log signed as checkpoint 1"]


def test_an_entry_of_another_coupon_slipped_into_a_saved_proof_fails_offline(
        journaled, reader, public_key, tmp_path, template, ctx):
    proof = proof_of(reader, journaled.pk)
    other = proof_of(reader, journaled.pk + 1)["journal_entries"][0]
    proof["journal_entries"].append(other)

    status, out = offline(proof, public_key, tmp_path)

    assert status == 1
    assert f"FAILED: journal entry {other['entry_id']}: its content is about another coupon" in out


def test_entries_not_yet_sequenced_or_signed_have_no_position(
        journaled, reader, public_key, tmp_path):
    open_cases(journaled, 1, start=30)  # not sequenced
    proof = proof_of(reader, journaled.pk)

    assert [e["log_index"] for e in cases_of(proof)] == [8, 9, 10, None]
    assert proof["journal_entries"][-1]["inclusion_path"] is None
    status, out = offline(proof, public_key, tmp_path)
    assert status == 0, out
    assert "8 of 9 journal entries are in the journal log signed there" in out


def test_since_an_older_checkpoint_the_consistency_proof_verifies_offline(
        journaled, reader, public_key, tmp_path, checkpoint_dir):
    open_cases(journaled, 4, start=40)
    sequence()
    ledger_checkpoint()

    response = reader.get(f"/api/v1/coupons/{journaled.pk}/proof?since=1")
    assert response.status_code == 200
    proof = response.json()
    first = json.loads(json.loads(checkpoint_file(checkpoint_dir, 1).read_text())["signed"])
    assert {k: v for k, v in proof["journal_consistency"].items() if k != "path"} == {
        "since": 1, "since_size": 13, "since_root": first["journal_root"], "problem": None}
    status, out = offline_since(proof, public_key, checkpoint_file(checkpoint_dir, 1), tmp_path)
    assert status == 0, out
    assert out.rstrip().endswith("that journal extends the one checkpoint 1 signed")

    proof["journal_consistency"]["path"][0] = "00" * 32
    status, out = offline_since(proof, public_key, checkpoint_file(checkpoint_dir, 1), tmp_path)
    assert status == 1
    assert ("FAILED: the journal signed as checkpoint 2 (18 entries) does not extend the 13 "
            "entries checkpoint 1 signed: the log was rewritten") in out

    without = proof_of(reader, journaled.pk)
    status, out = offline_since(without, public_key, checkpoint_file(checkpoint_dir, 1), tmp_path)
    assert status == 1
    assert "fetch it with ?since=1" in out


@pytest.mark.parametrize(("since", "status", "code"), [
    ("abc", 400, "VALIDATION_ERROR"), ("0", 400, "VALIDATION_ERROR"),
    ("99", 404, "NOT_FOUND")])
def test_a_bad_since_is_a_structured_refusal(journaled, reader, since, status, code):
    """Not a number: 400; a number no verified checkpoint has: 404, as for a path id."""
    response = reader.get(f"/api/v1/coupons/{journaled.pk}/proof?since={since}")

    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_a_proof_reads_a_fixed_number_of_queries_whatever_the_journal_s_length(
        redeemed, template, ctx, reader, checkpoint_dir):
    """A small log and one sixteen times longer, with more entries on the coupon: the same
    queries (the coupon, its ledger, the checkpoint, the coupon's entries, the stored subtree
    hashes), never the whole log."""
    other = other_coupon(template, ctx)
    open_cases(redeemed, 1)
    open_cases(other, 2, start=1)
    sequence()
    ledger_checkpoint()
    proof_of(reader, redeemed.pk)  # the client's key is looked up once, then cached
    with CaptureQueriesContext(connection) as small:
        assert len(proof_of(reader, redeemed.pk)["journal_entries"]) == 5 + 1

    open_cases(other, 40, start=100)
    open_cases(redeemed, 5, start=200)
    sequence()
    ledger_checkpoint()
    with CaptureQueriesContext(connection) as large:
        proof = proof_of(reader, redeemed.pk)
    assert len(proof["journal_entries"]) == 5 + 6
    assert proof["journal_head"]["size"] == 5 + 1 + 3 + 1 + 45  # checkpoint 1's own entry
    assert (len(small.captured_queries), len(large.captured_queries)) == (5, 5), (
        [q["sql"][:60] for q in small.captured_queries],
        [q["sql"][:60] for q in large.captured_queries])


def test_a_ledger_row_edited_in_a_saved_proof_fails_offline(journaled, reader, public_key,
                                                            tmp_path):
    """The row's journal entry has a public hash: a REDEEM made a RELEASE in the saved proof,
    its states too, no longer matches it."""
    proof = proof_of(reader, journaled.pk)
    redeem = next(op for op in proof["operations"] if op["op_type"] == "REDEEM")
    redeem.update(op_type="RELEASE", to_state="AVAILABLE")

    status, out = offline(proof, public_key, tmp_path)

    assert status == 1
    assert (f"FAILED: ledger row v{redeem['to_version']}: op_type, to_state differ from its "
            f"journal entry") in out


def refused(proof) -> dict:
    return {e["log_index"]: e["inclusion_problem"] for e in proof["journal_entries"]
            if e["inclusion_problem"] is not None}


@pytest.mark.parametrize(("table", "column", "where"), [
    ("coupons_journalnode", "hash", "level = 1 AND position = 4"),  # positions 8..9
    ("coupons_journalleaf", "leaf_hash", "index = 11"),  # the other coupon's case
    ("coupons_journalentry", "content",
     "id = (SELECT entry_id FROM coupons_journalleaf WHERE index = 10)"),
])
def test_a_path_that_does_not_reach_the_signed_root_is_not_served_as_proof(
        journaled, reader, public_key, tmp_path, table, column, where, broken_on_purpose):
    """The owner rewrites a stored subtree hash, a leaf, or the entry at position 10 itself
    after the head was signed: the server checks every path it reads against the signed root
    and serves none that misses it; the answer says why, the other entries' paths still hold,
    and the saved proof fails offline."""
    before = proof_of(reader, journaled.pk)
    assert refused(before) == {}
    edit = ("replace(content, '\"n\":12', '\"n\":99')" if column == "content"
            else "repeat('0', 64)")
    with past_the_triggers(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {column} = {edit} WHERE {where}")  # noqa: S608
        assert cursor.rowcount == 1
    if column == "content":  # the case row no longer folds from its entries: the check says so
        broken_on_purpose.add(journaled.pk)

    response = reader.get(f"/api/v1/coupons/{journaled.pk}/proof")

    assert response.status_code == 200
    proof = response.json()
    assert list(refused(proof)) == [10]
    assert refused(proof)[10].startswith("The stored journal log does not lead this entry to "
                                         "the signed journal root")
    by_index = {e["log_index"]: e for e in proof["journal_entries"]}
    assert by_index[10]["inclusion_path"] is None
    assert [by_index[i]["inclusion_path"] is not None for i in (0, 1, 2, 3, 4, 8, 9)] == [True] * 7
    status, out = offline(proof, public_key, tmp_path)
    assert status == 1
    assert ("(log position 10): the server served no inclusion path: The stored journal log "
            "does not lead this entry") in out


def test_a_consistency_proof_that_does_not_hold_is_not_served(
        journaled, reader, checkpoint_dir):
    """The subtree of positions 0..7 rewritten after both heads were signed: the consistency
    proof from checkpoint 1 is refused in words, never a 500."""
    open_cases(journaled, 4, start=40)
    sequence()
    ledger_checkpoint()
    assert reader.get(f"/api/v1/coupons/{journaled.pk}/proof?since=1").json()[
        "journal_consistency"]["problem"] is None
    with past_the_triggers(), connection.cursor() as cursor:
        cursor.execute("UPDATE coupons_journalnode SET hash = repeat('0', 64) "
                       "WHERE level = 3 AND position = 0")

    response = reader.get(f"/api/v1/coupons/{journaled.pk}/proof?since=1")

    assert response.status_code == 200
    consistency = response.json()["journal_consistency"]
    assert consistency["path"] is None
    assert consistency["problem"].startswith("The stored journal log does not prove that the "
                                             "signed journal extends the older one")


def journal_scans_without_an_index_condition(sql: str, params) -> list[str]:
    """The plan's reads of the journal that do not look entries up by an index (a sequential
    scan, or a whole index read through a filter), with sequential scans priced out so that a
    small test table answers as a large one would."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)  # noqa: S608 - a test's own
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    found, nodes = [], [plan[0]["Plan"]]
    while nodes:
        node = nodes.pop()
        nodes.extend(node.get("Plans", ()))
        if node.get("Relation Name") == "coupons_journalentry" and "Index Cond" not in node:
            found.append(node["Node Type"])
    return found


def test_a_coupon_s_entries_are_looked_up_by_index_not_read_from_the_whole_journal(journaled):
    """The proof's one read of the coupon's entries finds them through each table's coupon
    index and the journal's (subject, subject_id) index: its cost stays flat as the journal
    grows with every coupon ever issued."""
    query = coupon_entries_query(journaled)
    # The naive read: every entry whose content mentions the coupon, a scan of the whole
    # journal whatever the planner's statistics say (no index holds the content).
    mentioning = JournalEntry.objects.filter(
        content__contains=f'"coupon": {journaled.pk}').query.sql_with_params()

    assert journal_scans_without_an_index_condition(*query) == []
    assert journal_scans_without_an_index_condition(*mentioning) != []


def coupon_entries_query(coupon) -> tuple[str, None]:
    """The one statement coupon_entries sends, its values in place as it was sent."""
    with CaptureQueriesContext(connection) as read:
        entries = coupon_entries(coupon)
    assert [entry.subject for entry in entries].count("coupons.conflictcase") == 3
    (query,) = read.captured_queries
    return query["sql"], None
