"""Every ```python block of docs/special.md runs, with ``import ember as torch`` in front, and
holds on PyTorch too."""
import pathlib
import re

import pytest

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "special.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs(code):
    exec(compile("import ember as torch\n" + code, str(DOC), "exec"), {})


def test_examples_are_found():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs_on_pytorch_too(torch, code):
    exec(compile(code, str(DOC), "exec"), {"torch": torch})
