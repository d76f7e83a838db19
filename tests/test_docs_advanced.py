"""Every ```python block of docs/advanced.md runs, with ``import ember as torch`` in front."""
import pathlib
import re

import pytest

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "advanced.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
# ```python ember: what ember does beyond PyTorch, so not run on PyTorch
EMBER_ONLY = re.findall(r"```python ember\n(.*?)```", DOC.read_text(), flags=re.S)


@pytest.mark.parametrize("code", BLOCKS + EMBER_ONLY,
                         ids=[f"block{i}" for i in range(len(BLOCKS + EMBER_ONLY))])
def test_example_runs(code):
    exec(compile("import ember as torch\n" + code, str(DOC), "exec"), {})


def test_examples_are_found():
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs_on_pytorch_too(torch, code):
    """The examples state PyTorch's behaviour: they hold on PyTorch itself."""
    exec(compile(code, str(DOC), "exec"), {"torch": torch})
