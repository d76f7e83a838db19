"""``ember.distributed`` on MPI: 2 and 4 ranks on this machine run ``worker.py``'s cases
(every collective against NumPy for every dtype and op, point to point, groups, PyTorch's
errors, a collective that never completes, DistributedDataParallel against one process on
the whole batch); single-process behaviour without a group.

Skips cleanly where MPI is not installed (``pip install 'ember[distributed]'``).
"""
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ember

pytest.importorskip("mpi4py")

ROOT = Path(__file__).resolve().parents[2]
MPIEXEC = shutil.which("mpiexec", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                        os.environ.get("PATH", "")]))
if MPIEXEC is None:
    pytest.skip("mpi4py is installed but no mpiexec is on the PATH", allow_module_level=True)


def ranks(n, *args, timeout=120, device="cpu"):
    """Run ``worker.py`` on ``n`` ranks (their tensors on ``device``); returns its output,
    after asserting every rank exited 0."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WORKER_DEVICE": device}
    run = subprocess.run([MPIEXEC, "-n", str(n), sys.executable, "-m",
                          "tests.distributed.worker", *map(str, args)],
                         capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("case", ["collectives", "point_to_point", "groups", "errors",
                                  "objects"])
def test_every_rank_gets_what_numpy_computes(case, n):
    out = ranks(n, case)
    name = case.replace("_", " ")
    # (the ranks' lines share one pipe: a line's text and its newline may be apart)
    assert sorted(re.findall(r"rank \d+: [a-z ]+ ok", out)) == \
        [f"rank {r}: {name} ok" for r in range(n)], out


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_ddp_training_ends_where_one_process_on_the_whole_batch_ends(kind, n):
    out = ranks(n, "ddp", "-", kind, 50)
    assert sorted(re.findall(r"rank \d+: ddp [a-z]+ ok", out)) == \
        [f"rank {r}: ddp {kind} ok" for r in range(n)], out


@pytest.mark.slow
def test_ddp_no_sync_unused_parameters_and_errors():
    out = ranks(2, "ddp_features")
    assert sorted(re.findall(r"rank \d+: ddp features ok", out)) == \
        [f"rank {r}: ddp features ok" for r in range(2)], out


@pytest.mark.slow
def test_a_collective_a_rank_never_joins_raises_within_the_timeout():
    out = ranks(2, "timeout", 1.5)
    assert out.startswith("rank 0: timeout ok after 1."), out


@pytest.mark.slow
@pytest.mark.skipif(not ember.cuda.is_available(), reason="no CuPy GPU backend")
@pytest.mark.parametrize("case", [("collectives",), ("ddp", "-", "mlp", 10)])
def test_cuda_tensors_travel_through_the_host_to_the_same_results(case):
    out = ranks(2, *case, device="cuda")
    assert len(re.findall(r"rank \d+: [a-z ]+ ok", out)) == 2, out


def single(code):
    """Run ``code`` in a plain Python process (no mpiexec): one rank."""
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=60, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_without_a_process_group_the_calls_raise_pytorchs_error():
    out = single("""
        import sys
        import ember as torch
        import ember.distributed as dist
        print(dist.is_available(), dist.is_initialized(), "mpi4py" in sys.modules)
        for call in (dist.get_rank, dist.get_world_size, dist.barrier,
                     lambda: dist.all_reduce(torch.ones(2))):
            try:
                call()
            except ValueError as exc:
                print(exc)
    """)
    assert out.splitlines() == ["True False False"] + [
        "Default process group has not been initialized, please make sure to call "
        "init_process_group."] * 4


def test_one_process_is_a_group_of_one_and_a_size_mpi_did_not_start_is_refused():
    out = single("""
        import ember as torch
        import ember.distributed as dist
        try:
            dist.init_process_group("gloo", world_size=2, rank=0)
        except RuntimeError as exc:
            print(str(exc).split(":")[0])
        dist.init_process_group("gloo")
        print(dist.get_rank(), dist.get_world_size(), dist.get_backend(), dist.is_initialized())
        t = torch.tensor([1.0, 2.0])
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        print(t.tolist())
        dist.destroy_process_group()
        print(dist.is_initialized())
    """)
    assert out.splitlines() == [
        "ember's process groups run on MPI, which started 1 process(es) (this one rank 0), "
        "but world_size=2, rank=0 were asked for", "0 1 gloo True", "[1.0, 2.0]", "False"]


def test_the_default_backend_for_a_device_is_pytorchs(torch):
    import ember.distributed as dist
    for device in ("cpu", "cuda", "cuda:1"):
        assert dist.get_default_backend_for_device(device) == \
            torch.distributed.get_default_backend_for_device(device)
    with pytest.raises(ValueError, match="Default backend not registered for device : meta"):
        dist.get_default_backend_for_device("meta")
    with pytest.raises(ValueError, match="Default backend not registered for device : meta"):
        torch.distributed.get_default_backend_for_device("meta")
