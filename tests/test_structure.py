"""The shape of the ``ember`` package: no module-level import cycle, no giant file, and every
import of an ember module inside a function a genuine lazy load that says why.

The graph and the imports are read from the source by ``tools/import_graph.py`` (see its
docstring for what counts as an edge). Each check has an allow-list of what other work in
progress (issue 18) is still fixing; an entry that no longer applies fails the test, so the
lists only shrink: delete the entry it names.
"""
import fnmatch
import os

import pytest

from tools import import_graph

ROOT = os.path.join(os.path.dirname(__file__), os.pardir, "ember")
MAX_LINES = 800

# Module-level import cycles allowed today, each being broken by another issue-18 branch.
ALLOWED_CYCLES: list[set[str]] = []

# Files over MAX_LINES today, each being split by another issue-18 branch.
ALLOWED_GIANTS: set[str] = set()

# Files whose function-level imports other issue-18 branches are restructuring today (paths
# relative to ember/, fnmatch patterns: a package that replaces a module is covered too).
UNCHECKED_LAZY_IMPORTS = [
]

# Imports of ember modules inside functions, all told (issue 18 asks for at most 25). Each is a
# genuine lazy load; a new one usually means a layer reaching up: see ember/_upcalls.py and the
# methods ember/_tensor_methods.py binds before adding it. Lower the number when it falls.
MAX_FUNCTION_IMPORTS = 15


@pytest.fixture(scope="module")
def scanned():
    return import_graph.scan(ROOT)


def test_no_module_level_import_cycle(scanned):
    graph, _ = scanned
    cycles = [set(c) for c in import_graph.cycles(graph)]
    unexpected = [sorted(c) for c in cycles if c not in ALLOWED_CYCLES]
    assert not unexpected, (
        "module-level import cycles (import one side inside a function, with a '# lazy:' "
        f"reason, or move the shared code below both): {unexpected}")
    stale = [sorted(c) for c in ALLOWED_CYCLES if c not in cycles]
    assert not stale, f"cycles gone: delete them from ALLOWED_CYCLES: {stale}"


def _sources():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                yield os.path.relpath(path, ROOT).replace(os.sep, "/"), path


def test_no_file_over_the_line_limit():
    sizes = {}
    for rel, path in _sources():
        with open(path, encoding="utf-8") as f:
            sizes[rel] = sum(1 for _ in f)
    giants = {rel: n for rel, n in sizes.items() if n > MAX_LINES}
    unexpected = {rel: n for rel, n in giants.items() if rel not in ALLOWED_GIANTS}
    assert not unexpected, f"files over {MAX_LINES} lines (split them by concern): {unexpected}"
    stale = sorted(ALLOWED_GIANTS - set(giants))
    assert not stale, f"no longer over {MAX_LINES} lines: delete from ALLOWED_GIANTS: {stale}"


def test_function_level_imports_say_why(scanned):
    _, inner = scanned
    missing = []
    for imp in inner:
        rel = os.path.relpath(os.path.abspath(imp.path), os.path.abspath(ROOT))
        rel = rel.replace(os.sep, "/")
        if imp.reason is None and not any(fnmatch.fnmatch(rel, p)
                                          for p in UNCHECKED_LAZY_IMPORTS):
            missing.append(str(imp))
    assert not missing, (
        "imports of ember modules inside functions without a '# lazy: <reason>' comment on "
        "the line (move them to module level where that makes no cycle):\n"
        + "\n".join(missing))


def test_function_level_imports_are_few(scanned):
    _, inner = scanned
    assert len(inner) <= MAX_FUNCTION_IMPORTS, (
        f"{len(inner)} imports of ember modules inside functions, over the limit of "
        f"{MAX_FUNCTION_IMPORTS} (restructure instead: move the shared code below both modules, "
        "or let the higher layer install into the lower):\n" + "\n".join(map(str, inner)))
    assert len(inner) == MAX_FUNCTION_IMPORTS, (
        f"only {len(inner)} imports of ember modules inside functions now: lower "
        f"MAX_FUNCTION_IMPORTS to {len(inner)}")


def test_tensor_builds_on_neither_autograd_nor_ops(scanned):
    """``_tensor.py`` and every module it imports at module level, however indirectly, import
    no module of ``ember.autograd`` or ``ember.ops`` (nor does any of their functions): what
    Tensor needs of those layers they install into ``ember/_upcalls.py``."""
    graph, inner = scanned
    below, todo = set(), ["ember._tensor"]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in below:
                below.add(target)
                todo.append(target)
    below.add("ember._tensor")
    reached = below | {i.target for i in inner if i.module in below}
    upward = sorted(m for m in reached if m.split(".")[1] in ("autograd", "ops"))
    assert not upward, f"Tensor's modules import the layers built on it: {upward}"


def test_every_upcall_slot_is_filled():
    """The layers above Tensor fill each slot of ``ember/_upcalls.py`` as ember is imported."""
    import ember  # noqa: F401
    from ember._upcalls import _Upcalls, upcalls
    assert [name for name in _Upcalls.__annotations__ if not hasattr(upcalls, name)] == []


def test_the_tool_sees_cycles_and_reasons(tmp_path):
    """tools/import_graph.py on a small package: a cycle through a package's __init__, one
    broken by a function-level import, a TYPE_CHECKING import, and a lazy reason."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text(
        "import pkg\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from .. import c\n"
        "def f():\n"
        "    from ..a import x  # lazy: a imports this module\n"
        "    from .. import c\n")
    (pkg / "c.py").write_text("from .sub import b\n")
    graph, inner = import_graph.scan(str(pkg))
    assert graph["pkg.sub.b"] == {"pkg"}
    assert import_graph.cycles(graph) == [["pkg", "pkg.a", "pkg.sub.b"]]
    assert [(i.target, i.reason) for i in inner] == [
        ("pkg.a", "a imports this module"), ("pkg.c", None)]


def test_op_families_list_no_surface_by_hand():
    """The public surface is read off the declarations (``ember/ops/_surface.py``): no op
    module keeps a hand-written list of its methods or in-place forms, and ``import ember``
    takes the op functions from ``ops/_exports.py`` only (no family's ``__all__``)."""
    import ast

    lists = ("METHODS", "INPLACE", "ARRAY_API", "LOGICAL_METHODS")
    found = []
    ops_dir = os.path.join(ROOT, "ops")
    for folder, _, files in os.walk(ops_dir):
        for name in files:
            if not name.endswith(".py") or name in ("_surface.py", "_exports.py"):
                continue
            path = os.path.join(folder, name)
            with open(path) as f:
                tree = ast.parse(f.read())
            for node in tree.body:
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
                found += [f"{os.path.relpath(path, ops_dir)}: {t.id}" for t in targets
                          if isinstance(t, ast.Name) and t.id in lists]
    with open(os.path.join(ROOT, "__init__.py")) as f:
        package = ast.parse(f.read())
    found += [f"ember/__init__.py: from .{n.module} import *" for n in package.body
              if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("ops.")
              and n.module != "ops._exports" and any(a.name == "*" for a in n.names)]
    assert not found, found
