"""``python -m ember.distributed.run --nproc-per-node N script.py [args]``: torchrun on MPI.

Starts N ranks of ``script.py`` on this machine with ``mpiexec`` (MPICH's, from ``pip install
'ember[distributed]'``), each with torchrun's environment (``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``...) and with ``import
torch`` resolving to ember, as under ``python -m ember run``. torchrun's common flags are
taken in either spelling (``--nproc-per-node``/``--nproc_per_node``); ``torchrun`` itself,
run under ``python -m ember run``, is this (its entry point imports ``torch.distributed.run``).
``--cuda-on-cpu`` (ember's own) runs a script written for GPUs on CPU ranks, each ``cuda``
device the CPU. A rank that fails (an exception, a signal) stops the job: the others raise an
error naming it (``ember.distributed._job``), and the launcher exits 1. Several machines are
MPI's business: start ``mpiexec`` with a host file directly.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

from ._mpi import find_mpiexec

__all__ = ["main", "parse_args"]


def parse_args(args=None):
    parser = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Start several ranks of a PyTorch training script on ember (MPI).")

    def flag(name, **kwargs):
        spellings = {f"--{name}", f"--{name.replace('-', '_')}"}
        parser.add_argument(*sorted(spellings), **kwargs)

    flag("nproc-per-node", default="1", help="ranks to start: a number, 'cpu' or 'auto'")
    flag("nnodes", default="1", help="machines (only 1: use mpiexec for more)")
    flag("node-rank", type=int, default=0)
    flag("master-addr", default="127.0.0.1")
    flag("master-port", type=int, default=29500)
    flag("rdzv-backend", default="static")
    flag("rdzv-endpoint", default="")
    flag("rdzv-id", default="none")
    flag("max-restarts", type=int, default=0)
    flag("monitor-interval", type=float, default=0.1)
    flag("log-dir", default=None)
    flag("run-path", default=None)
    parser.add_argument("--standalone", action="store_true")
    flag("cuda-on-cpu", action="store_true",
         help="(ember's own) run a script written for GPUs on the CPU: 'cuda' is the CPU")
    parser.add_argument("-m", "--module", action="store_true",
                        help="run the script as a module (python -m)")
    flag("no-python", action="store_true", help="run the script as an executable")
    parser.add_argument("script")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    return parser.parse_args(args)


def _nproc(value):
    if value in ("cpu", "auto"):
        return os.cpu_count() or 1
    if value == "gpu":
        raise ValueError("--nproc-per-node=gpu: ember's launcher runs CPU ranks")
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"Unsupported nproc_per_node value: {value}") from None
    if n < 1:
        raise ValueError(f"--nproc-per-node must be positive, got {n}")
    return n


def main(args=None):
    opts = parse_args(args)
    if opts.nnodes not in ("1", "1:1"):
        raise SystemExit("ember's launcher starts one machine's ranks; for several machines "
                         "start `mpiexec` with a host file (each rank calls "
                         "init_process_group() as usual)")
    n = _nproc(opts.nproc_per_node)
    env = {**os.environ, "MASTER_ADDR": opts.master_addr, "MASTER_PORT": str(opts.master_port),
           "WORLD_SIZE": str(n), "LOCAL_WORLD_SIZE": str(n), "GROUP_RANK": "0",
           "ROLE_RANK": "0", "ROLE_NAME": "default", "TORCHELASTIC_RUN_ID": opts.rdzv_id,
           "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_MAX_RESTARTS": "0",
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    if opts.cuda_on_cpu:
        env["EMBER_CUDA_ON_CPU"] = "1"
    mode = "exec" if opts.no_python else "module" if opts.module else "script"
    command = [find_mpiexec(), "-n", str(n), sys.executable, "-m", "ember.distributed._rank", mode,
               opts.script, *opts.script_args]
    return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main())
