"""Drawing a laid-out graph as SVG text: boxes, labels, curved edges with arrowheads.

The SVG is self-contained (no ids, no scripts, no external fonts), so several pictures can sit
in one notebook page and any browser or image viewer shows it.
"""
from __future__ import annotations

from .layout import layout

__all__ = ["render", "box_size", "STYLES"]

FONT = "Menlo, Consolas, 'DejaVu Sans Mono', monospace"
FONT_SIZE = 12
_CHAR_W = 0.61 * FONT_SIZE  # advance of a monospace glyph
_LINE_H = 15
_PAD_X, _PAD_Y = 8, 5
_ARROW = 7

# kind -> (fill, stroke); the same fills as torchviz: leaves blue, outputs green, saved orange.
STYLES = {
    "op": ("#eeeeee", "#777777"),
    "leaf": ("#add8e6", "#4d7f91"),
    "output": ("#caff70", "#6b8e23"),
    "saved": ("#ffd59a", "#c98a2c"),
}


_XML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})


def escape(text):
    """``text`` safe inside SVG elements and double-quoted attributes."""
    return text.translate(_XML)


def box_size(lines):
    """Width and height of a box holding ``lines`` of text."""
    width = max(len(line) for line in lines) * _CHAR_W + 2 * _PAD_X
    return width, len(lines) * _LINE_H + 2 * _PAD_Y


def render(boxes, edges):
    """SVG text for ``boxes`` (``(kind, lines)``) and ``edges`` (``(src, dst, dashed)``)."""
    sizes = [box_size(lines) for _, lines in boxes]
    lay = layout(sizes, [(u, v) for u, v, _ in edges])
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{lay.width:.0f}" '
           f'height="{lay.height:.0f}" viewBox="0 0 {lay.width:.1f} {lay.height:.1f}" '
           f'font-family="{FONT}" font-size="{FONT_SIZE}">',
           f'<rect class="background" width="{lay.width:.1f}" height="{lay.height:.1f}" '
           'fill="white"/>']
    for (_, _, dashed), points in zip(edges, lay.routes):
        out.append(_edge(points, dashed))
    for (kind, lines), size, center in zip(boxes, sizes, lay.centers):
        out.append(_box(kind, lines, size, center, copy=False))
    for i, center in lay.copies:
        out.append(_box(*boxes[i], sizes[i], center, copy=True))
    out.append("</svg>")
    return "\n".join(out)


def _box(kind, lines, size, center, copy):
    """A box with its label; a copy (a leaf drawn again near a distant use) has a dashed rim."""
    (w, h), (cx, cy) = size, center
    fill, stroke = STYLES[kind]
    x, y = cx - w / 2, cy - h / 2
    dash = ' stroke-dasharray="4 2"' if copy else ""
    out = [f'<g class="node {kind}{" copy" if copy else ""}">'
           f'<title>{escape(" ".join(lines))}</title>'
           f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="4" '
           f'fill="{fill}" stroke="{stroke}"{dash}/>']
    for k, line in enumerate(lines):
        weight = ' font-weight="bold"' if k == 0 and kind != "saved" else ""
        baseline = y + _PAD_Y + (k + 0.78) * _LINE_H
        out.append(f'<text x="{cx:.1f}" y="{baseline:.1f}" text-anchor="middle"{weight}>'
                   f'{escape(line)}</text>')
    out.append("</g>")
    return "".join(out)


def _edge(points, dashed):
    """A smooth path through ``points``, vertical at each one, ending in an arrowhead."""
    (x0, y0), *rest = points
    xe, ye = rest[-1]
    rest[-1] = (xe, ye - _ARROW)
    d = [f"M{x0:.1f},{y0:.1f}"]
    for x1, y1 in rest:
        mid = (y1 - y0) / 2
        d.append(f"C{x0:.1f},{y0 + mid:.1f} {x1:.1f},{y1 - mid:.1f} {x1:.1f},{y1:.1f}")
        x0, y0 = x1, y1
    dash = ' stroke-dasharray="4 3"' if dashed else ""
    head = (f"{xe - 4:.1f},{ye - _ARROW:.1f} {xe + 4:.1f},{ye - _ARROW:.1f} "
            f"{xe:.1f},{ye:.1f}")
    return (f'<g class="edge"><path d="{" ".join(d)}" fill="none" stroke="#555555"'
            f'{dash}/><polygon points="{head}" fill="#555555"/></g>')
