"""One rank of a distributed test: ``mpiexec -n N python -m tests.distributed.worker CASE``.

Each case checks what every rank got against a NumPy reference computed from every rank's
inputs (which each rank can make: they are functions of the rank), and raises on the first
difference; ``tests/distributed/test_collectives.py`` starts the ranks and reads their exit
codes and output.
"""
import datetime
import os
import sys
import time

import numpy as np

import ember as torch
import ember.distributed as dist

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8",
          "bool", "complex64"]
DEVICE = os.environ.get("WORKER_DEVICE", "cpu")  # ("cuda": CuPy tensors, through the host)
FLOATS = ("float32", "float64", "float16", "bfloat16", "complex64")


def values(rank, dtype, shape=(2, 3)):
    """Rank ``rank``'s input: small numbers, exact in every dtype (products too)."""
    rng = np.random.default_rng(100 + rank)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "uint8":
        return rng.integers(0, 4, shape).astype(np.uint8)
    a = rng.integers(-3, 4, shape).astype(np.float64)
    if dtype == "complex64":
        a = a + 1j * rng.integers(-2, 3, shape)
    return a.astype(np.complex64) if dtype == "complex64" else a


def tensor(rank, dtype, shape=(2, 3)):
    return torch.tensor(values(rank, dtype, shape).tolist(), dtype=getattr(torch, dtype),
                        device=DEVICE)


def reference(op, arrays, dtype):
    """``op`` of ``arrays`` (every rank's input, as exact float64/complex/int/bool arrays)."""
    stack = np.stack(arrays)
    if dtype == "bool":
        fn = {"SUM": np.any, "MAX": np.any, "BOR": np.any, "PRODUCT": np.all, "MIN": np.all,
              "BAND": np.all, "BXOR": lambda s, axis: np.logical_xor.reduce(s, axis)}[op]
        return fn(stack, axis=0)
    if op == "BAND":
        return np.bitwise_and.reduce(stack.astype(np.int64), axis=0)
    if op == "BOR":
        return np.bitwise_or.reduce(stack.astype(np.int64), axis=0)
    if op == "BXOR":
        return np.bitwise_xor.reduce(stack.astype(np.int64), axis=0)
    return {"SUM": np.sum, "AVG": np.mean, "PRODUCT": np.prod, "MIN": np.min,
            "MAX": np.max}[op](stack, axis=0)


def same(got, want, what):
    assert got.device.type == DEVICE, (what, got.device)
    got = got.cpu()
    got = np.asarray(got.to(torch.float64) if got.dtype is torch.bfloat16 else got)
    if got.dtype == np.bool_:
        ok = np.array_equal(got, np.asarray(want, bool))
    else:
        ok = np.allclose(got.astype(np.complex128), np.asarray(want).astype(np.complex128),
                         rtol=1e-2 if got.dtype == np.float16 else 1e-6)
    if not ok:
        raise AssertionError(f"rank {dist.get_rank()}: {what}: got {got}, want {want}")


def ops_for(dtype):
    ops = ["SUM", "PRODUCT", "MIN", "MAX"]
    if dtype in FLOATS:
        ops.append("AVG")
    if dtype not in FLOATS:
        ops += ["BAND", "BOR", "BXOR"]
    if dtype == "complex64":
        ops.remove("MIN"), ops.remove("MAX")
    return ops


def case_collectives():
    rank, n = dist.get_rank(), dist.get_world_size()
    for dtype in DTYPES:
        everyone = [values(r, dtype) for r in range(n)]
        for op in ops_for(dtype):
            t = tensor(rank, dtype)
            version = t._version
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            same(t, reference(op, everyone, dtype), f"all_reduce {op} {dtype}")
            assert t._version == version + 1
            t = tensor(rank, dtype)
            dist.reduce(t, dst=n - 1, op=getattr(dist.ReduceOp, op))
            same(t, reference(op, everyone, dtype) if rank == n - 1 else everyone[rank],
                 f"reduce {op} {dtype}")
        t = tensor(rank, dtype)
        dist.broadcast(t, src=1)
        same(t, everyone[1], f"broadcast {dtype}")
        outs = [torch.zeros(2, 3, dtype=getattr(torch, dtype), device=DEVICE) for _ in range(n)]
        dist.all_gather(outs, tensor(rank, dtype))
        for r in range(n):
            same(outs[r], everyone[r], f"all_gather {dtype}")
        flat = torch.zeros(2 * n, 3, dtype=getattr(torch, dtype), device=DEVICE)
        dist.all_gather_into_tensor(flat, tensor(rank, dtype))
        same(flat, np.concatenate(everyone), f"all_gather_into_tensor {dtype}")
        stacked = torch.zeros(n, 2, 3, dtype=getattr(torch, dtype), device=DEVICE)
        dist.all_gather_into_tensor(stacked, tensor(rank, dtype))
        same(stacked, np.stack(everyone), f"all_gather_into_tensor stacked {dtype}")
        if dtype != "bool":
            whole = [values(r, dtype, (n * 2, 3)) for r in range(n)]
            out = torch.zeros(2, 3, dtype=getattr(torch, dtype), device=DEVICE)
            dist.reduce_scatter_tensor(out, tensor(rank, dtype, (n * 2, 3)))
            same(out, reference("SUM", whole, dtype)[2 * rank:2 * rank + 2],
                 f"reduce_scatter_tensor {dtype}")
            out = torch.zeros(2, 3, dtype=getattr(torch, dtype), device=DEVICE)
            op = "SUM" if dtype == "complex64" else "MAX"
            dist.reduce_scatter(out, [tensor(n * rank + k, dtype) for k in range(n)],
                                op=getattr(dist.ReduceOp, op))
            same(out, reference(op, [values(n * r + rank, dtype) for r in range(n)], dtype),
                 f"reduce_scatter {op} {dtype}")
        got = [torch.zeros(2, 3, dtype=getattr(torch, dtype), device=DEVICE) for _ in range(n)]
        dist.gather(tensor(rank, dtype), got if rank == 0 else None, dst=0)
        if rank == 0:
            for r in range(n):
                same(got[r], everyone[r], f"gather {dtype}")
        out = torch.zeros(2, 3, dtype=getattr(torch, dtype), device=DEVICE)
        parts = [tensor(10 + r, dtype) for r in range(n)]
        dist.scatter(out, parts if rank == n - 1 else None, src=n - 1)
        same(out, values(10 + rank, dtype), f"scatter {dtype}")
    print(f"rank {rank}: collectives ok", flush=True)


def case_point_to_point():
    rank, n = dist.get_rank(), dist.get_world_size()
    nxt, prev = (rank + 1) % n, (rank - 1) % n
    if rank % 2 == 0:  # a ring, blocking: even ranks send first
        dist.send(tensor(rank, "float32"), dst=nxt)
        t = torch.zeros(2, 3)
        assert dist.recv(t, src=prev) == prev
    else:
        t = torch.zeros(2, 3)
        assert dist.recv(t) == prev  # (any source)
        dist.send(tensor(rank, "float32"), dst=nxt)
    same(t, values(prev, "float32"), "recv")
    out = torch.zeros(2, 3, dtype=torch.int64)
    works = [dist.isend(tensor(rank, "int64"), dst=nxt, tag=7),
             dist.irecv(out, src=prev, tag=7)]
    for w in works:
        assert w.wait() is True and w.is_completed()
    same(out, values(prev, "int64"), "irecv")
    t = tensor(rank, "float64")
    work = dist.all_reduce(t, async_op=True)
    assert isinstance(work, dist.Work)
    work.wait()
    same(t, reference("SUM", [values(r, "float64") for r in range(n)], "float64"), "async")
    dist.barrier()
    print(f"rank {rank}: point to point ok", flush=True)


def case_objects():
    rank, n = dist.get_rank(), dist.get_world_size()
    mine = {"rank": rank, "name": "x" * (rank * 50), "values": list(range(rank))}
    everyone = [{"rank": r, "name": "x" * (r * 50), "values": list(range(r))} for r in range(n)]
    got = [None] * n
    dist.all_gather_object(got, mine)
    assert got == everyone, got
    objects = [("from", n - 1), {"a": [1, 2]}, None] if rank == n - 1 else [0, 0, 0]
    dist.broadcast_object_list(objects, src=n - 1)
    assert objects == [("from", n - 1), {"a": [1, 2]}, None], objects
    gathered = [None] * n if rank == 0 else None
    dist.gather_object(mine, gathered, dst=0)
    assert gathered == (everyone if rank == 0 else None)
    out = [None]
    dist.scatter_object_list(out, [f"for {r}" * (r + 1) for r in range(n)] if rank == 1 else None,
                             src=1)
    assert out == [f"for {rank}" * (rank + 1)], out
    print(f"rank {rank}: objects ok", flush=True)


def case_groups():
    rank, n = dist.get_rank(), dist.get_world_size()
    members = list(range(1, n))  # every rank but 0
    pg = dist.new_group(members)
    if rank == 0:
        assert pg == dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(pg) == -1
    else:
        assert dist.get_world_size(pg) == n - 1 and dist.get_rank(pg) == rank - 1
        assert dist.get_process_group_ranks(pg) == members
        t = tensor(rank, "float32")
        dist.all_reduce(t, group=pg)
        same(t, reference("SUM", [values(r, "float32") for r in members], "float32"), "group")
        t = tensor(rank, "float32")
        dist.broadcast(t, src=n - 1, group=pg)  # (a global rank)
        same(t, values(n - 1, "float32"), "group broadcast")
        t = tensor(rank, "float32")
        dist.broadcast(t, group=pg, group_src=0)  # (global rank 1)
        same(t, values(1, "float32"), "group broadcast by group rank")
    dist.barrier()
    print(f"rank {rank}: groups ok", flush=True)


def expect(error, fragment, fn):
    try:
        fn()
    except error as exc:
        assert fragment in str(exc), str(exc)
        return
    raise AssertionError(f"no {error.__name__} ({fragment!r})")


def case_errors():
    """Bad calls raise PyTorch's errors on the rank that made them and change no tensor."""
    rank, n = dist.get_rank(), dist.get_world_size()
    expect(ValueError, "twice", lambda: dist.init_process_group("gloo"))
    t = tensor(rank, "float32")
    before = t.numpy().copy()
    expect(RuntimeError, "non-integral", lambda: dist.all_reduce(t, op=dist.ReduceOp.BAND))
    expect(ValueError, "complex", lambda: dist.all_reduce(tensor(rank, "complex64"),
                                                         op=dist.ReduceOp.MAX))
    expect(TypeError, "torch.Tensor", lambda: dist.all_reduce([1.0, 2.0]))
    expect(RuntimeError, "invalid root rank", lambda: dist.broadcast(t, src=n))
    expect(RuntimeError, "expected length", lambda: dist.all_gather([t], t))
    expect(RuntimeError, "invalid tensor size",
           lambda: dist.all_gather([torch.zeros(3) for _ in range(n)], t))
    expect(RuntimeError, "world_size", lambda: dist.all_gather_into_tensor(torch.zeros(5), t))
    expect(ValueError, "gather_list", lambda: dist.gather(t, [t] * n if rank else None, dst=0))
    expect(ValueError, "should not be the same", lambda: dist.send(t, dst=rank))
    assert np.array_equal(t.numpy(), before) and t._version == 0
    dist.barrier()  # (the ranks are still in step: nothing was sent)
    print(f"rank {rank}: errors ok", flush=True)


def case_timeout():
    """Rank 0 waits for an all_reduce the others never join (they are busy past the
    group's timeout): a clear error in time, not a hang."""
    rank = dist.get_rank()
    if rank == 0:
        start = time.monotonic()
        expect(RuntimeError, "timed out", lambda: dist.all_reduce(torch.ones(3)))
        took = time.monotonic() - start
        assert 1 <= took < 10, took
        print(f"rank 0: timeout ok after {took:.1f} s", flush=True)
    else:
        time.sleep(4)
    os._exit(0)  # (MPI cannot finalise around the collective left pending)


def _models(kind):
    torch.manual_seed(0)
    if kind == "mlp":
        return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16),
                                   torch.nn.ReLU(), torch.nn.Linear(16, 3))
    return torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(),
                               torch.nn.MaxPool2d(2), torch.nn.Conv2d(4, 4, 3), torch.nn.Tanh(),
                               torch.nn.Flatten(), torch.nn.Linear(16, 3))


def _batches(kind, steps, size):
    rng = np.random.default_rng(7)
    shape = (size, 6) if kind == "mlp" else (size, 1, 8, 8)
    return [(torch.tensor(rng.standard_normal(shape).astype(np.float32)),
             torch.tensor(rng.integers(0, 3, size))) for _ in range(steps)]


def case_ddp(kind="mlp", steps=50):
    """DDP over the ranks, each on its share of every batch, ends where one process training
    on the whole batches ends (within float32's summation order)."""
    steps = int(steps)
    rank, n = dist.get_rank(), dist.get_world_size()
    per = 4
    batches = _batches(kind, steps, per * n)
    alone = _models(kind).to(DEVICE)
    torch.manual_seed(100 + rank)  # (DDP must take rank 0's initial values: differ here)
    replica = _models(kind) if rank == 0 else _models(kind).apply(
        lambda m: [p.data.add_(1.0) for p in m.parameters(recurse=False)])
    ddp = torch.nn.parallel.DistributedDataParallel(
        replica.to(DEVICE), bucket_cap_mb=0.0002,
        device_ids=None if DEVICE == "cpu" else [torch.cuda.current_device()])
    assert len(ddp._buckets) > 1
    assert list(ddp.state_dict()) == [f"module.{k}" for k in alone.state_dict()]
    opts = [torch.optim.SGD(alone.parameters(), lr=0.1, momentum=0.9),
            torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)]
    loss_fn = torch.nn.functional.cross_entropy
    for x, y in batches:
        x, y = x.to(DEVICE), y.to(DEVICE)
        for opt in opts:
            opt.zero_grad()
        loss_fn(alone(x), y).backward()
        mine = slice(rank * per, (rank + 1) * per)
        loss_fn(ddp(x[mine]), y[mine]).backward()
        for opt in opts:
            opt.step()
    for (name, a), b in zip(alone.named_parameters(), ddp.module.parameters()):
        assert a.device.type == b.device.type == b.grad.device.type == DEVICE
        a, b = a.cpu(), b.cpu()
        if not np.allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5):
            raise AssertionError(f"rank {rank}: {kind} {name} differs after {steps} steps: "
                                 f"{np.abs(a.detach().numpy() - b.detach().numpy()).max()}")
    first = next(ddp.parameters()).detach().reshape(-1)
    gathered = [torch.zeros_like(first) for _ in range(n)]
    dist.all_gather(gathered, first)
    assert all(torch.equal(g, first) for g in gathered)  # (replicas equal)
    print(f"rank {rank}: ddp {kind} ok", flush=True)


def case_ddp_features():
    """no_sync, unused parameters, and PyTorch's errors."""
    rank, n = dist.get_rank(), dist.get_world_size()

    class Branchy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c = (torch.nn.Linear(3, 3), torch.nn.Linear(3, 3),
                                      torch.nn.Linear(3, 3))

        def forward(self, x, use_b):
            return self.c(self.b(self.a(x)) if use_b else self.a(x))

    torch.manual_seed(0)
    x = torch.ones(2, 3) * (rank + 1)
    # no_sync: two local backwards, then one synchronised: the sum's average
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 1))
    with model.no_sync():
        model(x).sum().backward()
    local = model.module.weight.grad.numpy().copy()
    assert np.allclose(local, 2 * (rank + 1))  # (not averaged)
    model(x).sum().backward()
    want = np.mean([2 * (r + 1) * 2 for r in range(n)])
    assert np.allclose(model.module.weight.grad.numpy(), want), model.module.weight.grad
    # a parameter rank 0 leaves out: its gradient is the others' average (zero from rank 0)
    model = torch.nn.parallel.DistributedDataParallel(Branchy(), find_unused_parameters=True)
    model(x, use_b=rank > 0).sum().backward()
    grads = [torch.zeros(3, 3) for _ in range(n)]
    dist.all_gather(grads, model.module.b.weight.grad)
    assert all(np.array_equal(g.numpy(), grads[0].numpy()) for g in grads)
    model.zero_grad()
    model(x, use_b=False).sum().backward()  # (no rank uses b: its .grad stays None)
    assert model.module.b.weight.grad is None and model.module.a.weight.grad is not None
    # without find_unused_parameters, the next forward says what happened
    model = torch.nn.parallel.DistributedDataParallel(Branchy())
    model(x, use_b=False).sum().backward()
    expect(RuntimeError, "find_unused_parameters=True", lambda: model(x, use_b=True))
    expect(ValueError, "device_ids", lambda: torch.nn.parallel.DistributedDataParallel(
        torch.nn.Linear(2, 2), device_ids=[0]))
    print(f"rank {rank}: ddp features ok", flush=True)


if __name__ == "__main__":
    case = sys.argv[1]
    # (argv: the case, the group's timeout in seconds or "-", the case's arguments)
    timeout = (datetime.timedelta(seconds=float(sys.argv[2]))
               if len(sys.argv) > 2 and sys.argv[2] != "-" else None)
    dist.init_process_group("gloo", timeout=timeout)
    globals()[f"case_{case}"](*sys.argv[3:])
    dist.destroy_process_group()
