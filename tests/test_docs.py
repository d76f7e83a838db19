"""Every ```python block of every docs/*.md runs: on ember (as ``torch``) and on PyTorch.

A block's first line says how it runs:

- ```` ```python ````: on ember and on PyTorch, where it must hold the same (the examples state
  PyTorch's behaviour, so PyTorch itself is the check on them);
- ```` ```python ember ````: on ember only (what ember does beyond PyTorch);
- ```` ```python fragment ````: not run (a piece of ember's source, a shell session...).

Each block runs alone in a fresh namespace whose ``torch`` is the library under test, as
``import ember as torch`` would give, and where ``import torch.x.y`` (PyTorch's idiom for a
submodule that ``import torch`` leaves out, such as ``torch.nn.utils.prune``) imports the library
under test's; tracebacks name the .md file and its line.
"""
import ast
import builtins
import pathlib
import re

import pytest
from _pytest.assertion.rewrite import rewrite_asserts

import ember

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", flags=re.S | re.M)
KINDS = ("", "ember", "fragment")


def _blocks():
    """(path, first line of the code, kind, code) for every ```python block in docs/."""
    found = []
    for path in sorted(DOCS.glob("*.md")):
        text = path.read_text()
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start(2)) + 1
            found.append((path, line, match.group(1).strip(), match.group(2)))
    return found


BLOCKS = _blocks()
IDS = [f"{path.stem}:{line}" for path, line, _, _ in BLOCKS]
RUN_ON_EMBER = [(b, i) for b, i in zip(BLOCKS, IDS) if b[2] in ("", "ember")]
RUN_ON_TORCH = [(b, i) for b, i in zip(BLOCKS, IDS) if b[2] == ""]


def _namespace(library):
    """Globals for a block: ``torch`` is ``library``, and so is ``torch`` in an import."""
    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name.split(".")[0] == "torch":
            name = library.__name__ + name[len("torch"):]
        return builtins.__import__(name, globals, locals, fromlist, level)
    return {"torch": library, "__builtins__": {**vars(builtins), "__import__": import_}}


def _run(block, library):
    path, line, _, code = block
    tree = ast.parse(code, str(path))
    rewrite_asserts(tree, code.encode(), str(path))  # a failing assert shows its values
    ast.increment_lineno(tree, line - 1)  # a traceback's line is the line in the .md file
    exec(compile(tree, str(path), "exec"), _namespace(library))


@pytest.mark.parametrize("block", [b for b, _ in RUN_ON_EMBER], ids=[i for _, i in RUN_ON_EMBER])
def test_example_runs_on_ember(block):
    _run(block, ember)


@pytest.mark.parametrize("block", [b for b, _ in RUN_ON_TORCH], ids=[i for _, i in RUN_ON_TORCH])
def test_example_runs_on_pytorch_too(torch, block):
    threads = torch.get_num_threads()
    # the examples are small: PyTorch's thread pool only adds waiting on a shared machine
    # (docs/func.md's ensemble: 45 s with the default threads on 2 busy cores, 1.2 s with one)
    torch.set_num_threads(1)
    try:
        _run(block, torch)
    finally:
        torch.set_num_threads(threads)


def test_every_block_has_a_known_kind():
    assert [(i, b[2]) for b, i in zip(BLOCKS, IDS) if b[2] not in KINDS] == []


def test_an_import_of_torch_in_a_block_gets_the_library_under_test():
    namespace = _namespace(ember)
    exec("import torch.nn.utils.prune as prune\nfrom torch.nn import functional as F\n"
         "import torch", namespace)
    assert namespace["prune"].__name__ == "ember.nn.utils.prune"
    assert namespace["F"] is ember.nn.functional and namespace["torch"] is ember


@pytest.mark.parametrize("stem, at_least", [
    ("advanced", 8), ("special", 3), ("distributions", 3), ("fft", 2), ("optim", 2),
    ("parametrize", 2), ("nn", 3), ("sparse", 1), ("func", 2), ("testing", 1), ("compile", 4),
])
def test_examples_are_found(stem, at_least):
    """Each doc keeps its examples (a broken fence would silently drop them)."""
    assert sum(1 for b in BLOCKS if b[0].stem == stem and b[2] != "fragment") >= at_least
