"""The Merkle tree of RFC 9162 (Certificate Transparency v2), section 2.1; pure functions.

Leaf hash = SHA-256(0x00 || leaf), node hash = SHA-256(0x01 || left || right); a tree of n > 1
leaves splits at k, the largest power of two smaller than n. The checkpoint's leaves are the
coupons' chain heads (`head_leaf`), ordered by coupon id.

The checkpoint stores its leaves in chunks of CHUNK leaves. With the RFC split every subtree of
a tree larger than CHUNK starts at a multiple of CHUNK, so the tree equals the same tree built
over the chunks' roots (`root_of_nodes`): a proof reads one chunk and the list of chunk roots,
never the whole tree (`inclusion_path` joins the two halves).

scripts/verify_coupon_proof.py repeats `leaf_hash`, `head_leaf` and `root_from_path` (it runs
without this package); tests/coupons/checkpoints/test_merkle.py keeps the two the same.
"""

import hashlib
import struct

CHUNK = 1024  # a power of two


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def head_leaf(coupon_id: int, version: int, head_hash: str) -> bytes:
    """Coupon id and version as unsigned 64-bit big-endian, then the head's hash as ASCII."""
    return struct.pack(">QQ", coupon_id, version) + head_hash.encode("ascii")


def split(n: int) -> int:
    """The largest power of two smaller than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def root_of_nodes(nodes: list[bytes]) -> bytes:
    """MTH over already-hashed leaves (or subtree roots); the empty tree is SHA-256("")."""
    if not nodes:
        return hashlib.sha256(b"").digest()
    level = list(nodes)
    # Bottom-up pairing gives the RFC's left-heavy split: an odd node is carried up unpaired.
    while len(level) > 1:
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def path_of_nodes(index: int, nodes: list[bytes]) -> list[bytes]:
    """PATH(index, D[n]) of RFC 9162 2.1.3.1 over hashed nodes: siblings, leaf first."""
    if len(nodes) <= 1:
        return []
    k = split(len(nodes))
    if index < k:
        return [*path_of_nodes(index, nodes[:k]), root_of_nodes(nodes[k:])]
    return [*path_of_nodes(index - k, nodes[k:]), root_of_nodes(nodes[:k])]


def root_from_path(index: int, size: int, leaf: bytes, path: list[bytes]) -> bytes | None:
    """The root a leaf hash and its inclusion path lead to (RFC 9162 2.1.3.2); None if the path
    has the wrong length for (index, size)."""
    if index >= size:
        return None
    fn, sn, node = index, size - 1, leaf
    for sibling in path:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            node = node_hash(sibling, node)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            node = node_hash(node, sibling)
        fn >>= 1
        sn >>= 1
    return node if sn == 0 else None


def inclusion_path(index: int, chunk_leaves: list[bytes], chunk_roots: list[bytes],
                   chunk_number: int) -> list[bytes]:
    """The whole tree's path for leaf `index` of chunk `chunk_number`: first within its chunk,
    then the chunk among the chunk roots (the same tree, see the module docstring)."""
    return [*path_of_nodes(index, chunk_leaves), *path_of_nodes(chunk_number, chunk_roots)]


def consistency_proof(m: int, nodes: list[bytes]) -> list[bytes]:
    """PROOF(m, D[n]) of RFC 9162 2.1.4.1 over hashed leaves: that the tree of the first m
    leaves is a prefix of the tree of all of them (0 < m <= n)."""
    return _subproof(m, nodes, True)


def _subproof(m: int, nodes: list[bytes], whole: bool) -> list[bytes]:
    n = len(nodes)
    if m == n:
        return [] if whole else [root_of_nodes(nodes)]
    k = split(n)
    if m <= k:
        return [*_subproof(m, nodes[:k], whole), root_of_nodes(nodes[k:])]
    return [*_subproof(m - k, nodes[k:], False), root_of_nodes(nodes[:k])]


def consistency_holds(m: int, n: int, proof: list[bytes], old_root: bytes,
                      new_root: bytes) -> bool:
    """RFC 9162 2.1.4.2: does `proof` show the tree of size m with `old_root` is a prefix of
    the tree of size n with `new_root`?"""
    if not 0 < m <= n:
        return False
    if m == n:
        return not proof and old_root == new_root
    if m & (m - 1) == 0:  # a power of two: the old root is the first node of the path
        proof = [old_root, *proof]
    if not proof:
        return False
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for node in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(node, fr)
            sr = node_hash(node, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, node)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root
