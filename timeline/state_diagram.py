"""The coupon state machine as a small picture (inline SVG), with one coupon's path drawn over.

Edges come from the transition table itself (coupons.write.transitions), so the picture
cannot drift from the rules; this module only places them. States and operations are labelled
in the reader's words (timeline.glossary), the codes in each element's tooltip.
"""

import math
from dataclasses import dataclass

from django.utils.translation import pgettext

from coupons.models import CouponStatus as S
from coupons.write.transitions import TRANSITIONS
from timeline.glossary import OPERATIONS, STATES

WIDTH, HEIGHT = 620, 250
NODE_W, NODE_H = 96, 30
START = (24, 125)
PLACES = {S.AVAILABLE: (140, 125), S.LOCKED: (320, 40), S.USED: (500, 125),
          S.EXPIRED: (250, 215), S.VOID: (440, 215)}
# How far an edge bows from the straight line: A→B and B→A bow to opposite sides.
BOW = 22


@dataclass
class Edge:
    path: str
    ops: list[str]
    taken: bool
    label_x: float
    label_y: float

    @property
    def words(self) -> str:
        """The edge's operations in the reader's words (its tooltip keeps the codes)."""
        return pgettext("between operation names", ", ").join(
            str(word_of(op, OPERATIONS)) for op in self.ops)


def word_of(code: str, words: dict):
    return words[code][0] if code in words else code


def _boundary(centre, towards):
    """Where the line from a node's centre towards a point leaves the node's box."""
    (x, y), (tx, ty) = centre, towards
    dx, dy = tx - x, ty - y
    scale = min(NODE_W / 2 / abs(dx) if dx else math.inf, NODE_H / 2 / abs(dy) if dy else math.inf)
    return x + dx * scale, y + dy * scale


def _curve(a, b):
    (ax, ay), (bx, by) = a, b
    length = math.hypot(bx - ax, by - ay) or 1
    # Perpendicular to the direction of travel, so the two directions never overlap.
    cx = (ax + bx) / 2 - (by - ay) / length * BOW
    cy = (ay + by) / 2 + (bx - ax) / length * BOW
    sx, sy = _boundary(a, (cx, cy))
    ex, ey = _boundary(b, (cx, cy))
    label = (0.25 * sx + 0.5 * cx + 0.25 * ex, 0.25 * sy + 0.5 * cy + 0.25 * ey)
    return f"M{sx:.0f},{sy:.0f} Q{cx:.0f},{cy:.0f} {ex:.0f},{ey:.0f}", label


def _loop(centre):
    x, y = centre
    top = y - NODE_H / 2
    return (f"M{x - 14:.0f},{top:.0f} C{x - 30:.0f},{top - 34:.0f} {x + 30:.0f},{top - 34:.0f} "
            f"{x + 14:.0f},{top:.0f}"), (x, top - 28)


def state_diagram(*, current: str, taken: set[tuple[str, str, str]]) -> dict:
    """`taken`: the (op, from state, to state) steps of this coupon's ledger."""
    pairs: dict[tuple[str, str], list[str]] = {}
    for op, moves in TRANSITIONS.items():
        for from_state, to_states in moves.items():
            for to_state in to_states:
                pairs.setdefault((from_state, to_state), []).append(op)
    taken_pairs = {(f, t) for _, f, t in taken}
    edges = []
    for (from_state, to_state), ops in pairs.items():
        if from_state == to_state:
            path, (lx, ly) = _loop(PLACES[from_state])
        else:
            path, (lx, ly) = _curve(PLACES[from_state], PLACES[to_state])
        taken_ops = sorted({op for op, f, t in taken if (f, t) == (from_state, to_state)})
        edges.append(Edge(path, taken_ops or ops, (from_state, to_state) in taken_pairs, lx, ly))
    issued = any(op == "ISSUE" for op, _, _ in taken)
    (sx, sy), (ax, _) = START, PLACES[S.AVAILABLE]
    start_path = f"M{sx + 6},{sy} L{ax - NODE_W / 2:.0f},{sy}"
    visited = {t for _, _, t in taken} | {f for _, f, _ in taken if f}
    nodes = [{"state": state, "label": word_of(state, STATES),
              "x": x - NODE_W / 2, "y": y - NODE_H / 2, "cx": x, "cy": y,
              "current": state == current, "visited": state in visited}
             for state, (x, y) in PLACES.items()]
    # Edges of the path go last, so they are drawn over the others.
    edges.sort(key=lambda edge: edge.taken)
    return {"width": WIDTH, "height": HEIGHT, "nodes": nodes, "edges": edges,
            "start": {"x": START[0], "y": START[1], "path": start_path, "taken": issued,
                      "code": "ISSUE", "label": word_of("ISSUE", OPERATIONS)},
            "current_label": word_of(current, STATES),
            "node_w": NODE_W, "node_h": NODE_H}
