"""The Merkle tree of RFC 9162 (Certificate Transparency v2), section 2.1; pure functions.

Leaf hash = SHA-256(0x00 || leaf), node hash = SHA-256(0x01 || left || right); a tree of n > 1
leaves splits at k, the largest power of two smaller than n. The leaves are the journal's
entries, in log order (operations/checkpoint.py).

scripts/auditors/verify_coupon_proof.py repeats `leaf_hash`, `root_from_path` and
`consistency_holds` (it runs without this package); tests/coupons/checkpoints/test_merkle.py
keeps them the same.
"""

import hashlib


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


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


# --- Proofs from stored subtree hashes ----------------------------------------------------------
#
# Every node of an RFC 9162 tree covers a range [start, end) of leaves that splits, from the
# left, into complete aligned subtrees (a power-of-two size 2^level at a multiple of it). The
# sequencer stores the hash of every complete subtree once its last leaf is sequenced, so any
# node, path or consistency proof of any signed size is read from O(log n) stored hashes,
# whatever the journal's length. A piece is (level, position): leaves position * 2^level on.


def pieces(start: int, end: int) -> list[tuple[int, int]]:
    """The complete subtrees that make the node over leaves [start, end), left to right."""
    found = []
    while start < end:
        level = (end - start).bit_length() - 1
        if start:
            level = min(level, (start & -start).bit_length() - 1)
        found.append((level, start >> level))
        start += 1 << level
    return found


def range_root(get, start: int, end: int) -> bytes:
    """The node over leaves [start, end), from `get((level, position))`, the stored hashes."""
    *left, last = pieces(start, end)
    node = get(last)
    for piece in reversed(left):
        node = node_hash(get(piece), node)
    return node


def inclusion_ranges(index: int, size: int, start: int = 0) -> list[tuple[int, int]]:
    """The ranges whose nodes make PATH(index, D[size]), leaf first."""
    if size <= 1:
        return []
    k = split(size)
    if index < k:
        return [*inclusion_ranges(index, k, start), (start + k, start + size)]
    return [*inclusion_ranges(index - k, size - k, start + k), (start, start + k)]


def consistency_ranges(m: int, n: int, start: int = 0, whole: bool = True) -> list:
    """The ranges whose nodes make PROOF(m, D[n]) (0 < m <= n)."""
    if m == n:
        return [] if whole else [(start, start + n)]
    k = split(n)
    if m <= k:
        return [*consistency_ranges(m, k, start, whole), (start + k, start + n)]
    return [*consistency_ranges(m - k, n - k, start + k, False), (start, start + k)]


def pieces_of(ranges) -> set[tuple[int, int]]:
    return {piece for start, end in ranges for piece in pieces(start, end)}


class Levels:
    """Every complete subtree of a list of leaf hashes, built once (about 2n hashes): what a
    verifier that reads the whole log answers every range's node from."""

    def __init__(self, leaves: list[bytes]):
        self.levels = [leaves]
        while len(self.levels[-1]) > 1:
            below = self.levels[-1]
            self.levels.append([node_hash(below[i], below[i + 1])
                                for i in range(0, len(below) - 1, 2)])

    def __call__(self, piece: tuple[int, int]) -> bytes:
        level, position = piece
        return self.levels[level][position]
