"""How much of PyTorch 2.13's public API ember has, namespace by namespace, plain and weighted
by how real PyTorch programs use it.

    python tools/api_coverage.py               # the table, as text
    python tools/api_coverage.py --markdown    # the table, as Markdown (README, docs/gaps.md)
    python tools/api_coverage.py --missing     # the names real code uses that ember lacks
    python tools/api_coverage.py --gaps > docs/gaps.md    # the same, grouped by reason
    python tools/api_coverage.py --rebuild-usage DIR...   # recount the usage corpus

Needs PyTorch (the spec) importable beside ember.

**Public names.** For each PyTorch namespace in ``NAMESPACES``, its public names are
PyTorch's names without a leading underscore: the module's ``__all__`` where it defines one,
otherwise ``dir(module)`` less what the module merely imports: an object counts only when its
``__module__`` is the namespace or below it (``torch.nn.modules.linear.Linear`` for
``torch.nn``), or when it is a C kernel or class bound there (``torch.nn.functional.conv2d``,
``torch.linalg.LinAlgError``), so
``torch.nn.functional.Tensor`` and ``...handle_torch_function`` do not. From either list are
dropped:

- modules (``torch.nn`` is a namespace of its own, not a name of ``torch``);
- typing constructs (``Optional``, ``TypeVar``s, aliases such as ``BroadcastingList2``);
- plain Python data but numbers (dicts, strings, booleans, ``None``, lists): ``torch.nn.
  functional``'s ``reproducibility_notes`` and the like are documentation, not API, while
  ``torch.pi`` is.

For ``Tensor`` the names are ``dir(torch.Tensor)`` without a leading underscore (methods and
properties; the operators' ``__dunder__`` methods are left out by the same rule).

**ember's counterpart.** ``torch.X`` -> ``ember.X``; ``torch.Tensor`` -> ``ember.Tensor``. A
name counts as present when ``hasattr`` finds it there; a counterpart module that does not
import counts as every one of its names missing.

**Usage weights** (``api_usage.json``, beside this file) come from a corpus of real PyTorch
programs, read with ``ast`` (never run, and never stored here: only the counts, with each
source repository and commit named). To recount, clone each repository ``api_usage.json``
names at its commit into directories ``DIR...`` and run ``--rebuild-usage DIR...``. A
*program* is one repository, or one directory of it where ``PROGRAMS`` divides it
(pytorch/examples' examples, the tutorials' lessons, labml's paper folders). In each
program's ``.py`` files and notebook code cells:

- imports bind names to PyTorch paths (``import torch.nn.functional as F``, ``from torch
  import nn, optim``, ``from torch.optim.lr_scheduler import StepLR``), and each attribute
  chain rooted at such a name (``F.relu``, ``nn.init.xavier_uniform_``, ``torch.float32``),
  each imported object's name, counts one use of the name it resolves to: the component after
  the longest prefix that is a PyTorch module (``torch.nn.functional`` + ``relu``);
- ``x.foo(...)`` on any other receiver (but a chain rooted at a module imported from elsewhere,
  ``np.linalg.lstsq``) counts one use of ``Tensor.foo`` when ``torch.Tensor``
  has a method ``foo``; ``x.foo`` read without a call counts when ``foo`` is a Tensor property
  (``shape``, ``grad``, ``T``). Receivers that are literals (``"a b".split()``) are skipped, and
  so are the few names that the corpus uses only on other objects (``NOT_TENSORS_IN_CORPUS``:
  ``d.values()``, PIL's ``image.resize(...)``).

A name's weight is the number of programs that use it (a program that calls ``F.relu`` fifty
times counts once, so one large file cannot dominate). The table reports, per namespace:
every public name covered (unweighted); the distinct names real code uses that ember has; and
the same weighted by programs. Names real code uses that PyTorch has but leaves out of its
``__all__`` (``torch.set_grad_enabled``) count among the used names.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import json
import subprocess
import sys
import types
import typing
from collections import defaultdict
from pathlib import Path

USAGE_FILE = Path(__file__).with_name("api_usage.json")

# (PyTorch namespace, ember's counterpart). "torch.Tensor" stands for the class's attributes.
NAMESPACES = (
    ("torch", "ember"),
    ("torch.Tensor", "ember.Tensor"),
    ("torch.nn", "ember.nn"),
    ("torch.nn.functional", "ember.nn.functional"),
    ("torch.optim", "ember.optim"),
    ("torch.optim.lr_scheduler", "ember.optim.lr_scheduler"),
    ("torch.distributions", "ember.distributions"),
    ("torch.fft", "ember.fft"),
    ("torch.special", "ember.special"),
    ("torch.linalg", "ember.linalg"),
    ("torch.utils.data", "ember.utils.data"),
    ("torch.func", "ember.func"),
    ("torch.autograd", "ember.autograd"),
)

# Tensor attribute names that the corpus uses on other objects, never on tensors (found by
# reading every hit): counting them would credit the sparse tensor's ``values`` with each
# ``d.values()``. Other shared names (``add``, ``sort``, ``split``) stay counted: real code calls
# them on tensors too.
NOT_TENSORS_IN_CORPUS = {
    "values": "dict.values()",
    "index": "list.index()",
    "resize": "PIL's Image.resize()",
    "name": "torch.fx Node.name, rpc WorkerInfo.name, labml trainers' names",
}


# --------------------------------------------------------------------------- public names


def _import(path):
    try:
        return importlib.import_module(path)
    except Exception:  # absent, or a path PyTorch's import machinery refuses (torch.classes.x)
        return None


def _resolve(path):
    """The object at a dotted ``path`` (``torch.Tensor``), or None."""
    head, _, tail = path.rpartition(".")
    if tail == "Tensor" and head in ("torch", "ember"):
        module = _import(head)
        return None if module is None else module.Tensor
    return _import(path)


def _is_typing(obj):
    module = getattr(type(obj), "__module__", "") or ""
    return module in ("typing", "typing_extensions") or isinstance(obj, typing.TypeVar)


def _is_data(obj):
    """Documentation and flags (dicts, strings, booleans, ``None``, containers); numbers stay
    (``torch.pi``, ``torch.inf`` are API)."""
    return obj is None or isinstance(obj, (dict, str, bytes, bool, list, tuple, set,
                                           frozenset))


def _public(module_path, name, obj, from_all):
    if name.startswith("_") or inspect.ismodule(obj) or _is_typing(obj) or _is_data(obj):
        return False
    if from_all:
        return True
    # Without ``__all__``, a name is the namespace's own when it was defined there (or in its
    # private submodules: ``torch.nn.modules.linear``) or is a C kernel bound there
    # (``F.conv2d``, ``linalg.inv``); what it imports from elsewhere (``F.Tensor``,
    # ``F.handle_torch_function``, ``Callable``) is not.
    defined_in = getattr(obj, "__module__", None) or ""
    return (defined_in.startswith((module_path, "torch._C"))
            or isinstance(obj, types.BuiltinFunctionType))


def public_names(torch_path):
    """PyTorch's public names in ``torch_path`` (see the module docstring)."""
    ns = _resolve(torch_path)
    if torch_path == "torch.Tensor":
        return sorted(n for n in dir(ns) if not n.startswith("_"))
    names = getattr(ns, "__all__", None)
    from_all = names is not None
    names = names if from_all else dir(ns)
    out = set()
    for name in names:
        try:
            obj = getattr(ns, name)
        except AttributeError:
            continue
        if _public(torch_path, name, obj, from_all):
            out.add(name)
    return sorted(out)


def exists_in_torch(torch_path, name):
    """Whether real code's ``torch_path.name`` is a PyTorch name (not a submodule)."""
    ns = _resolve(torch_path)
    obj = getattr(ns, name, None) if ns is not None else None
    if obj is None and not hasattr(ns, name):
        return False
    return not inspect.ismodule(obj)


# ember modules that import only where an optional package is installed, as PyTorch's do
# (``torch.utils.tensorboard`` needs ``tensorboard``): without the package, their names are
# counted as ember's, since PyTorch lacks them just the same there.
OPTIONAL_PACKAGES = {"ember.utils.tensorboard": "tensorboard"}


def ember_has(ember_path, name):
    ns = _resolve(ember_path)
    if ns is None and ember_path in OPTIONAL_PACKAGES:
        return importlib.util.find_spec(OPTIONAL_PACKAGES[ember_path]) is None
    return ns is not None and hasattr(ns, name)


# --------------------------------------------------------------------------- usage corpus


def load_usage(path=USAGE_FILE):
    with open(path) as f:
        return json.load(f)


class _Counter(ast.NodeVisitor):
    """Counts, in one file, the PyTorch paths and Tensor attributes it uses."""

    def __init__(self, tensor_methods, tensor_properties, modules):
        self.methods = tensor_methods
        self.properties = tensor_properties
        self.modules = modules  # known PyTorch module paths (resolution cache)
        self.alias = {}  # name bound in this file -> dotted PyTorch path
        self.foreign = set()  # names bound to other modules by ``import``
        self.uses = defaultdict(int)  # (namespace, name) -> occurrences

    # -- imports ------------------------------------------------------------------------------
    def visit_Import(self, node):
        for a in node.names:
            if a.name == "torch" or a.name.startswith("torch."):
                if a.asname:
                    self.alias[a.asname] = a.name
                else:
                    self.alias["torch"] = "torch"
            else:  # np.linalg.lstsq(...) is no Tensor method
                self.foreign.add(a.asname or a.name.partition(".")[0])

    def visit_ImportFrom(self, node):
        mod = node.module or ""
        if node.level or not (mod == "torch" or mod.startswith("torch.")):
            return
        for a in node.names:
            if a.name == "*":
                continue
            path = f"{mod}.{a.name}"
            self.alias[a.asname or a.name] = path
            self._record(path)

    # -- uses ---------------------------------------------------------------------------------
    def _chain(self, node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.alias:
            return ".".join([self.alias[node.id]] + parts[::-1])
        return None

    def _is_module(self, path):
        if path not in self.modules:
            self.modules[path] = _import(path) is not None if path.startswith("torch") else False
        return self.modules[path]

    def _record(self, path):
        parts = path.split(".")
        for k in range(len(parts) - 1, 0, -1):
            head = ".".join(parts[:k])
            if self._is_module(head):
                name = parts[k]
                if name.startswith("_"):
                    return  # private: no public API
                if head == "torch" and name == "Tensor" and len(parts) > k + 1:
                    head, name = "torch.Tensor", parts[k + 1]
                if not self._is_module(f"{head}.{name}"):
                    self.uses[(head, name)] += 1
                return

    def visit_Name(self, node):
        if node.id in self.alias and isinstance(node.ctx, ast.Load):
            self._record(self.alias[node.id])

    def visit_Attribute(self, node):
        path = self._chain(node)
        if path is not None:
            self._record(path)
            return  # the chain's own prefixes are not uses of their own
        self._tensor_attr(node, called=False)
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Attribute) and self._chain(func) is None:
            self._tensor_attr(func, called=True)
            self.generic_visit(func.value)
        else:
            self.visit(func)
        for arg in node.args:
            self.visit(arg)
        for kw in node.keywords:
            self.visit(kw.value)

    def _tensor_attr(self, node, called):
        if isinstance(node.value, (ast.Constant, ast.JoinedStr, ast.List, ast.Dict, ast.Set,
                                   ast.Tuple, ast.ListComp, ast.DictComp, ast.SetComp)):
            return
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.foreign:
            return
        name = node.attr
        if name in NOT_TENSORS_IN_CORPUS:
            return
        if (called and name in self.methods) or (not called and name in self.properties):
            self.uses[("torch.Tensor", name)] += 1


def _python_sources(repo, root):
    """(path, source) of each .py file and notebook under ``root`` as committed at the
    repository's HEAD (files added or edited in the working tree since are not read)."""
    prefix = root.relative_to(repo).as_posix()
    listed = _git(repo, "ls-tree", "-r", "--name-only", "HEAD", "--", prefix or ".")
    for name in sorted(listed.splitlines()):
        if not name.endswith((".py", ".ipynb")):
            continue
        text = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{name}"],
                              capture_output=True, check=True).stdout.decode(errors="replace")
        if name.endswith(".py"):
            yield name, text
            continue
        cells = json.loads(text).get("cells", [])
        code = ["".join(c.get("source", [])) for c in cells if c.get("cell_type") == "code"]
        # IPython magics and shell lines are not Python
        lines = [ln for block in code for ln in block.splitlines()
                 if not ln.lstrip().startswith(("%", "!"))]
        yield name, "\n".join(lines)


# How a repository divides into programs (glob patterns of program directories, relative to
# the repository); a repository not named here is one program.
PROGRAMS = {
    "pytorch/examples": ("*", "distributed/*", "legacy/*"),
    "yunjey/pytorch-tutorial": ("tutorials/*/*",),
    "rasbt/LLMs-from-scratch": ("ch*", "appendix-*"),
    "karpathy/nn-zero-to-hero": ("lectures/*",),
    "labmlai/annotated_deep_learning_paper_implementations": ("labml_nn/*",),
}


def _programs(root, repository):
    """(name, directory) of each program of one repository: see ``PROGRAMS``. A directory
    that holds other programs is none itself (``distributed``: its subdirectories are)."""
    patterns = PROGRAMS.get(repository)
    if patterns is None:
        return [(root.name, root)]
    found = {d for pattern in patterns for d in root.glob(pattern)
             if d.is_dir() and not d.name.startswith(".")
             and any(p.suffix in (".py", ".ipynb") for p in d.rglob("*"))}
    found = [d for d in found if not any(d in other.parents for other in found)]
    return sorted((str(d.relative_to(root)), d) for d in found)


def _repository(url):
    """``owner/name`` of a clone's origin: a GitHub URL, or a local mirror
    ``.../owner+name/repo``."""
    url = url.rstrip("/").removesuffix(".git")
    if "github.com" in url:
        return "/".join(url.replace(":", "/").split("/")[-2:])
    return url.removesuffix("/repo").rsplit("/", 1)[-1].replace("+", "/")


def _git(root, *args):
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def rebuild_usage(*corpus_roots):
    """Count each git repository directly under the ``corpus_roots``; return the record."""
    import torch

    methods = {n for n in dir(torch.Tensor)
               if not n.startswith("_") and callable(getattr(torch.Tensor, n, None))}
    properties = {n for n in dir(torch.Tensor) if not n.startswith("_")} - methods
    modules = {}
    sources, weights = [], defaultdict(lambda: defaultdict(lambda: [0, 0]))
    repos = sorted((r for c in corpus_roots for r in Path(c).iterdir() if (r / ".git").exists()),
                   key=lambda r: r.name)  # only what can be named by repository and commit
    for repo in repos:
        repository = _repository(_git(repo, "remote", "get-url", "origin"))
        programs = _programs(repo, repository)
        sources.append({"repository": f"https://github.com/{repository}",
                        "commit": _git(repo, "rev-parse", "HEAD"),
                        "programs": [name for name, _ in programs]})
        for _, root in programs:
            used = defaultdict(int)
            for _, source in _python_sources(repo, root):
                try:
                    tree = ast.parse(source)
                except SyntaxError:
                    continue
                counter = _Counter(methods, properties, modules)
                counter.visit(tree)
                for key, n in counter.uses.items():
                    used[key] += n
            for (ns, attr), n in used.items():
                weights[ns][attr][0] += 1
                weights[ns][attr][1] += n
    return {
        "about": "How many programs of the corpus use each PyTorch name "
                 "(tools/api_coverage.py says how they were counted): "
                 "namespace -> name -> [programs, occurrences].",
        "sources": sources,
        "weights": {ns: dict(sorted((k, v) for k, v in names.items()))
                    for ns, names in sorted(weights.items())},
    }


# --------------------------------------------------------------------------- reasons for gaps

I20 = "Issue 20: distributions, fft, special functions, parametrizations"
I21 = "Issue 21: compiled mode"
I22 = "Issue 22: distributed, on MPI"
DELIBERATE = "Deliberate gaps"
NOT_YET = "Not done yet"
# Why ember lacks a name real code uses: (prefix or exact dotted name, group, detail); the
# first match wins. ``docs/gaps.md`` is generated from these (``--gaps``), and the test checks
# that it lists every used name ember lacks.
GAP_REASONS = (
    ("torch.distributions.", I20, ""),
    ("torch.fft.", I20, ""),
    ("torch.special.", I20, ""),
    ("torch.nn.utils.parametrizations.", I20, ""),
    ("torch.compile", I21, ""),
    ("torch._dynamo.", I21, ""),
    ("torch.fx.", I21, "ember's compiled mode records array calls, not an FX graph"),
    ("torch.distributed.", I22, ""),
    ("torch.nn.parallel.DistributedDataParallel", I22, ""),
    ("torch.utils.data.distributed.", I22, ""),
    ("torch.futures.", I22, "futures serve torch.distributed.rpc"),
    ("torch.sparse_coo_tensor", DELIBERATE, "no sparse tensors: NumPy has no sparse arrays "
                                            "and SciPy is not a dependency"),
    ("torch.spmm", DELIBERATE, "no sparse tensors"),
    ("torch.Tensor.to_sparse", DELIBERATE, "no sparse tensors"),
    ("torch.classes.", DELIBERATE, "no C++ extension classes: ember has no C++ ops"),
    ("torch.ops.", DELIBERATE, "no C++ operator registry"),
    ("torch.Tensor.resize_", NOT_YET, "resizing a tensor's storage in place"),
    ("torch.cuda.nccl.", I22, "NCCL is a multi-GPU communication library"),
    ("torch.nn.attention.", NOT_YET, "flex attention"),
    ("torch.profiler.", NOT_YET, "ember has no profiler (Python's cProfile profiles it)"),
    ("torch.autograd.profiler.", NOT_YET, "ember has no profiler"),
    ("torch.testing.", NOT_YET, "torch.testing"),
)


def gap_reason(path):
    """``(group, detail)`` of a used name ember lacks (see ``GAP_REASONS``)."""
    for pattern, group, detail in GAP_REASONS:
        if path == pattern or (pattern.endswith(".") and path.startswith(pattern)) or \
                path.startswith(pattern + "."):
            return group, detail
    return NOT_YET, ""


def missing_used(usage=None, rows=None):
    """Every name real code uses that ember lacks: (dotted path, programs)."""
    rows = coverage(usage) if rows is None else rows
    out = [(f"{row['namespace']}.{name}", w) for row in rows for name, w in row["missing_used"]]
    out += [(path, w) for path, w, have in other_namespaces(usage) if not have]
    return out


def gaps_markdown(rows):
    """``docs/gaps.md``: the table, then each used name ember lacks, grouped by reason."""
    usage = load_usage()
    n_programs = sum(len(s["programs"]) for s in usage["sources"])
    groups = defaultdict(list)
    for path, w in missing_used(usage, rows):
        group, detail = gap_reason(path)
        groups[group].append((path, w, detail))
    lines = [
        "# What ember lacks that real PyTorch code uses",
        "",
        "Generated by `python tools/api_coverage.py --gaps > docs/gaps.md`; "
        "`tests/test_api_coverage.py` checks that this file names every such gap. "
        f"The corpus is {n_programs} programs from {len(usage['sources'])} public "
        "repositories (listed with their commits in `tools/api_usage.json`); a name's weight "
        "is the number of programs using it. `tools/api_coverage.py` says how names and uses "
        "are counted.",
        "",
        table(rows, markdown=True),
        "",
        "The unweighted columns count every public name, and most of PyTorch's public names "
        "are not in real programs: whole families that ember leaves out on purpose "
        "(quantization: `quantize_per_tensor`, `q_scale`, `qint8`...; sparse layouts: "
        "`sparse_csr_tensor`, `Tensor.to_sparse_csr`...; named tensors; the C++ back ends' "
        "entry points: `cudnn_*`, `miopen_*`, `mkldnn_*`, `fbgemm_*`; TorchScript's types and "
        "`sym_*` symbolic shapes, which belong to compiled mode), the `*_copy` variants of "
        "views, and the legacy storage classes. The weighted column is the one that says "
        "whether programs run.",
        "",
        "Below, every name the corpus uses that ember lacks, grouped by why; the number is how "
        "many programs use it.",
    ]
    order = (I20, I21, I22, DELIBERATE, NOT_YET)
    for group in sorted(groups, key=lambda g: order.index(g) if g in order else len(order)):
        lines += ["", f"## {group}", ""]
        for path, w, detail in sorted(groups[group], key=lambda t: (-t[1], t[0])):
            lines.append(f"- `{path}` ({w})" + (f": {detail}" if detail else ""))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the report


def coverage(usage=None):
    """Per namespace: a dict of counts and the used names ember lacks."""
    usage = load_usage() if usage is None else usage
    rows = []
    for torch_path, ember_path in NAMESPACES:
        names = public_names(torch_path)
        have = [n for n in names if ember_has(ember_path, n)]
        used = {n: w[0] for n, w in usage["weights"].get(torch_path, {}).items()
                if exists_in_torch(torch_path, n)}
        used_have = {n: w for n, w in used.items() if ember_has(ember_path, n)}
        rows.append({
            "namespace": torch_path,
            "public": len(names),
            "public_covered": len(have),
            "used": len(used),
            "used_covered": len(used_have),
            "weight": sum(used.values()),
            "weight_covered": sum(used_have.values()),
            "missing_used": sorted(((n, w) for n, w in used.items() if n not in used_have),
                                   key=lambda nw: (-nw[1], nw[0])),
        })
    return rows


def _pct(part, whole):
    return 100.0 * part / whole if whole else 100.0


def percentages(row):
    return (_pct(row["public_covered"], row["public"]), _pct(row["used_covered"], row["used"]),
            _pct(row["weight_covered"], row["weight"]))


def total(rows):
    keys = ("public", "public_covered", "used", "used_covered", "weight", "weight_covered")
    return {"namespace": "all", **{k: sum(r[k] for r in rows) for k in keys}}


def other_namespaces(usage=None):
    """Used names outside ``NAMESPACES`` (``torch.cuda.is_available``): (path, programs,
    whether ember has it)."""
    usage = load_usage() if usage is None else usage
    ours = {t for t, _ in NAMESPACES}
    out = []
    for ns, names in usage["weights"].items():
        if ns in ours:
            continue
        ember_ns = "ember" + ns[len("torch"):]
        for name, (programs, _) in names.items():
            out.append((f"{ns}.{name}", programs, ember_has(ember_ns, name)))
    return sorted(out, key=lambda t: (-t[1], t[0]))


def table(rows, markdown=False):
    head = ("namespace", "public names", "covered", "used in real code", "covered",
            "weighted by programs")
    lines = []
    body = []
    for row in rows + [total(rows)]:
        p, u, w = percentages(row)
        body.append((f"`{row['namespace']}`" if markdown else row["namespace"],
                     str(row["public"]), f"{row['public_covered']} ({p:.0f}%)",
                     str(row["used"]), f"{row['used_covered']} ({u:.0f}%)", f"{w:.1f}%"))
    if markdown:
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
        lines += ["| " + " | ".join(r) + " |" for r in body]
    else:
        widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
        for r in [head] + body:
            lines.append("  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i])
                                   for i, c in enumerate(r)))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print Markdown")
    parser.add_argument("--missing", action="store_true",
                        help="list the names real code uses that ember lacks")
    parser.add_argument("--gaps", action="store_true",
                        help="print docs/gaps.md (the used names ember lacks, with reasons)")
    parser.add_argument("--rebuild-usage", metavar="CORPUS", nargs="+",
                        help="recount the usage weights from the git repositories in the "
                             "CORPUS directories")
    args = parser.parse_args(argv)
    if args.rebuild_usage:
        record = rebuild_usage(*args.rebuild_usage)
        USAGE_FILE.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n")
        print(f"wrote {USAGE_FILE}")
        return
    rows = coverage()
    if args.gaps:
        print(gaps_markdown(rows), end="")
        return
    print(table(rows, markdown=args.markdown))
    if args.missing:
        print()
        for path, w in missing_used(rows=rows):
            group, detail = gap_reason(path)
            print(f"{w:3d}  {path}  ({group.split(':')[0]}{': ' + detail if detail else ''})")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
