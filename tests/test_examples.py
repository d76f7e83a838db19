"""The README's main job: examples/train_digits.py, a PyTorch script, trains on ember.

It must reach >= 97% test accuracy, write its plot and weights, and land within two points
of what the same script reaches under PyTorch (when installed).
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "train_digits.py"

for _name in ("sklearn", "tqdm", "matplotlib"):
    pytest.importorskip(_name)


def _train(runner, out, *flags):
    proc = subprocess.run([*runner, str(SCRIPT), "--out", str(out), *flags], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    accuracy = float(re.search(r"final test accuracy ([\d.]+)%", proc.stdout).group(1))
    return accuracy, proc.stdout


@pytest.mark.parametrize("flags", [(), ("--mlp",)], ids=["cnn", "mlp"])
def test_train_digits_on_ember(tmp_path, flags):
    accuracy, stdout = _train([sys.executable, "-m", "ember", "run"], tmp_path, *flags)
    name = "mlp" if flags else "cnn"
    assert accuracy >= 97.0
    assert (tmp_path / f"digits_{name}.png").stat().st_size > 10_000
    assert (tmp_path / f"digits_{name}.weights").exists()
    assert stdout.rstrip().endswith(f"digits_{name}.weights")
    import ember
    state = ember.load(tmp_path / f"digits_{name}.weights")
    assert all(isinstance(v, ember.Tensor) for v in state.values())
    pytest.importorskip("torch")
    torch_accuracy, _ = _train([sys.executable], tmp_path / "torch", *flags)
    assert abs(accuracy - torch_accuracy) <= 2.0
