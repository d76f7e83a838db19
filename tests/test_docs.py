"""Every ```python block of every docs/*.md runs: on ember (as ``torch``) and on PyTorch.

A block's first line says how it runs:

- ```` ```python ````: on ember and on PyTorch, where it must hold the same (the examples state
  PyTorch's behaviour, so PyTorch itself is the check on them);
- ```` ```python ember ````: on ember only (what ember does beyond PyTorch);
- ```` ```python fragment ````: not run (a piece of ember's source, a shell session...).

Each block runs alone in a fresh namespace whose ``torch`` is the library under test, as
``import ember as torch`` would give; tracebacks name the .md file and its line.
"""
import pathlib
import re

import pytest

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


def _run(block, library):
    path, line, _, code = block
    # blank lines in front, so that a traceback's line number is the line in the .md file
    exec(compile("\n" * (line - 1) + code, str(path), "exec"), {"torch": library})


@pytest.mark.parametrize("block", [b for b, _ in RUN_ON_EMBER], ids=[i for _, i in RUN_ON_EMBER])
def test_example_runs_on_ember(block):
    _run(block, ember)


@pytest.mark.parametrize("block", [b for b, _ in RUN_ON_TORCH], ids=[i for _, i in RUN_ON_TORCH])
def test_example_runs_on_pytorch_too(torch, block):
    _run(block, torch)


def test_every_block_has_a_known_kind():
    assert [(i, b[2]) for b, i in zip(BLOCKS, IDS) if b[2] not in KINDS] == []


def test_no_block_imports_torch_itself():
    """``import torch`` inside a block would bring real PyTorch into the ember run."""
    assert [i for b, i in zip(BLOCKS, IDS)
            if b[2] != "fragment" and re.search(r"^\s*(import|from) torch\b", b[3], re.M)] == []


@pytest.mark.parametrize("stem, at_least", [
    ("advanced", 8), ("special", 3), ("distributions", 3), ("fft", 2), ("optim", 2),
    ("parametrize", 2), ("nn", 3), ("sparse", 1), ("func", 2), ("testing", 1),
])
def test_examples_are_found(stem, at_least):
    """Each doc keeps its examples (a broken fence would silently drop them)."""
    assert sum(1 for b in BLOCKS if b[0].stem == stem and b[2] != "fragment") >= at_least
