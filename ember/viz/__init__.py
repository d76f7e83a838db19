"""``ember.viz``: pictures of the backward graph, drawn without Graphviz.

``graph(loss, params=dict(model.named_parameters()))`` returns a :class:`Graph`: in Jupyter it
shows itself inline (``_repr_svg_``); ``save("g.svg")`` writes the picture; ``to_dot()`` gives
DOT text, and ``save("g.png")`` / ``save("g.pdf")`` pass it through the Graphviz program when it
is installed. The SVG needs no program at all: the layout is ember's own (``layout.py``), so
pictures work the same in plain Jupyter, JupyterLite and CI.

The picture reads like torchviz's: grad_fn nodes (grey) under PyTorch's class names, leaves
(blue) under your names, the outputs (green) at the bottom, and arrows in the forward direction
— backward runs against them.
"""
from __future__ import annotations

import pathlib
import shutil

from ..autograd._walk import as_list, is_leaf_node, leaf_names, root_edges, shape_text, walk
from . import svg

__all__ = ["graph", "Graph"]

_NO_DOT = (
    "Writing {fmt} needs the Graphviz program 'dot', which is not on PATH. Install Graphviz "
    "(apt install graphviz, brew install graphviz or conda install graphviz; "
    "https://graphviz.org/download/), or save as .svg, which needs nothing."
)


class Graph:
    """A drawable backward graph: ``boxes`` (kind, label lines) and ``edges`` (src, dst, dashed).

    Kinds: ``op`` (a grad_fn), ``leaf``, ``output`` and ``saved`` (a value a node saved for
    backward; its edge is dashed).
    """

    def __init__(self, boxes, edges):
        self.boxes = boxes
        self.edges = edges

    def __repr__(self):
        return f"<ember.viz.Graph: {len(self.boxes)} nodes, {len(self.edges)} edges>"

    def to_svg(self):
        """The picture as SVG text (ember's own layout; no Graphviz)."""
        return svg.render(self.boxes, self.edges)

    def _repr_svg_(self):
        return self.to_svg()

    def to_dot(self):
        """The graph as Graphviz DOT text, styled like the SVG."""
        lines = ["digraph {",
                 '\tnode [shape=box style="rounded,filled" fontname="monospace" fontsize=10]']
        for i, (kind, label) in enumerate(self.boxes):
            text = "\\n".join(_dot_escape(s) for s in label)
            lines.append(f'\tn{i} [label="{text}" fillcolor="{svg.STYLES[kind][0]}"]')
        for u, v, dashed in self.edges:
            lines.append(f"\tn{u} -> n{v}" + (" [style=dashed]" if dashed else ""))
        lines.append("}")
        return "\n".join(lines) + "\n"

    def pipe(self, format):
        """The picture rendered by the Graphviz program (``"png"``, ``"pdf"``, ...), as bytes."""
        import subprocess  # only here: importing it costs every ``import ember`` a few ms
        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError(_NO_DOT.format(fmt=format.upper()))
        return subprocess.run([dot, f"-T{format}"], input=self.to_dot().encode(),
                              capture_output=True, check=True).stdout

    def save(self, path):
        """Write ``.svg`` (no Graphviz needed), ``.dot``/``.gv``, or ``.png``/``.pdf``
        (through Graphviz), chosen by the file's suffix. Returns the path."""
        path = pathlib.Path(path)
        suffix = path.suffix.lower()
        if suffix == ".svg":
            path.write_text(self.to_svg(), encoding="utf-8")
        elif suffix in (".dot", ".gv"):
            path.write_text(self.to_dot(), encoding="utf-8")
        elif suffix in (".png", ".pdf"):
            path.write_bytes(self.pipe(suffix[1:]))
        else:
            raise ValueError(f"save(): cannot write '{suffix}' files; use .svg, .dot, .gv, "
                             ".png or .pdf")
        return path


def graph(root, params=None, show_saved=False, show_grads=False):
    """The backward graph of ``root`` (a tensor or a sequence of tensors), ready to draw.

    Args:
        root: the output(s) whose history to draw; each must require grad.
        params: names for leaves: a dict ``{name: tensor}`` or ``module.named_parameters()``.
        show_saved: also draw what each node saved for backward (dashed, orange) and list its
            plain saved arguments (dims, shapes) in the node.
        show_grads: add each leaf's current ``.grad`` (values when small, else its range).

    Returns:
        A :class:`Graph`: shown inline in Jupyter; ``save``, ``to_svg``, ``to_dot``.

    Example::

        >>> from ember import viz
        >>> x = torch.ones(2, 2, requires_grad=True)
        >>> out = (3 * (x + 2) ** 2).mean()
        >>> viz.graph(out, params={"x": x}).save("graph.svg")
    """
    tensors = as_list(root)
    roots = root_edges(tensors, "graph()")
    names = leaf_names(params)
    boxes, edges = [], []
    for k, (t, (fn, _)) in enumerate(zip(tensors, roots)):
        if not is_leaf_node(fn):  # a leaf given as a root is drawn as its leaf box
            name = "output" if len(tensors) == 1 else f"output {k}"
            boxes.append(("output", [name, shape_text(t.shape, t.dtype)]))
    nodes = walk(roots)
    index = {node: len(boxes) + k for k, node in enumerate(nodes)}
    shapes = _output_shapes(nodes, tensors, roots)
    for node in nodes:
        if is_leaf_node(node):
            boxes.append(("leaf", _leaf_lines(node.variable, names, show_grads)))
        else:
            boxes.append(("op", [type(node).__name__, *shapes.get(node, [])]))
    for node in nodes:
        for child, _ in node.next_functions:
            if child is not None:
                edges.append((index[child], index[node], False))
        if show_saved and not is_leaf_node(node):
            _add_saved(node, index[node], boxes, edges)
    out = 0
    for fn, _ in roots:
        if not is_leaf_node(fn):
            edges.append((index[fn], out, False))
            out += 1
    return Graph(boxes, edges)


def _output_shapes(nodes, tensors, roots):
    """``node -> label lines`` for the shapes of its outputs, read off the consumers' input
    metadata and the roots (nodes whose outputs nobody describes get none)."""
    found = {}
    for t, (fn, nr) in zip(tensors, roots):
        found.setdefault(fn, {})[nr] = shape_text(t.shape, t.dtype)
    for node in nodes:
        for (child, nr), meta in zip(node.next_functions, getattr(node, "_meta", None) or ()):
            if child is not None and meta is not None:
                found.setdefault(child, {})[nr] = shape_text(*meta)
    return {node: ([outs[0]] if list(outs) == [0] else
                   [f"{nr}: {outs[nr]}" for nr in sorted(outs)])
            for node, outs in found.items() if not is_leaf_node(node)}


def _leaf_lines(t, names, show_grads):
    name = names.get(id(t))
    lines = ([name] if name else []) + [shape_text(t.shape, t.dtype)]
    if show_grads:
        g = t.grad
        if g is None:
            lines.append("grad: None")
        elif g.numel() <= 4:
            lines.append("grad: [" + ", ".join(f"{v:.4g}" for v in g.reshape(-1).tolist()) + "]")
        else:
            lines.append(f"grad in [{g.min().item():.4g}, {g.max().item():.4g}]")
    return lines


def _add_saved(node, at, boxes, edges):
    """Boxes for the arrays ``node`` saved, and its plain saved arguments as label lines."""
    if getattr(node, "_freed", False):
        boxes[at][1].append("saved values: freed")
        return
    saved = getattr(node, "_saved", None) or ()
    argnames = getattr(getattr(node, "_op", None), "argnames", ())
    values = [(argnames[i] if i < len(argnames) else f"arg{i}", v) for i, v in enumerate(saved)]
    ans = getattr(node, "_ans", None)
    if ans is not None:
        values += [("result", ans)] if hasattr(ans, "shape") else [
            (f"result{k}", a) for k, a in enumerate(ans)]
    for name, value in values:
        if value is None:
            continue
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            boxes.append(("saved", [name, shape_text(value.shape, value.dtype)]))
            edges.append((len(boxes) - 1, at, True))
        else:
            text = repr(tuple(value) if isinstance(value, tuple) else value)
            boxes[at][1].append(f"{name}={text if len(text) <= 24 else text[:21] + '...'}")


def _dot_escape(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')
