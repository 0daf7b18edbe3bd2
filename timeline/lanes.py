"""Orders as lanes: each order on a timeline page gets a column and a colour of its own.

The colour comes from the order id alone, so an order keeps it on every page and every coupon.
The lane is a column on the page shown, held by an order from its first entry to its last:
orders whose spans overlap (A's late redeem arrives while B holds the lease) never share one,
and a lane is free again once its order is done, so a page of many successive orders stays a
few columns wide.
"""

import hashlib

# Twelve hues that stay apart on white and for the common colour-vision deficiencies.
PALETTE = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf3989", "#9a6700",
           "#0a7a8a", "#bc4c00", "#4d2d8f", "#57606a", "#116329", "#a40e26"]


def order_colour(order_id: str) -> str:
    digest = hashlib.sha256(order_id.encode()).hexdigest()
    return PALETTE[int(digest[:8], 16) % len(PALETTE)]


def _spans(entries: list[dict]) -> dict[str, list[int]]:
    """{order id: [first position, last position]} in order of first appearance."""
    spans: dict[str, list[int]] = {}
    for position, e in enumerate(entries):
        order_id = e["details"].get("order_id")
        if order_id:
            spans.setdefault(order_id, [position, position])[1] = position
    return spans


def with_lanes(entries: list[dict]) -> tuple[list[dict], list[dict], int]:
    """Answers the page's orders (id, colour, lane), each entry with its `order_id`, `colour`
    and `cells` (per lane: the colour of the order holding it at that row, and whether this
    entry is that order's), and the number of lanes."""
    spans = _spans(entries)
    lane_ends: list[int] = []  # per lane, the last position of the order holding it
    lane_of: dict[str, int] = {}
    for order_id, (first, last) in spans.items():
        free = next((lane for lane, end in enumerate(lane_ends) if end < first), None)
        if free is None:
            free = len(lane_ends)
            lane_ends.append(last)
        lane_ends[free] = last
        lane_of[order_id] = free
    colours = {order_id: order_colour(order_id) for order_id in spans}
    holder = [[""] * len(lane_ends) for _ in entries]
    for order_id, (first, last) in spans.items():
        for position in range(first, last + 1):
            holder[position][lane_of[order_id]] = order_id
    laid_out = []
    for position, e in enumerate(entries):
        order_id = e["details"].get("order_id") or ""
        laid_out.append({**e, "order_id": order_id, "colour": colours.get(order_id, ""),
                         "cells": [{"colour": colours.get(held, ""),
                                    "here": bool(order_id) and held == order_id}
                                   for held in holder[position]]})
    orders = [{"order_id": order_id, "colour": colours[order_id], "lane": lane_of[order_id]}
              for order_id in spans]
    return orders, laid_out, len(lane_ends)
