"""Acceptance tests: the code cells of the three seed documents.

Every ``tests/seeds/<name>.py`` is one code cell of a seed document (see
``tests/seeds/README.md``).  ``tests/seeds/<name>.out`` is what the script
prints (stdout and stderr merged) when run with plain ``python`` under real
PyTorch 2.13.  Two tests per script:

* ``test_seed_under_ember``: ``python -m ember run SCRIPT`` (``import torch``
  resolves to ember) must print the same text.
* ``test_seed_under_pytorch``: the script under real torch must still print
  the same text, which keeps the ``.out`` files honest.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "seeds"
NAMES = sorted(path.stem for path in SEEDS.glob("*.py"))

# Cells that print values drawn by torch.rand / torch.randn without a seed:
# only the layout of their output is compared (see ``layout``).
RANDOM = {
    "s001_c3_neural_net",
    "s001_c4_vjp_rand",
}

TIMEOUT_S = 120

_ADDRESS = re.compile(r"0x[0-9a-f]+")
_TRIGGERED = re.compile(r" \(Triggered internally at [^\n]*\)$", re.MULTILINE)
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e[+-]\d+)?")


def normalise(text: str, name: str) -> str:
    """Applied to both the actual and the expected output of script ``name``.

    * object addresses ``0x7f...`` -> ``0x...``;
    * the path of the script (absolute, or as given on the command line), in
      warning lines and in traceback ``File "..."`` lines -> its basename;
    * PyTorch's C++ suffix `` (Triggered internally at ...)`` removed from
      warning messages.
    """
    text = _ADDRESS.sub("0x...", text)
    script = re.escape(name + ".py")
    text = re.sub(r"[^\s\"']*[/\\]" + script, name + ".py", text)
    return _TRIGGERED.sub("", text)


def layout(text: str) -> str:
    """Layout of an output whose numbers are random.

    Every number token becomes ``N`` and runs of spaces collapse to one.  The
    padding and the line wrapping torch uses when printing a tensor depend on
    the values (a sign column, the element width, scientific notation), so in
    addition the continuation lines of a wrapped tensor are joined to the line
    before and the padding spaces after ``[``/``(`` and before ``,``/``]``/``)``
    are dropped.
    """
    text = _NUMBER.sub("N", text)
    text = re.sub(r"\n[ \t]+(?=[\[N])", " ", text)
    text = re.sub(r" +", " ", text)
    return re.sub(r"(?<=[\[(]) | (?=[,\])])", "", text)


def _run(argv: list[str], pythonpath: str | None) -> str:
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    proc = subprocess.run(
        argv,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=TIMEOUT_S,
        check=False,
    )
    return proc.stdout.decode("utf-8", errors="replace")


def _script(name: str) -> str:
    return f"tests/seeds/{name}.py"


def _check(name: str, actual: str) -> None:
    expected = (SEEDS / f"{name}.out").read_text(encoding="utf-8")
    actual, expected = normalise(actual, name), normalise(expected, name)
    if name in RANDOM:
        actual, expected = layout(actual), layout(expected)
    assert actual == expected


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_seed_under_ember(name: str) -> None:
    actual = _run([sys.executable, "-m", "ember", "run", _script(name)], str(ROOT))
    _check(name, actual)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_seed_under_pytorch(name: str) -> None:
    pytest.importorskip("torch")
    actual = _run([sys.executable, _script(name)], None)
    _check(name, actual)


def test_every_seed_script_has_expected_output() -> None:
    assert NAMES, "no seed scripts found"
    missing = [name for name in NAMES if not (SEEDS / f"{name}.out").is_file()]
    assert missing == []
    assert RANDOM <= set(NAMES)
