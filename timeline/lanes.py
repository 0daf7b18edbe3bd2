"""Orders as lanes: each order on a timeline page gets a column and a colour of its own.

The colour comes from the order id alone, so an order keeps it on every page and every coupon;
the lane is its column on the page shown, so two orders on one page never share a column even
when their colours happen to be close.
"""

import hashlib

# Twelve hues that stay apart on white and for the common colour-vision deficiencies.
PALETTE = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf3989", "#9a6700",
           "#0a7a8a", "#bc4c00", "#4d2d8f", "#57606a", "#116329", "#a40e26"]


def order_colour(order_id: str) -> str:
    digest = hashlib.sha256(order_id.encode()).hexdigest()
    return PALETTE[int(digest[:8], 16) % len(PALETTE)]


def with_lanes(entries: list[dict]) -> tuple[list[dict], list[dict]]:
    """Answers the page's lanes (order id, colour) in order of first appearance, and each entry
    with its `order_id`, `colour` and `cells`: one per lane, True where the entry sits."""
    lanes: list[str] = []
    for e in entries:
        order_id = e["details"].get("order_id")
        if order_id and order_id not in lanes:
            lanes.append(order_id)
    laid_out = []
    for e in entries:
        order_id = e["details"].get("order_id") or ""
        laid_out.append({**e, "order_id": order_id,
                         "colour": order_colour(order_id) if order_id else "",
                         "cells": [{"order_id": lane, "colour": order_colour(lane),
                                    "here": lane == order_id} for lane in lanes]})
    return [{"order_id": lane, "colour": order_colour(lane)} for lane in lanes], laid_out
