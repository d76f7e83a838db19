"""The import structure of the ``ember`` package, read from its source (nothing is imported).

Two things keep ember's modules easy to read in order and to split further:

- **No module-level import cycles.** Module ``a`` depends on ``b`` when ``a`` imports ``b`` at
  module level (inside a class body or a ``try`` included; under ``if TYPE_CHECKING:`` not).
  The edge goes to the module the statement names: ``from .. import functional`` depends on
  ``ember.nn.functional``, ``from ..x import y`` on ``ember.x``; that importing ``ember.x``
  also runs ``ember/__init__.py`` is not counted (every submodule would then sit in a cycle
  with its package). ``cycles`` returns the strongly connected components of that graph.
- **Imports inside functions only as genuine lazy loads.** An import of an ember module in a
  function (or lambda) must say why on its line: ``# lazy: <reason>`` (an optional package,
  a module that imports this one, a cost paid only on a rare path). ``function_imports``
  lists them, with the reason where there is one.

Command line: ``python tools/import_graph.py [PACKAGE_DIR] [--all]`` prints the cycles, the
counts of function-level imports per module and, with ``--all`` every such import, else only
those without a reason. ``tests/test_structure.py`` asserts the same with allow-lists.
"""
from __future__ import annotations

import ast
import collections
import os
import re
import sys
from dataclasses import dataclass

_LAZY = re.compile(r"#\s*lazy:\s*(\S.*)$")


@dataclass(frozen=True)
class FunctionImport:
    """An import of an ember module inside a function: where, what, and its ``# lazy:`` reason
    (None where the line gives none)."""

    path: str
    line: int
    module: str
    target: str
    reason: str | None

    def __str__(self):
        why = f"  # lazy: {self.reason}" if self.reason else "  (no '# lazy:' reason)"
        return f"{self.path}:{self.line}: {self.module} imports {self.target}{why}"


def modules(root):
    """``{dotted module name: file path}`` of every ``.py`` file under the package ``root``."""
    base = os.path.dirname(os.path.abspath(root))
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, base)[:-3].replace(os.sep, ".")
                found[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return found


def _targets(node, module, is_package, known, package):
    """The ember modules an import statement names (see the module docstring)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            parts = module.split(".") if is_package else module.split(".")[:-1]
            parts = parts[:len(parts) - (node.level - 1)]
            base = ".".join(parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                 for alias in node.names]
    out = []
    for name in names:
        if name == package or name.startswith(package + "."):
            while name not in known and "." in name:  # ``import ember.x.y as z`` of a name
                name = name.rsplit(".", 1)[0]
            if name in known and name not in out:
                out.append(name)
    return out


def _is_type_checking(test):
    return "TYPE_CHECKING" in ast.unparse(test)


def scan(root):
    """``(graph, function_imports)`` of the package ``root``: ``graph`` maps each module to
    the set of ember modules it imports at module level."""
    known = modules(root)
    package = os.path.basename(os.path.normpath(root))
    graph = {name: set() for name in known}
    inner = []
    for module, path in known.items():
        with open(path, encoding="utf-8") as f:
            source = f.read()
        lines = source.splitlines()
        tree = ast.parse(source, path)
        is_package = path.endswith("__init__.py")

        def visit(node, in_function, in_type_checking, module=module, path=path,
                  lines=lines, is_package=is_package):
            for child in ast.iter_child_nodes(node):
                function = in_function or isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                checking = in_type_checking or (isinstance(child, ast.If)
                                                and _is_type_checking(child.test))
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    targets = _targets(child, module, is_package, known, package)
                    if targets and in_function:
                        text = " ".join(lines[child.lineno - 1:child.end_lineno])
                        match = _LAZY.search(text)
                        inner.append(FunctionImport(
                            os.path.relpath(path), child.lineno, module, targets[-1],
                            match.group(1).strip() if match else None))
                    elif targets and not in_type_checking:
                        graph[module].update(t for t in targets if t != module)
                visit(child, function, checking)

        visit(tree, False, False)
    return graph, inner


def cycles(graph):
    """The strongly connected components of more than one module, each a sorted list
    (Tarjan's algorithm, iterative so deep graphs do not hit the recursion limit)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    root = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "ember")
    graph, inner = scan(root)
    found = cycles(graph)
    print(f"{len(graph)} modules; {len(found)} module-level import cycle(s)")
    for component in found:
        print(f"  cycle of {len(component)}: {' '.join(component)}")
    missing = [imp for imp in inner if imp.reason is None]
    print(f"{len(inner)} function-level imports of {os.path.basename(os.path.normpath(root))}"
          f" modules, {len(missing)} without a '# lazy:' reason")
    per_module = collections.Counter(imp.module for imp in inner)
    for module, count in per_module.most_common():
        print(f"  {count:4d} {module}")
    for imp in inner if "--all" in argv else missing:
        print(imp)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
