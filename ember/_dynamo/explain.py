"""``torch._dynamo.explain(fn)(*args)``: what compiling ``fn`` for these arguments makes.

It compiles ``fn`` afresh, calls it once (the call runs, as PyTorch's does) and reports, in
PyTorch's ``ExplainOutput`` shape: one graph (the recorded call) or a graph break with its
reason and the user's frames where it happened, the number of recorded calls ("ops"), the
guard and the time the recording took. ``graphs`` holds the generated replay functions
(``.source``), ember's counterpart of PyTorch's FX graphs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .replay import _Compiled

__all__ = ["explain", "ExplainOutput", "BreakReason"]


@dataclass
class BreakReason:
    reason: str
    user_stack: list = field(default_factory=list)


@dataclass
class ExplainOutput:
    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list | None = None
    out_guards: list | None = None
    compile_times: str | None = None

    def __str__(self):
        out = f"Graph Count: {self.graph_count}\n"
        out += f"Graph Break Count: {self.graph_break_count}\n"
        out += f"Op Count: {self.op_count}\n"
        out += "Break Reasons:\n"
        for k, b in enumerate(self.break_reasons):
            out += f"  Break Reason {k + 1}:\n    Reason: {b.reason}\n    User Stack:\n"
            for frame in b.user_stack:
                out += f"      {frame}\n"
        if self.out_guards is not None:
            out += "Out Guards:\n"
            for k, guard in enumerate(self.out_guards):
                out += f"  Guard {k + 1}:\n    {guard}"
        if self.compile_times is not None:
            out += f"Compile Times: {self.compile_times}\n"
        return out


def explain(f: Any, *extra_args: Any, **extra_kwargs: Any) -> Any:
    """``explain(f)(*args, **kwargs)``: compile ``f``, call it once, report (see above)."""
    def inner(*args, **kwargs):
        runner = _Compiled(f, fullgraph=False)
        runner(*extra_args, *args, **extra_kwargs, **kwargs)
        recordings = list(runner.recordings.values())
        replayed = [r for r in recordings if r.replay is not None]
        broken = [r for r in recordings if r.replay is None]
        return ExplainOutput(
            graphs=[r.replay for r in replayed], graph_count=len(replayed),
            graph_break_count=len(broken),
            break_reasons=[BreakReason(r.failed, r.failed_at) for r in broken],
            op_count=sum(r.lines for r in replayed),
            out_guards=[r.guard.source for r in recordings],
            compile_times=", ".join(f"recorded in {r.seconds * 1e3:.1f} ms"
                                    for r in recordings) or None)
    return inner
