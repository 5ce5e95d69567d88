"""The pipeline's picture: the script's own story — data → fit → predict → metric — as an
SVG image, drawn from ``pipeline/graph.json``.

Calls of one kind in one place are one box with a count (a 50-fit loop is one box ×50),
and what scikit-learn called inside a call (a grid search's fits) is folded into it, so
the picture stays readable however many calls there were. SVG written here, not a PNG
drawn by matplotlib: importing matplotlib alone took half a second and 30 MB at the end
of every run, and MLflow's artifact view shows an SVG as it shows a PNG.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape  # not xml.sax.saxutils: its import costs every script 10 ms
from typing import Any

BOX_WIDTH, LINE_HEIGHT, PADDING = 190, 15, 8
COLUMN_GAP, ROW_GAP, TITLE_HEIGHT = 70, 26, 34
TITLE = ("pypads pipeline: the script's calls (×N: N calls; +N inside: calls scikit-learn made in them), "
         "data flow in red")


def summarize(
    nodes: Sequence[Mapping[str, Any]], omitted: Sequence[Mapping[str, Any]] = ()
) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """One box per kind of call in its place (same function, same depth, same kind of
    parent), with how many calls it stands for: a grid search's 50 fits are one box.
    ``omitted`` calls (see ``max_calls``) count into their box too."""
    call_of = {node["id"]: node["call"] for node in nodes}
    boxes: list[dict[str, Any]] = []
    index_of: dict[tuple[Any, ...], int] = {}
    box_of: dict[int, int] = {}

    def box_for(depth: int, call: str, parent_call: str | None) -> int:
        key = (depth, call, parent_call)
        if key not in index_of:
            index_of[key] = len(boxes)
            boxes.append({"call": call, "depth": depth, "count": 0, "parent": None})
        return index_of[key]

    for node in nodes:
        box = box_for(node["depth"], node["call"], call_of.get(node["parent"]))
        boxes[box]["count"] += 1
        box_of[node["id"]] = box
        if node["parent"] in box_of:
            boxes[box]["parent"] = box_of[node["parent"]]
    for place in omitted:
        box = box_for(place["depth"], place["call"], place["parent_call"])
        boxes[box]["count"] += place["count"]
        if boxes[box]["parent"] is None and place["parent_call"] is not None:
            boxes[box]["parent"] = next((index for index, other in enumerate(boxes) if other["call"] == place["parent_call"]
                                         and other["depth"] < place["depth"]), None)
    return boxes, box_of


def story(document: Mapping[str, Any]) -> tuple[list[dict[str, Any]], set[tuple[int, int]]]:
    """The script's own calls as boxes (one per kind of call, ``count`` calls), each with
    how many calls scikit-learn made ``inside`` them, and the data edges between boxes
    (an edge from or to an inner call counts for the script's call around it)."""
    nodes = list(document["nodes"])
    outer: dict[int, int] = {}  # node -> the script's call it happened in
    for node in nodes:
        if node["depth"] == 0:
            outer[node["id"]] = node["id"]
        elif node["parent"] in outer:
            outer[node["id"]] = outer[node["parent"]]
    top = [node for node in nodes if node["depth"] == 0]
    boxes, box_of = summarize(top, [place for place in document.get("omitted", []) if place["depth"] == 0])
    for box in boxes:
        box["inside"] = 0
    for node in nodes:
        if node["depth"] > 0 and outer.get(node["id"]) in box_of:
            boxes[box_of[outer[node["id"]]]]["inside"] += 1
    edges = set()
    for edge in document["edges"]:
        start, end = box_of.get(outer.get(edge["from"], -1)), box_of.get(outer.get(edge["to"], -1))
        if edge["kind"] == "data" and start is not None and end is not None and start != end:
            edges.add((start, end))
    return boxes, edges


def svg(document: Mapping[str, Any]) -> bytes:
    """The script's story left to right: each of its calls after the calls whose results
    it used (data flow in red arrows, calls of one kind one box ×N), what scikit-learn
    did inside a call folded into it (``+N inside``; ``graph.json`` has every call)."""
    boxes, edges = story(document)
    labels = [_label(box) for box in boxes]
    height = max((len(lines) for lines in labels), default=1) * LINE_HEIGHT + 2 * PADDING
    columns = _columns(len(boxes), edges)
    place: dict[int, tuple[float, float]] = {}  # box -> its top left corner
    rows_in: dict[int, int] = {}
    for index, column in enumerate(columns):
        row = rows_in[column] = rows_in.get(column, -1) + 1
        place[index] = (PADDING + column * (BOX_WIDTH + COLUMN_GAP), TITLE_HEIGHT + row * (height + ROW_GAP))
    width = PADDING * 2 + (max(columns, default=0) + 1) * (BOX_WIDTH + COLUMN_GAP) - COLUMN_GAP
    total = TITLE_HEIGHT + (max(rows_in.values(), default=0) + 1) * (height + ROW_GAP)
    width = max(width, PADDING * 2 + round(len(TITLE) * 5.6))  # the title at 11 px: about 5.6 px a character
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{total}" '
             f'viewBox="0 0 {width:.0f} {total}" font-family="sans-serif" font-size="12">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#c0392b"/></marker></defs>',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{PADDING}" y="20" font-size="11" fill="#333">{escape(TITLE)}</text>']
    for start, end in sorted(edges):
        parts.append(_arrow(place[start], place[end], height))
    for index, lines in enumerate(labels):
        parts.append(_box(place[index], height, lines))
    parts.append("</svg>")
    return "\n".join(parts).encode("utf-8")


def _columns(count: int, edges: set[tuple[int, int]]) -> list[int]:
    """Each box's column: one after the latest box whose result it used. Boxes are in
    the order of their first call, so an edge backwards is a loop and moves nothing."""
    column = [0] * count
    for index in range(count):
        column[index] = max([column[start] + 1 for start, end in edges if end == index and start < index], default=0)
    return column


def _label(box: Mapping[str, Any]) -> list[str]:
    owner, dot, function = box["call"].partition(".")
    lines = [owner + dot, function] if dot else [owner]
    if box["count"] > 1:
        lines[-1] += f" ×{box['count']}"
    if box["inside"]:
        lines.append(f"(+{box['inside']} inside)")
    return lines


def _box(corner: tuple[float, float], height: int, lines: Sequence[str]) -> str:
    x, y = corner
    first = y + (height - len(lines) * LINE_HEIGHT) / 2 + LINE_HEIGHT - 3
    text = "".join(f'<tspan x="{x + BOX_WIDTH / 2:.0f}" y="{first + number * LINE_HEIGHT:.0f}">{escape(line)}</tspan>'
                   for number, line in enumerate(lines))
    return (f'<g><title>{escape(" ".join(lines))}</title>'
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{BOX_WIDTH}" height="{height}" rx="8" fill="#dde8f7" stroke="#5b7db1"/>'
            f'<text text-anchor="middle">{text}</text></g>')


def _arrow(start: tuple[float, float], end: tuple[float, float], height: int) -> str:
    """A curve from the right side of one box to the left side of another (below both
    boxes, for a loop back to an earlier column)."""
    (x1, y1), (x2, y2) = start, end
    middle = height / 2
    if x2 > x1:
        begin, finish = (x1 + BOX_WIDTH, y1 + middle), (x2, y2 + middle)
        bend = ((begin[0] + finish[0]) / 2, (begin[1] + finish[1]) / 2 - 18)
    else:
        begin, finish = (x1 + BOX_WIDTH / 2, y1 + height), (x2 + BOX_WIDTH / 2, y2 + height)
        bend = ((begin[0] + finish[0]) / 2, max(begin[1], finish[1]) + 30)
    path = f"M{begin[0]:.0f},{begin[1]:.0f} Q{bend[0]:.0f},{bend[1]:.0f} {finish[0]:.0f},{finish[1]:.0f}"
    return f'<path d="{escape(path)}" fill="none" stroke="#c0392b" stroke-width="1.5" marker-end="url(#arrow)"/>'
