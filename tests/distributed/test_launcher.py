"""``python -m ember.distributed.run`` (torchrun on MPI): ranks with torchrun's environment and
``import torch`` as ember; torchrun's entry point under ``python -m ember run``; a failing
rank stops the job at once with its error, never a hang."""
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import os, sys
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
assert (int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])) \\
    == (rank, rank, world)
torch.manual_seed(rank)  # (DDP starts every replica from rank 0's values)
model = DDP(torch.nn.Linear(4, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.arange(32.0).reshape(8, 4) / 32
for _ in range(3):
    opt.zero_grad()
    model(x[rank::world]).pow(2).mean().backward()
    opt.step()
w = model.module.weight.detach()
gathered = [torch.zeros_like(w) for _ in range(world)]
dist.all_gather(gathered, w)
print(f"rank {rank} of {world}: {torch.__name__}, args {sys.argv[1:]}, "
      f"replicas equal {all(torch.equal(g, w) for g in gathered)}")
dist.destroy_process_group()
"""


def launch(tmp_path, command, script=SCRIPT, timeout=120):
    (tmp_path / "train.py").write_text(textwrap.dedent(script))
    return subprocess.run([sys.executable, *command], capture_output=True, text=True,
                          timeout=timeout, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def lines(out):
    """The ranks' reports (their lines share one pipe: a line's text and its newline may be
    apart)."""
    return sorted(re.findall(r"rank \d+ of \d+: [^\n]*?replicas equal (?:True|False)", out))


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["--nproc-per-node", "--nproc_per_node"])
def test_the_launcher_starts_ranks_with_torchruns_environment(tmp_path, flag):
    run = launch(tmp_path, ["-m", "ember.distributed.run", flag, "2", "train.py", "--lr", "3"])
    assert run.returncode == 0, run.stdout + run.stderr
    assert lines(run.stdout) == [f"rank {r} of 2: ember, args ['--lr', '3'], replicas equal True"
                                 for r in range(2)]


@pytest.mark.slow
def test_torchruns_entry_point_under_ember_run_is_the_launcher(tmp_path):
    """The ``torchrun`` console script imports ``torch.distributed.run``'s ``main``."""
    (tmp_path / "torchrun").write_text("import sys\nfrom torch.distributed.run import main\n"
                                       "sys.exit(main())\n")
    run = launch(tmp_path, ["-m", "ember", "run", "torchrun", "--nproc-per-node=2", "train.py"])
    assert run.returncode == 0, run.stdout + run.stderr
    assert lines(run.stdout) == [f"rank {r} of 2: ember, args [], replicas equal True"
                                 for r in range(2)]


@pytest.mark.slow
def test_a_script_written_for_gpus_runs_on_cpu_ranks_with_cuda_on_cpu(tmp_path):
    """nanoGPT's DDP branch: ``cuda:{LOCAL_RANK}``, ``set_device``, ``device_ids``; and
    pytorch/examples' ``backend="nccl"``."""
    script = SCRIPT.replace('backend="gloo"', 'backend="nccl"').replace(
        "model = DDP(torch.nn.Linear(4, 2))",
        "device = f'cuda:{os.environ[\"LOCAL_RANK\"]}'\n"
        "torch.cuda.set_device(device)\n"
        "model = DDP(torch.nn.Linear(4, 2).to(device), device_ids=[rank])")
    run = launch(tmp_path, ["-m", "ember.distributed.run", "--cuda-on-cpu", "--nproc-per-node",
                            "2", "train.py"], script=script)
    assert run.returncode == 0, run.stdout + run.stderr
    assert lines(run.stdout) == [f"rank {r} of 2: ember, args [], replicas equal True"
                                 for r in range(2)]


FAULT = """
    import datetime, os, signal
    import torch, torch.distributed as dist
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    if dist.get_rank() == 1:
        {fault}
    dist.all_reduce(torch.ones(2))
    print("rank 0 went on")
"""


def survivors_say(stderr, dead, n):
    """Whether every other rank raised the error naming rank ``dead`` (with any other rank
    that had exited by then), then ended."""
    return all(re.search(
        rf"ember.distributed.DistBackendError: (rank \d+ \(process \d+\), )*rank {dead} "
        rf"\(process \d+\)"
        rf"(, rank \d+ \(process \d+\))* ha(s|ve) exited: the job stops \(rank {r} was "
        rf"interrupted by the launcher\)\n\[rank {r}\] DistBackendError: this rank stops, and "
        "the job with it\n", stderr) for r in range(n) if r != dead)


@pytest.mark.slow
def test_a_rank_that_raises_stops_the_job_and_the_others_say_so(tmp_path):
    start = time.monotonic()
    run = launch(tmp_path, ["-m", "ember.distributed.run", "--nproc-per-node", "2", "train.py"],
                 script=FAULT.format(fault='raise ValueError("rank 1 stops here")'))
    assert time.monotonic() - start < 40  # (the group's timeout: 60 s)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "ValueError: rank 1 stops here\n[rank 1] ValueError: this rank stops, and the job " \
        "with it\n" in run.stderr
    assert survivors_say(run.stderr, 1, 2), run.stderr
    assert "went on" not in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 4])
def test_a_killed_rank_stops_the_job_and_every_other_rank_names_it(tmp_path, n):
    start = time.monotonic()
    run = launch(tmp_path, ["-m", "ember.distributed.run", "--nproc-per-node", str(n),
                            "train.py"],
                 script=FAULT.replace("== 1", f"== {n - 1}").format(
                     fault="os.kill(os.getpid(), signal.SIGKILL)"))
    assert time.monotonic() - start < 40
    assert run.returncode == 1, run.stdout + run.stderr
    assert survivors_say(run.stderr, n - 1, n), run.stderr
    assert "went on" not in run.stdout


def test_several_machines_are_refused_with_a_pointer_to_mpiexec():
    from ember.distributed.run import main
    with pytest.raises(SystemExit, match="host file"):
        main(["--nnodes", "2", "--nproc-per-node", "2", "train.py"])
