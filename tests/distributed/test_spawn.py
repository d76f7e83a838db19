"""``torch.multiprocessing.spawn`` with MPI installed: the children are one MPI job, so
PyTorch's tutorial idiom (``mp.spawn`` + ``init_process_group(rank=i, world_size=n)``) works;
the parent hears how each child ended, as PyTorch's ``ProcessContext`` reports it."""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")

ROOT = Path(__file__).resolve().parents[2]

TUTORIAL = """
import os, sys
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def demo(rank, world_size, fault):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "localhost", "12355"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(rank)  # (DDP starts every replica from rank 0's values)
    model = DDP(torch.nn.Linear(10, 5))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.nn.functional.mse_loss(model(torch.randn(20, 10)), torch.randn(20, 5)).backward()
    opt.step()
    w = model.module.weight.detach()
    got = [torch.zeros_like(w) for _ in range(world_size)]
    dist.all_gather(got, w)
    print(f"rank {rank} of {world_size} ({torch.__name__}, argv {sys.argv[1:]}): replicas "
          f"equal {all(torch.equal(g, w) for g in got)}", flush=True)
    if rank == world_size - 1 and fault:
        exec(fault)
    dist.all_reduce(torch.ones(1))
    dist.destroy_process_group()


if __name__ == "__main__":
    n, fault = int(sys.argv[1]), sys.argv[2]
    try:
        mp.spawn(demo, args=(n, fault), nprocs=n)
    except mp.ProcessException as e:
        print(f"parent: {type(e).__name__} (error_index {e.error_index}, pid "
              f"{e.pid in (e.pid,)}): {e}")
    print("parent done")
"""


def spawn(tmp_path, n, fault=""):
    (tmp_path / "tutorial.py").write_text(textwrap.dedent(TUTORIAL))
    run = subprocess.run([sys.executable, "-m", "ember", "run", "tutorial.py", str(n), fault],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 4])
def test_pytorchs_tutorial_idiom_runs_the_children_as_one_group(tmp_path, n):
    out = spawn(tmp_path, n)
    # (the children's lines share one pipe: a line's text and its newline may be apart)
    assert sorted(re.findall(r"rank \d+ of [^\n]*?replicas equal (?:True|False)", out)) == [
        f"rank {r} of {n} (ember, argv ['{n}', '']): replicas equal True" for r in range(n)]
    assert out.endswith("\nparent done\n")  # (after every child's output)


@pytest.mark.slow
def test_a_child_that_raises_gives_the_parent_its_traceback(tmp_path):
    out = spawn(tmp_path, 2, 'raise ValueError("boom")')
    assert re.search(r"parent: ProcessRaisedException \(error_index 1, pid True\): \n\n-- "
                     r"Process 1 terminated with the following error:\nTraceback \(most recent "
                     r"call last\):\n(.|\n)*ValueError: boom\n\nparent done\n$", out), out


@pytest.mark.slow
def test_a_child_that_exits_or_dies_is_named(tmp_path):
    out = spawn(tmp_path, 2, "sys.exit(3)")
    assert out.endswith("parent: ProcessExitedException (error_index 1, pid True): process 1 "
                        "terminated with exit code 3\nparent done\n"), out
    out = spawn(tmp_path, 4, "import signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert out.endswith("parent: ProcessExitedException (error_index 3, pid True): process 3 "
                        "terminated without a word (killed by a signal?)\nparent done\n"), out


@pytest.mark.slow
def test_join_without_waiting_and_pids(tmp_path):
    script = tmp_path / "nowait.py"
    script.write_text(textwrap.dedent("""
        import os, time
        import torch.multiprocessing as mp

        def work(rank, seconds):
            time.sleep(seconds)

        if __name__ == "__main__":
            context = mp.spawn(work, args=(1.0,), nprocs=2, join=False)
            pids = context.pids()
            print(len(pids), all(isinstance(p, int) and p != os.getpid() for p in pids))
            print(context.join(timeout=0.01))
            print(context.join())
    """))
    run = subprocess.run([sys.executable, "-m", "ember", "run", str(script)], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.stdout.splitlines() == ["2 True", "False", "True"], run.stdout + run.stderr
