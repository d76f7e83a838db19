"""DistributedDataParallel on this machine: throughput with 1 and 2 ranks, bytes per step, and
how much of the gradients' all-reduce the overlap with backward hides.

    python bench/ddp.py [--batch 256] [--steps 20] [--repeat 3] [--bucket-cap-mb 25]

Each rank trains a 784-1024-1024-10 ReLU MLP (SGD, cross-entropy, float32) on its own
``--batch`` samples per step, one BLAS thread per rank (weak scaling: 2 ranks do twice the
samples of 1). Reported per rank count: ms per step, samples per second, and the throughput
against one rank (target >= 1.7x on 2 ranks). With 2 ranks, also: the gradient bytes each
step all-reduces, the time the same all-reduces take alone after a step (blocking, bucket
by bucket), and the time backward's end waits for them in training (what the overlap did
not hide): hidden = 1 - waited / alone (target >= 50%). Medians over ``--repeat`` runs.
Needs ``pip install 'ember[distributed]'``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = (784, 1024, 1024, 10)


def worker(batch, steps, bucket_mb):
    import numpy as np

    import ember as torch
    import ember.distributed as dist

    dist.init_process_group("gloo")
    rank, n = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    layers = []
    for a, b in zip(SIZES, SIZES[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(*layers[:-1]),
                                                      bucket_cap_mb=bucket_mb)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    rng = np.random.default_rng(rank)
    x = torch.tensor(rng.standard_normal((batch, SIZES[0])).astype(np.float32))
    y = torch.tensor(rng.integers(0, SIZES[-1], batch))
    waited = [0.0]  # seconds the steps spent waiting for DDP's all-reduces
    wait = dist.Work.wait

    def timed_wait(self, timeout=None):
        start = time.perf_counter()
        try:
            return wait(self, timeout)
        finally:
            waited[0] += time.perf_counter() - start

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    dist.barrier()
    dist.Work.wait = timed_wait
    start = time.perf_counter()
    for _ in range(steps):
        step()
    dist.Work.wait = wait
    dist.barrier()
    per_step = (time.perf_counter() - start) / steps
    # the same all-reduces alone: each bucket's gradients, blocking, after a step
    buckets = [torch.tensor(np.concatenate([p.grad.numpy().reshape(-1) for p in bucket]))
               for bucket in model._buckets]
    dist.barrier()
    start = time.perf_counter()
    for _ in range(steps):
        for flat in buckets:
            dist.all_reduce(flat)
    dist.barrier()
    alone = (time.perf_counter() - start) / steps
    if rank == 0:
        print(json.dumps({"ranks": n, "ms_per_step": per_step * 1e3,
                          "samples_per_s": n * batch / per_step,
                          "bytes_per_step": sum(b.numpy().nbytes for b in buckets),
                          "buckets": len(buckets), "allreduce_alone_ms": alone * 1e3,
                          "waited_ms": waited[0] / steps * 1e3}))
    dist.destroy_process_group()


def run(n, batch, steps, bucket_mb):
    mpiexec = shutil.which("mpiexec", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                            os.environ.get("PATH", "")]))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([mpiexec, "-n", str(n), sys.executable, __file__, "--worker",
                          "--batch", str(batch), "--steps", str(steps),
                          "--bucket-cap-mb", str(bucket_mb)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256, help="samples per rank per step")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bucket-cap-mb", type=float, default=25.0,
                        help="DDP's bucket_cap_mb (PyTorch's default: 25)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.batch, args.steps, args.bucket_cap_mb)
    results = {1: [], 2: []}
    for _ in range(args.repeat):  # (interleaved: 1 rank, 2 ranks, 1 rank, ...)
        for n in results:
            results[n].append(run(n, args.batch, args.steps, args.bucket_cap_mb))
    med = {n: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for n, rs in results.items()}
    one, two = med[1], med[2]
    print(f"MLP {'-'.join(map(str, SIZES))}, batch {args.batch} per rank, {args.steps} steps, "
          f"bucket_cap_mb {args.bucket_cap_mb:g}, medians of {args.repeat}")
    print(f"{'ranks':>5} {'ms/step':>8} {'samples/s':>10} {'vs 1 rank':>9}")
    for n, m in med.items():
        print(f"{n:>5} {m['ms_per_step']:8.1f} {m['samples_per_s']:10.0f} "
              f"{m['samples_per_s'] / one['samples_per_s']:8.2f}x")
    hidden = 1 - two["waited_ms"] / two["allreduce_alone_ms"]
    print(f"2 ranks: {two['bytes_per_step'] / 2**20:.2f} MiB of gradients all-reduced per step "
          f"in {two['buckets']:.0f} buckets; alone {two['allreduce_alone_ms']:.1f} ms, waited for "
          f"at backward's end {two['waited_ms']:.1f} ms: {hidden:.0%} hidden "
          f"(target >= 50%); throughput {two['samples_per_s'] / one['samples_per_s']:.2f}x "
          "(target >= 1.7x)")


if __name__ == "__main__":
    main()
