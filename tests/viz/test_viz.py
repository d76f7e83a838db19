"""ember.viz: graph structure (against PyTorch's own graph), DOT, SVG, layout and rendering."""
import importlib.util
import random
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

import ember
from ember import viz
from ember.viz import layout as layout_mod
from ember.viz.svg import STYLES

from ..seed_graphs import seed_vjp

SVG = "{http://www.w3.org/2000/svg}"


# ----------------------------------------------------------------------------- helpers


def seed_demo(lib):
    """The seeds' first example: y = x + 2; z = 3*y*y; out = z.mean()."""
    x = lib.ones(2, 2, requires_grad=True)
    out = (3 * (x + 2) * (x + 2)).mean()
    return x, out



def network(lib):
    """The seeds' one-layer network, z = x @ W + b with a logistic loss."""
    lib.manual_seed(0)
    x, W, b = lib.ones(8, requires_grad=True), lib.randn(8, 10, requires_grad=True), \
        lib.randn(10, requires_grad=True)
    y = lib.zeros(10)
    loss = lib.nn.functional.binary_cross_entropy_with_logits(lib.matmul(x, W) + b, y)
    return {"x": x, "W": W, "b": b}, loss


def torch_graph(root, names):
    """Node labels and ``(input, node)`` label pairs of PyTorch's graph, leaves by name."""
    def label(fn):
        if type(fn).__name__ == "AccumulateGrad":
            return next(k for k, t in names.items() if t is fn.variable)
        return type(fn).__name__
    nodes, edges, seen, stack = Counter(["output"]), Counter(), set(), [root.grad_fn]
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        nodes[label(fn)] += 1
        for child, _ in fn.next_functions:
            if child is not None:
                edges[label(child), label(fn)] += 1
                stack.append(child)
    edges[label(root.grad_fn), "output"] += 1
    return nodes, edges


def dot_graph(dot):
    """Box labels (first lines) and the labelled edge multiset read back from DOT text."""
    labels = {m[1]: m[2].split("\\n") for m in re.finditer(r'\tn(\d+) \[label="(.*?)"', dot)}
    edges = Counter((labels[a][0], labels[b][0])
                    for a, b in re.findall(r"\tn(\d+) -> n(\d+)", dot))
    return labels, edges


def svg_tree(text):
    root = ET.fromstring(text)
    assert root.tag == SVG + "svg"
    assert float(root.get("width")) > 0 and float(root.get("height")) > 0
    return root


def boxes_of(root, kind=None):
    return [g for g in root.iter(SVG + "g")
            if g.get("class", "").startswith("node") and (kind is None or kind in g.get("class"))]


# ----------------------------------------------------------------------------- structure


@pytest.mark.parametrize("make", [seed_demo, seed_vjp, network])
def test_dot_matches_pytorchs_graph(torch, make):
    """Nodes are PyTorch's class names, edges PyTorch's next_functions, leaves the user's names."""
    ours, theirs = make(ember), make(torch)
    if make is network:
        (names, out), (tnames, tout) = ours, theirs
    else:
        names, out = {"x": ours[0]}, ours[1]
        tnames, tout = {"x": theirs[0]}, theirs[1]
    labels, edges = dot_graph(viz.graph(out, params=names).to_dot())
    nodes, torch_edges = torch_graph(tout, tnames)
    assert edges == torch_edges
    assert Counter(lines[0] for lines in labels.values()) == nodes


def test_labels_carry_shapes_and_dtypes():
    x, out = seed_demo(ember)
    labels, _ = dot_graph(viz.graph(out, params={"x": x}).to_dot())
    by_name = {lines[0]: lines[1:] for lines in labels.values()}
    assert by_name["x"] == ["(2, 2) float32"]
    assert by_name["AddBackward0"] == ["(2, 2) float32"]
    assert by_name["MeanBackward0"] == ["() float32"]
    assert by_name["output"] == ["() float32"]
    y = ember.ones(3, dtype=ember.float64, requires_grad=True)
    labels, _ = dot_graph(viz.graph(y.exp().sum()).to_dot())
    assert ["(3,) float64"] in labels.values()  # an unnamed leaf shows its shape only


def test_svg_has_one_box_per_node_and_one_path_per_edge():
    names, loss = network(ember)
    g = viz.graph(loss, params=names)
    labels, _ = dot_graph(g.to_dot())
    root = svg_tree(g.to_svg())
    boxes = boxes_of(root)
    assert len(boxes) == len(labels) == len(g.boxes)
    assert len([e for e in root.iter(SVG + "g") if e.get("class") == "edge"]) == len(g.edges)
    texts = [[t.text for t in box.iter(SVG + "text")] for box in boxes]
    assert sorted(texts) == sorted(labels.values())
    fills = {box.find(SVG + "rect").get("fill") for box in boxes_of(root, "leaf")}
    assert fills == {STYLES["leaf"][0]}
    assert g._repr_svg_() == g.to_svg()


def test_boxes_do_not_overlap():
    names, loss = network(ember)
    rects = [tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))
             for r in svg_tree(viz.graph(loss, params=names).to_svg()).iter(SVG + "rect")
             if r.get("class") != "background"]
    for i, (x0, y0, w0, h0) in enumerate(rects):
        for x1, y1, w1, h1 in rects[i + 1:]:
            assert x0 + w0 <= x1 or x1 + w1 <= x0 or y0 + h0 <= y1 or y1 + h1 <= y0


def test_show_saved_draws_saved_tensors_and_plain_arguments():
    x = ember.ones(2, 2, requires_grad=True)
    y = x + 2
    out = (y * y).sum()
    g = viz.graph(out, show_saved=True)
    saved = [lines for kind, lines in g.boxes if kind == "saved"]
    assert sorted(lines[0] for lines in saved) == ["input", "other"]  # y * y saves both
    assert all(lines[1] == "(2, 2) float32" for lines in saved)
    assert sum(dashed for _, _, dashed in g.edges) == 2
    add = next(lines for kind, lines in g.boxes if lines[0] == "AddBackward0")
    assert "alpha=1" in add
    out.backward()
    g = viz.graph(out, show_saved=True)
    mul = next(lines for kind, lines in g.boxes if lines[0] == "MulBackward0")
    assert "saved values: freed" in mul
    assert not any(kind == "saved" for kind, _ in g.boxes)


def test_show_grads_after_backward():
    x, out = seed_demo(ember)
    w = ember.randn(5, requires_grad=True)
    out = out + (w * w).sum()
    assert "grad: None" in viz.graph(out, params={"x": x}, show_grads=True).to_dot()
    out.backward()
    leaves = {lines[0]: lines for kind, lines in
              viz.graph(out, params={"x": x, "w": w}, show_grads=True).boxes if kind == "leaf"}
    expected = ", ".join(f"{v:.4g}" for v in x.grad.reshape(-1).tolist())
    assert leaves["x"][-1] == f"grad: [{expected}]"
    lo, hi = (2 * w).min().item(), (2 * w).max().item()
    assert leaves["w"][-1] == f"grad in [{lo:.4g}, {hi:.4g}]"


def test_several_roots_and_a_leaf_root():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    a, b = x.sin(), x.cos()
    labels, edges = dot_graph(viz.graph([a, b], params={"x": x}).to_dot())
    assert edges == Counter({("x", "SinBackward0"): 1, ("x", "CosBackward0"): 1,
                             ("SinBackward0", "output 0"): 1, ("CosBackward0", "output 1"): 1})
    g = viz.graph(x, params={"x": x})
    assert g.boxes == [("leaf", ["x", "(2,) float32"])] and g.edges == []


def test_named_parameters_name_the_leaves():
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(), ember.nn.Linear(4, 1))
    loss = model(ember.randn(2, 3)).sum()
    g = viz.graph(loss, params=model.named_parameters())
    leaves = sorted(lines[0] for kind, lines in g.boxes if kind == "leaf")
    assert leaves == sorted(name for name, _ in model.named_parameters())


def test_unknown_node_kinds_are_drawn_by_name():
    x, y = seed_vjp(ember)
    labels, edges = dot_graph(viz.graph(y).to_dot())
    assert edges[("CopySlices", "output")] == 1
    assert edges[("CopySlices", "CopySlices")] == 2


# ----------------------------------------------------------------------------- errors


def test_a_tensor_without_a_graph_is_refused_clearly():
    with pytest.raises(RuntimeError, match="no backward graph.*requires_grad=True"):
        viz.graph(ember.ones(2))
    with ember.no_grad():
        y = ember.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="does not require grad"):
        viz.graph(y)
    with pytest.raises(TypeError, match="expected a Tensor"):
        viz.graph([1.0])


# ----------------------------------------------------------------------------- files


def test_save_svg_and_dot(tmp_path):
    x, out = seed_demo(ember)
    g = viz.graph(out, params={"x": x})
    assert g.save(tmp_path / "g.svg").read_text() == g.to_svg()
    assert g.save(tmp_path / "g.dot").read_text() == g.to_dot()
    with pytest.raises(ValueError, match="use .svg"):
        g.save(tmp_path / "g.jpeg")


def test_png_without_graphviz_says_what_to_install(tmp_path, monkeypatch):
    x, out = seed_demo(ember)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="Graphviz program 'dot'.*save as .svg"):
        viz.graph(out).save(tmp_path / "g.png")


@pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz program is not installed")
def test_png_and_pdf_through_graphviz(tmp_path):
    x, out = seed_demo(ember)
    g = viz.graph(out, params={"x": x})
    assert g.save(tmp_path / "g.png").read_bytes().startswith(b"\x89PNG")
    assert g.save(tmp_path / "g.pdf").read_bytes().startswith(b"%PDF")


# ----------------------------------------------------------------------------- layout


def test_layout_of_a_500_node_tree_has_no_crossings_and_parents_over_children():
    leaves = [ember.tensor(float(i), requires_grad=True) for i in range(256)]
    level = leaves
    while len(level) > 1:
        level = [level[i] + level[i + 1] for i in range(0, len(level), 2)]
    g = viz.graph(level[0])
    sizes = [(60.0, 30.0)] * len(g.boxes)
    edges = [(u, v) for u, v, _ in g.edges]
    lay = layout_mod.layout(sizes, edges)
    assert len(g.boxes) > 500
    assert _crossings(lay, edges) == 0
    inputs = {}
    for u, v in edges:
        inputs.setdefault(v, []).append(lay.centers[u][0])
    for v, xs in inputs.items():  # every sum sits between its two inputs
        assert min(xs) <= lay.centers[v][0] <= max(xs)


def test_barycenter_sweeps_untangle_a_permuted_matching():
    rng = random.Random(0)
    n = 30
    perm = list(range(n))
    rng.shuffle(perm)
    # Tops i -> middles perm[i] -> one sink each: a layout with no crossings exists.
    edges = [(i, n + perm[i]) for i in range(n)] + [(n + j, 2 * n + j) for j in range(n)]
    rows = [list(range(n)), [n + j for j in range(n)], [2 * n + j for j in range(n)]]
    up = [[] for _ in range(3 * n)]
    down = [[] for _ in range(3 * n)]
    for u, v in edges:
        down[u].append(v)
        up[v].append(u)
    assert layout_mod.crossings(rows, down) > 0
    assert layout_mod.crossings(layout_mod._reduce_crossings(rows, up, down), down) == 0


def test_a_shared_weight_is_drawn_again_near_distant_uses():
    """An RNN: W is used at every step; far uses get a copy of W instead of a long edge."""
    W = ember.randn(4, 4, requires_grad=True)
    h = ember.zeros(1, 4)
    for _ in range(20):
        h = ember.tanh(h @ W)
    g = viz.graph(h.sum(), params={"W": W})
    lay = layout_mod.layout([(80.0, 30.0)] * len(g.boxes), [(u, v) for u, v, _ in g.edges])
    w_box = next(i for i, (kind, lines) in enumerate(g.boxes) if lines[0] == "W")
    assert len(lay.copies) >= 15 and {i for i, _ in lay.copies} == {w_box}
    assert all(len(route) <= layout_mod._MAX_SPAN + 1 for route in lay.routes)  # short edges
    xs = [lay.centers[i][0] for i, (_, lines) in enumerate(g.boxes) if lines[0] == "MmBackward0"]
    assert max(xs) - min(xs) < 80  # the chain runs straight down, it does not drift aside
    root = svg_tree(g.to_svg())
    assert len(boxes_of(root, "copy")) == len(lay.copies)


def test_500_node_graph_renders_in_under_a_second():
    ember.manual_seed(0)
    W, U = ember.randn(8, 8, requires_grad=True), ember.randn(4, 8, requires_grad=True)
    b = ember.zeros(8, requires_grad=True)
    h = ember.zeros(1, 8)
    for _ in range(100):
        h = ember.tanh(h @ W + ember.randn(1, 4) @ U + b)
    start = time.perf_counter()
    g = viz.graph(h.sum(), params={"W": W, "U": U, "b": b})
    svg = g.to_svg()
    elapsed = time.perf_counter() - start
    assert len(g.boxes) >= 500
    svg_tree(svg)
    assert elapsed < 1.0, f"{elapsed:.2f} s"


def _crossings(lay, edges):
    """Pairs of edges between the same two layers whose ends are in opposite orders."""
    count = 0
    for i, (a, b) in enumerate(edges):
        for c, d in edges[i + 1:]:
            same_rows = lay.centers[a][1] == lay.centers[c][1] and \
                lay.centers[b][1] == lay.centers[d][1]
            if same_rows and a != c and b != d:
                dx_top = lay.centers[a][0] - lay.centers[c][0]
                dx_bottom = lay.centers[b][0] - lay.centers[d][0]
                count += dx_top * dx_bottom < 0
    return count


# ----------------------------------------------------------------------------- browser


def _screenshot(svg_path, png_path):
    """Screenshot ``svg_path`` with headless Chromium (a program on PATH, or playwright's);
    skips when there is none."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        browser = shutil.which(name)
        if browser:
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                            "--window-size=800,600", f"--screenshot={png_path}",
                            svg_path.as_uri()], capture_output=True, timeout=120, check=True)
            return
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        pytest.skip("no headless Chromium: neither chromium nor playwright is installed")
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch()
        except Error as e:
            pytest.skip(f"playwright has no Chromium: {e}")
        page = browser.new_page(viewport={"width": 800, "height": 600})
        page.goto(svg_path.as_uri())
        page.screenshot(path=str(png_path))
        browser.close()


def test_svg_opens_in_a_real_browser(tmp_path):
    x, out = seed_demo(ember)
    svg_path = viz.graph(out, params={"x": x}).save(tmp_path / "graph.svg")
    png_path = tmp_path / "graph.png"
    _screenshot(svg_path, png_path)
    Image = pytest.importorskip("PIL.Image")
    pixels = Counter({color: n for n, color in
                      Image.open(png_path).convert("RGB").getcolors(1 << 24)})
    leaf_fill = tuple(int(STYLES["leaf"][0][k:k + 2], 16) for k in (1, 3, 5))
    op_fill = tuple(int(STYLES["op"][0][k:k + 2], 16) for k in (1, 3, 5))
    assert pixels[(255, 255, 255)] < sum(pixels.values())  # not blank
    assert pixels[leaf_fill] > 500 and pixels[op_fill] > 500  # the boxes were painted


def test_readme_picture_is_what_the_script_draws_now():
    path = Path(__file__).resolve().parent.parent.parent / "docs" / "make_pictures.py"
    spec = importlib.util.spec_from_file_location("make_pictures", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.PICTURE.read_text(encoding="utf-8") == script.readme_graph().to_svg(), \
        "run: python docs/make_pictures.py"
