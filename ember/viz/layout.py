"""A compact layered (Sugiyama-style) layout for directed acyclic graphs, in plain Python.

Why not a library: Graphviz is a program users must install (torchviz's most common complaint),
and the pure-Python layout library grandalf took 0.3-0.45 s for a 500-node graph here, most of
a one-second budget. Autograd graphs are DAGs with mostly short edges, and the classic phases
below lay out 500 nodes in a few hundredths of a second:

1. **Layering.** Each node goes on the layer given by its longest path down to a sink, counted
   from the bottom, so every edge points down and each node sits just above its first user
   (a bias added at the end is drawn next to that addition, not at the top of the page).
   A source (a leaf) used far below its first use is drawn again above each distant use: a
   weight shared by every step of a recurrent net does not send one edge per step down the
   whole picture.
2. **Dummy nodes.** An edge spanning ``k`` layers is cut into ``k`` one-layer segments through
   ``k - 1`` invisible dummy nodes, so long edges take part in ordering and are routed around
   the real nodes.
3. **Ordering.** Each layer starts in depth-first order from the sinks (a tree comes out with no
   crossings), then barycenter sweeps (down, then up) move each node to the mean position of its
   neighbours in the layer before; the ordering with the fewest crossings is kept.
4. **Coordinates.** Layers are stacked top to bottom. Within a layer, nodes are pulled towards
   the weighted mean ``x`` of their neighbours, subject to a minimal gap between consecutive
   nodes: a weighted least-squares problem under order constraints, solved exactly by isotonic
   regression (pool adjacent violators) in linear time. Alternating passes straighten edges.

``layout(sizes, edges)`` returns node centres and, for each edge, the points it passes through.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Layout", "layout", "crossings"]

_HGAP = 24.0     # horizontal space between two boxes
_DUMMY_GAP = 10.0  # between a box and an edge passing it, or two such edges
_VGAP = 44.0     # vertical space between layers
_MARGIN = 8.0
_SWEEPS = 6
_MAX_SPAN = 3  # layers an edge from a source may span before the source is drawn again
_PORT_STEP = 10.0  # between neighbouring edge ends on a box


@dataclass
class Layout:
    """Node centres ``(x, y)``, one list of route points per edge, the centres of the copies
    of far-used sources (see ``_copy_far_sources``), and the drawing's size."""

    centers: list[tuple[float, float]]
    routes: list[list[tuple[float, float]]]
    copies: list[tuple[int, tuple[float, float]]]  # (node, centre) where a node is drawn again
    width: float
    height: float


def layout(sizes, edges):
    """Lay out a DAG: ``sizes[i] = (width, height)`` of node ``i``; ``edges`` are ``(u, v)``
    pairs with ``u`` drawn above ``v``. Nodes given first are placed first (left, for sinks)."""
    n = len(sizes)
    layer = _layers(n, edges)
    sizes, edges, copies = _copy_far_sources(sizes, edges, layer)
    real = len(sizes)  # nodes and their copies; ids from ``real`` on are dummies
    # Cut long edges: chains[e] lists the nodes edge e passes through.
    widths = [w for w, _ in sizes]
    chains = []
    for u, v in edges:
        chain = [u]
        for k in range(layer[u] + 1, layer[v]):
            layer.append(k)
            widths.append(0.0)
            chain.append(len(layer) - 1)
        chain.append(v)
        chains.append(chain)
    total = len(layer)
    up = [[] for _ in range(total)]
    down = [[] for _ in range(total)]
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            down[a].append(b)
            up[b].append(a)
    rows = _initial_order(real, layer, up)
    rows = _reduce_crossings(rows, up, down)
    xs = _coordinates(rows, widths, real, up, down)
    heights = [max((sizes[i][1] for i in row if i < real), default=0.0) for row in rows]
    ys, y = [0.0] * total, _MARGIN
    for row, h in zip(rows, heights):
        for i in row:
            ys[i] = y + h / 2
        y += h + _VGAP
    routes = [[(xs[i], ys[i]) for i in chain] for chain in chains]
    _attach(routes, chains, sizes)
    width = max((xs[i] + widths[i] / 2 for i in range(total)), default=0.0) + _MARGIN
    return Layout([(xs[i], ys[i]) for i in range(n)], routes,
                  [(u, (xs[c], ys[c])) for c, u in enumerate(copies, n)], width,
                  max(y - _VGAP + _MARGIN, 2 * _MARGIN))


def _copy_far_sources(sizes, edges, layer):
    """Draw a source again above each distant user: an edge from a source spanning more than
    ``_MAX_SPAN`` layers starts from a copy on the layer above its target instead.

    A weight shared by 100 steps of a recurrent net would otherwise send 100 edges down the
    whole picture (and cost thousands of dummy nodes). Returns the sizes and edges with the
    copies added (ids from ``len(sizes)`` on; ``layer`` is extended in place) and, for each
    copy, the node it copies.
    """
    n = len(sizes)
    has_in = {v for _, v in edges}
    sizes, new_edges, copies, copy_at = list(sizes), [], [], {}
    for u, v in edges:
        if u not in has_in and layer[v] - layer[u] > _MAX_SPAN:
            c = copy_at.get((u, layer[v]))
            if c is None:
                c = copy_at[(u, layer[v])] = n + len(copies)
                copies.append(u)
                sizes.append(sizes[u])
                layer.append(layer[v] - 1)
            u = c
        new_edges.append((u, v))
    return sizes, new_edges, copies


def _layers(n, edges):
    """Layer of each node: ``max`` over nodes of the longest path to a sink, minus its own."""
    succ = [[] for _ in range(n)]
    indeg = [0] * n
    for u, v in edges:
        succ[u].append(v)
        indeg[v] += 1
    order = [i for i in range(n) if indeg[i] == 0]
    for u in order:  # Kahn's topological sort: ``order`` grows while we walk it
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                order.append(v)
    if len(order) != n:
        raise ValueError("layout: the graph has a cycle")
    height = [0] * n
    for u in reversed(order):
        height[u] = max((height[v] + 1 for v in succ[u]), default=0)
    top = max(height, default=0)
    return [top - h for h in height]


def _initial_order(n, layer, up):
    """Rows of node ids, in depth-first order from the sinks (inputs left to right)."""
    rows = [[] for _ in range(max(layer, default=-1) + 1)]
    seen = [False] * len(layer)
    has_down = [False] * len(layer)
    for parents in up:
        for p in parents:
            has_down[p] = True
    for start in range(n):
        if seen[start] or has_down[start]:
            continue
        stack = [start]
        while stack:
            i = stack.pop()
            if seen[i]:
                continue
            seen[i] = True
            rows[layer[i]].append(i)
            stack.extend(reversed(up[i]))
    return rows


def _reduce_crossings(rows, up, down):
    """Barycenter sweeps; returns the ordering with the fewest crossings seen."""
    best, best_count = [row[:] for row in rows], crossings(rows, down)
    for sweep in range(_SWEEPS):
        if best_count == 0:
            break
        order = range(1, len(rows)) if sweep % 2 == 0 else range(len(rows) - 2, -1, -1)
        neighbours = up if sweep % 2 == 0 else down
        for r in order:
            ref = rows[r - 1] if sweep % 2 == 0 else rows[r + 1]
            pos = {i: k for k, i in enumerate(ref)}
            keys = {}
            for k, i in enumerate(rows[r]):
                adj = neighbours[i]
                keys[i] = sum(pos[j] for j in adj) / len(adj) if adj else k
            rows[r].sort(key=keys.__getitem__)
        count = crossings(rows, down)
        if count < best_count:
            best, best_count = [row[:] for row in rows], count
    return best


def crossings(rows, down):
    """Number of edge crossings between consecutive rows (``down[i]``: i's neighbours below)."""
    total = 0
    for r in range(len(rows) - 1):
        below = {i: k for k, i in enumerate(rows[r + 1])}
        pairs = sorted((k, below[j]) for k, i in enumerate(rows[r]) for j in down[i])
        # Count inversions of the lower ends with a Fenwick tree: O(E log V).
        size = len(rows[r + 1])
        tree = [0] * (size + 1)
        for seen, (_, b) in enumerate(pairs):
            i, not_above = b + 1, 0
            while i > 0:
                not_above += tree[i]
                i -= i & -i
            total += seen - not_above
            i = b + 1
            while i <= size:
                tree[i] += 1
                i += i & -i
    return total


def _coordinates(rows, widths, n, up, down):
    """``x`` of every node: rows packed left to right, then pulled over their neighbours.

    Pulls are weighted by *mass*, the length of the longest path from the top down to a node:
    a node follows its heavy neighbours (the long history of a chain) more than light ones (a
    leaf hanging beside it), and light nodes give way first when a row is crowded. Unweighted,
    every step of a recurrent net would shift the chain half a box towards its side inputs,
    and the picture would drift sideways over its whole height.
    """
    xs = [0.0] * len(widths)
    mass = [1] * len(widths)
    for row in rows:
        x = _MARGIN
        for i in row:
            xs[i] = x + widths[i] / 2
            x += widths[i] + _HGAP
            mass[i] = 1 + max((mass[j] for j in up[i]), default=0)
    # A node with a single edge (a leaf, a saved value) follows and barely pulls.
    pull = [mass[i] if len(up[i]) + len(down[i]) > 1 else 1e-3 for i in range(len(xs))]
    passes = [up, down, up, down, up]
    for neighbours in passes:
        for row in rows if neighbours is not down else rows[::-1]:
            targets = []
            for i in row:
                pulls = []
                if neighbours is not down:
                    pulls += [(pull[j], xs[j]) for j in up[i]]
                if neighbours is not up:
                    pulls += [(min(pull[j], 1), xs[j]) for j in down[i]]
                total = sum(w for w, _ in pulls)
                targets.append(sum(w * x for w, x in pulls) / total if pulls else xs[i])
            _place(row, targets, [mass[i] for i in row], widths, n, xs)
    left = min((xs[i] - widths[i] / 2 for row in rows for i in row), default=0.0)
    return [x - left + _MARGIN for x in xs]


def _place(row, targets, weights, widths, n, xs):
    """Positions closest (weighted least squares) to ``targets`` that keep the row's order and
    gaps.

    With ``c`` the cumulative minimal offsets, ``x_k = y_k + c_k`` turns the gap constraints
    into ``y`` non-decreasing: isotonic regression of ``targets - c`` (pool adjacent violators).
    """
    offsets, c = [], 0.0
    for k, i in enumerate(row):
        if k:
            prev = row[k - 1]
            gap = _HGAP if prev < n and i < n else _DUMMY_GAP
            c += (widths[prev] + widths[i]) / 2 + gap
        offsets.append(c)
    blocks = []  # [weighted sum, weight, count] of pooled values, means increasing
    for t, c, w in zip(targets, offsets, weights):
        blocks.append([w * (t - c), w, 1])
        while len(blocks) > 1 and blocks[-2][0] * blocks[-1][1] > blocks[-1][0] * blocks[-2][1]:
            s, w, m = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += w
            blocks[-1][2] += m
    k = 0
    for s, w, m in blocks:
        for _ in range(m):
            xs[row[k]] = s / w + offsets[k]
            k += 1


def _attach(routes, chains, sizes):
    """Move route ends from node centres to the box edges, spreading the edges that meet a
    box across its bottom (leaving) or top (arriving), in the order of where they come from."""
    ends = [[] for _ in sizes]  # (x of the neighbouring point, route, index of the end)
    for route, chain in zip(routes, chains):
        ends[chain[0]].append((route[1][0], route, 0, 1.0))
        ends[chain[-1]].append((route[-2][0], route, -1, -1.0))
    for i, found in enumerate(ends):
        w, h = sizes[i]
        for side in (1.0, -1.0):
            mine = sorted((e for e in found if e[3] == side), key=lambda e: e[0])
            step = min(_PORT_STEP, 0.6 * w / max(len(mine), 1))
            for k, (_, route, at, _) in enumerate(mine):
                x, y = route[at]
                route[at] = (x + (k - (len(mine) - 1) / 2) * step, y + side * h / 2)
