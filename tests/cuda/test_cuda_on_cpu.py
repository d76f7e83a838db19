"""``python -m ember run --cuda-on-cpu``: a script written for a GPU runs on the CPU as it is,
to the CPU's results; and ``pin_memory`` where there is no GPU (PyTorch's error)."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ember

ROOT = Path(__file__).resolve().parents[2]


def run(tmp_path, code, *flags):
    (tmp_path / "script.py").write_text(textwrap.dedent(code))
    env = {k: v for k, v in os.environ.items() if k != "EMBER_CUDA_ON_CPU"}
    done = subprocess.run([sys.executable, "-m", "ember", "run", *flags, "script.py"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


GPU_SCRIPT = """
    import os
    import torch
    device = "cuda:1"
    torch.cuda.set_device(device)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 1))
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=0.1, fused=True)
    x = torch.linspace(-1, 1, 32).reshape(8, 4)
    for _ in range(3):
        xb = x.pin_memory().to(device, non_blocking=True)
        loss = model(xb).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    print(torch.device(device), torch.ones(1, device="cuda").device, xb.device,
          torch.zeros(2).cuda().device, torch.cuda.is_available(),
          os.environ.get("EMBER_CUDA_ON_CPU"))
    print(repr(loss.item()))
"""


def test_a_gpu_script_runs_on_the_cpu_to_the_cpus_results(tmp_path):
    on_gpu = run(tmp_path, GPU_SCRIPT, "--cuda-on-cpu")
    assert on_gpu[0] == "cpu cpu cpu cpu False 1"  # (and the processes it starts see it)
    on_cpu = run(tmp_path, GPU_SCRIPT.replace('"cuda:1"', '"cpu"').replace(
        "torch.cuda.set_device(device)", "").replace("x.pin_memory()", "x").replace(
        "torch.cuda.synchronize()", "").replace('device="cuda"', 'device="cpu"').replace(
        ".cuda()", ".cpu()"))
    assert on_gpu[1] == on_cpu[1]


@pytest.mark.skipif(ember.cuda.is_available(), reason="a GPU is present")
def test_without_the_flag_a_gpu_script_fails_as_on_pytorchs_cpu_build(tmp_path):
    (tmp_path / "script.py").write_text("import torch\ntorch.cuda.set_device('cuda:0')\n")
    done = subprocess.run([sys.executable, "-m", "ember", "run", "script.py"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1
    assert done.stderr.endswith(
        "AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'\n")


@pytest.mark.skipif(ember.cuda.is_available(), reason="a GPU is present")
def test_pin_memory_without_an_accelerator_raises_pytorchs_error(torch):
    for lib in (ember, torch):
        x = lib.ones(3)
        assert x.is_pinned() is False
        with pytest.raises(RuntimeError) as info:
            x.pin_memory()
        assert str(info.value) == "Cannot access accelerator device when none is available."


@pytest.mark.skipif(not ember.cuda.is_available(), reason="no CuPy GPU backend")
def test_pin_memory_gives_a_pinned_copy_with_its_gradient():
    x = ember.arange(6.0, requires_grad=True)
    pinned = x.pin_memory()
    assert pinned.is_pinned() and not x.is_pinned() and ember.equal(pinned, x)
    pinned.sum().backward()
    assert x.grad.tolist() == [1.0] * 6
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        x.cuda().pin_memory()
