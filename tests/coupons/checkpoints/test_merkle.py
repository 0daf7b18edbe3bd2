"""coupons/evidence/merkle.py against RFC 9162's tree (the CT reference vectors) and a plain
recursive reading of the RFC, and the offline script's copy against both."""

import hashlib
import importlib.util
import random
from pathlib import Path

import pytest

from coupons.evidence import merkle

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "auditors" / "verify_coupon_proof.py"

# The leaves and roots of the Certificate Transparency reference tests (RFC 6962's tree, the
# same hashing as RFC 9162 section 2.1): the root of the first n leaves.
LEAVES = [bytes.fromhex(h) for h in
          ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
           "606162636465666768696a6b6c6d6e6f"]]
ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def rfc_root(leaves: list[bytes]) -> bytes:
    """MTH(D[n]) exactly as RFC 9162 2.1.1 writes it."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return merkle.leaf_hash(leaves[0])
    k = merkle.split(len(leaves))
    return merkle.node_hash(rfc_root(leaves[:k]), rfc_root(leaves[k:]))


def hashed(leaves):
    return [merkle.leaf_hash(leaf) for leaf in leaves]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("verify_coupon_proof", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("n", range(1, 9))
def test_the_roots_of_the_reference_vectors(n):
    assert merkle.root_of_nodes(hashed(LEAVES[:n])).hex() == ROOTS[n - 1]
    assert rfc_root(LEAVES[:n]).hex() == ROOTS[n - 1]


def test_the_empty_tree_is_the_hash_of_nothing():
    assert merkle.root_of_nodes([]).hex() == (
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")


def test_every_inclusion_path_of_the_reference_tree_leads_to_its_root(script):
    for n in range(1, 9):
        for index in range(n):
            path = merkle.path_of_nodes(index, hashed(LEAVES[:n]))
            leaf = merkle.leaf_hash(LEAVES[index])
            assert merkle.root_from_path(index, n, leaf, path).hex() == ROOTS[n - 1]
            assert script.root_from_path(index, n, leaf, path).hex() == ROOTS[n - 1]


def test_a_path_for_another_leaf_index_or_size_does_not_lead_to_the_root():
    path = merkle.path_of_nodes(2, hashed(LEAVES))
    leaf = merkle.leaf_hash(LEAVES[2])

    assert merkle.root_from_path(3, 8, leaf, path).hex() != ROOTS[7]
    assert merkle.root_from_path(2, 7, leaf, path).hex() != ROOTS[6]
    assert merkle.root_from_path(2, 8, merkle.leaf_hash(b"forged"), path).hex() != ROOTS[7]
    assert merkle.root_from_path(2, 8, leaf, path[:-1]) is None
    assert merkle.root_from_path(8, 8, leaf, path) is None


def test_random_trees_agree_with_the_rfc_and_the_script(script):
    """Fixed seed: trees of 1..300 leaves; every path proves its leaf, in the script too."""
    rng = random.Random(15)
    for _ in range(60):
        n = rng.randint(1, 300)
        leaves = [rng.randbytes(rng.randint(1, 40)) for _ in range(n)]
        root = rfc_root(leaves)
        assert merkle.root_of_nodes(hashed(leaves)) == root
        for index in rng.sample(range(n), min(n, 10)):
            path = merkle.path_of_nodes(index, hashed(leaves))
            leaf = script.leaf_hash(leaves[index])
            assert leaf == merkle.leaf_hash(leaves[index])
            assert script.root_from_path(index, n, leaf, path) == root


# RFC 9162 consistency proofs over the same leaves: the CT reference vectors (generated from
# the C++ reference implementation's snapshot consistency), as transparency-dev/merkle keeps them.
CONSISTENCY = {
    (1, 1): [],
    (1, 8): ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
             "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
             "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"],
    (6, 8): ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
             "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
             "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"],
    (2, 5): ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
             "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"],
}


@pytest.mark.parametrize(("m", "n"), CONSISTENCY)
def test_consistency_proofs_of_the_reference_vectors(m, n, script):
    proof = merkle.consistency_proof(m, hashed(LEAVES[:n]))

    assert [node.hex() for node in proof] == CONSISTENCY[(m, n)]
    assert merkle.consistency_holds(m, n, proof, bytes.fromhex(ROOTS[m - 1]),
                                    bytes.fromhex(ROOTS[n - 1]))
    assert script.consistency_holds(m, n, proof, bytes.fromhex(ROOTS[m - 1]),
                                    bytes.fromhex(ROOTS[n - 1]))
    assert not script.consistency_holds(m, n, proof, bytes.fromhex(ROOTS[m - 1]),
                                        bytes.fromhex(ROOTS[n - 2 if n > 1 else 1]))


def test_paths_and_proofs_from_stored_subtrees_are_the_rfc_s(script):
    """What the proof endpoint reads (complete subtrees, `pieces`) makes the same inclusion
    paths and consistency proofs as the whole tree, and the script accepts them (seeded)."""
    rng = random.Random(6962)
    for n in [*range(1, 40), *(rng.randint(40, 2000) for _ in range(20))]:
        leaves = [merkle.leaf_hash(rng.randbytes(8)) for _ in range(n)]
        stored = merkle.Levels(leaves)
        root = merkle.root_of_nodes(leaves)
        assert merkle.range_root(stored, 0, n) == root
        for index in rng.sample(range(n), min(n, 8)):
            path = [merkle.range_root(stored, *r) for r in merkle.inclusion_ranges(index, n)]
            assert path == merkle.path_of_nodes(index, leaves)
            assert script.root_from_path(index, n, leaves[index], path) == root
        for m in rng.sample(range(1, n + 1), min(n, 8)):
            proof = [merkle.range_root(stored, *r) for r in merkle.consistency_ranges(m, n)]
            assert proof == merkle.consistency_proof(m, leaves)
            assert script.consistency_holds(m, n, proof, merkle.root_of_nodes(leaves[:m]), root)


def test_every_consistency_proof_verifies_and_a_rewritten_prefix_does_not():
    rng = random.Random(9162)
    for n in range(1, 40):
        leaves = [bytes([rng.randrange(256)]) * rng.randrange(1, 5) for _ in range(n)]
        nodes = hashed(leaves)
        new_root = merkle.root_of_nodes(nodes)
        for m in range(1, n + 1):
            proof = merkle.consistency_proof(m, nodes)
            old_root = merkle.root_of_nodes(nodes[:m])
            assert merkle.consistency_holds(m, n, proof, old_root, new_root), (m, n)
            rewritten = merkle.root_of_nodes([merkle.leaf_hash(b"forged"), *nodes[1:m]])
            assert not merkle.consistency_holds(m, n, proof, rewritten, new_root), (m, n)
            if proof:
                assert not merkle.consistency_holds(m, n, proof[:-1], old_root, new_root)
    assert not merkle.consistency_holds(0, 3, [], b"", b"")
    assert not merkle.consistency_holds(4, 3, [], b"", b"")
