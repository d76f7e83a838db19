"""ember's type hints: the generated stub of Tensor's bound methods is current and agrees with
PyTorch's result types, the public API is annotated, and a user's program type-checks under
mypy (and a wrong use is flagged) as it would against PyTorch."""
from __future__ import annotations

import ast
import inspect
import os
import re
import subprocess
import sys
import textwrap
import typing
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import ember
from ember import Tensor, _creation, nn, optim
from ember.nn import functional as F
from ember.optim import lr_scheduler
from tools import tensor_stub

ROOT = tensor_stub.ROOT  # the repository


# ------------------------------------------------------------------ the stub of bound methods

def test_tensor_stub_is_current():
    """``ember/_tensor_stub.pyi`` is what ``tools/tensor_stub.py`` makes of today's methods (in
    a fresh interpreter: what ``import ember`` binds, nothing a test added)."""
    proc = subprocess.run([sys.executable, "tools/tensor_stub.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_stub_declares_every_bound_method():
    stub = tensor_stub.STUB.read_text()
    declared = set(re.findall(r"^    def (\w+)\(", stub, re.M))
    for name in ("exp", "exp_", "sum", "view", "reshape", "to", "float", "__add__", "__radd__",
                 "__matmul__", "__eq__", "new_zeros", "uniform_", "T", "mT"):
        assert name in declared, name
    own = tensor_stub.class_body_names()
    assert not declared & own  # (those are typed in ember/_tensor.py itself)


def test_annotations_flow_into_the_stub(monkeypatch):
    """A bound function's own hints are the stub's, with the builtins the class shadows
    renamed and the names they use imported; a name the tool can't import stops it."""
    def probe(input: Tensor, dims: Sequence[int], *, keepdim: bool = False
              ) -> tuple[Tensor, int]:
        raise NotImplementedError

    monkeypatch.setattr(Tensor, "stubprobe", probe, raising=False)
    text = tensor_stub.render()
    assert "    def stubprobe(self, dims: Sequence[_int], *, keepdim: _bool = ...) -> " \
           "tuple[Tensor, _int]: ..." in text
    assert "from builtins import int as _int" in text
    assert "from collections.abc import Sequence" in text

    def unknown(input: Tensor) -> np.ndarray:
        raise NotImplementedError

    monkeypatch.setattr(Tensor, "stubprobe", unknown)
    with pytest.raises(SystemExit, match="add their imports"):
        tensor_stub.render()


def _pytorch_results():
    """``{method: {result annotation, ...}}`` from PyTorch's own stub of ``TensorBase``."""
    torch = pytest.importorskip("torch")
    path = Path(torch.__file__).parent / "_C" / "__init__.pyi"
    if not path.exists():
        pytest.skip("this PyTorch has no _C/__init__.pyi")
    tree = ast.parse(path.read_text())
    base = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TensorBase")
    out = {}
    for f in base.body:
        if isinstance(f, ast.FunctionDef) and f.returns is not None:
            out.setdefault(f.name, set()).add(ast.unparse(f.returns))
    return out


def test_stub_results_agree_with_pytorch():
    """A bound method the stub says returns a Tensor returns one in PyTorch's stubs too, and
    one it says returns something else does not (so ``RETURNS`` can't fall behind a new op
    that returns a tuple)."""
    theirs = _pytorch_results()
    stub = ast.parse(tensor_stub.STUB.read_text())
    methods = next(n for n in stub.body if isinstance(n, ast.ClassDef)).body
    ours = {f.name: ast.unparse(f.returns) for f in methods if isinstance(f, ast.FunctionDef)}
    identity = {"__eq__", "__ne__"}  # (PyTorch: a bool beside None; ember's falls back alike)
    wrong = [(name, ret, sorted(theirs[name])) for name, ret in ours.items()
             if name in theirs and name not in identity and
             (ret == "Tensor") != (theirs[name] == {"Tensor"})]
    assert not wrong, wrong


# ------------------------------------------------------------------ the public API is annotated

def _unannotated(fn):
    """The parameters (and ``return``) of ``fn`` without an annotation (an overloaded
    function's implementation needs none: its ``@overload`` declarations carry them)."""
    fn = inspect.unwrap(fn)
    if getattr(typing, "get_overloads", None) and typing.get_overloads(fn):  # (Python 3.11+)
        return []
    sig = inspect.signature(fn)
    missing = [n for i, (n, p) in enumerate(sig.parameters.items())
               if p.annotation is p.empty and not (i == 0 and n in ("self", "cls"))]
    if sig.return_annotation is sig.empty:
        missing.append("return")
    return missing


def _public(cls, skip=(), only=None):
    for name, value in vars(cls).items():
        if (name.startswith("_") and name not in ("__init__", "__call__", "__getitem__")) \
                or name in skip or (only is not None and name not in only):
            continue
        if isinstance(value, property):
            yield f"{cls.__name__}.{name}", value.fget
        elif inspect.isfunction(value):
            yield f"{cls.__name__}.{name}", value


def _api():
    yield from ((f"ember.{n}", getattr(_creation, n)) for n in _creation.__all__)
    # (its bound methods: the generated stub, tested above)
    yield from _public(ember.Tensor, only=tensor_stub.class_body_names())
    # forward stays unannotated: each module declares its own signature (PyTorch's is
    # Callable[..., Any] for the same reason)
    yield from _public(nn.Module, skip=("forward",))
    yield from _public(optim.Optimizer)
    for name in optim.__all__:
        cls = getattr(optim, name)
        if isinstance(cls, type) and issubclass(cls, optim.Optimizer) and cls is not \
                optim.Optimizer:
            yield f"optim.{name}.__init__", cls.__init__
    yield from _public(lr_scheduler.LRScheduler)
    # every public function of ember.nn.functional (its families' modules re-export here)
    for name in sorted(n for n in dir(F) if not n.startswith("_")):
        if inspect.isfunction(getattr(F, name)):
            yield f"nn.functional.{name}", getattr(F, name)


_API = list(_api())


@pytest.mark.parametrize("name,fn", _API, ids=[name for name, _ in _API])
def test_public_api_is_annotated(name, fn):
    assert not _unannotated(fn), f"{name}: no hint for {_unannotated(fn)}"


def test_py_typed_ships():
    assert (ROOT / "ember" / "py.typed").exists()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text()


# ------------------------------------------------------------------ a user's program under mypy

GOOD = '''
from __future__ import annotations

from typing_extensions import assert_type

import ember
import ember.nn.functional as F
from ember import Size, Tensor, nn

x: Tensor = ember.zeros(3, requires_grad=True)
y = (x * 2).sum()
assert_type(y, Tensor)
y.backward()
g: Tensor | None = x.grad
assert_type(x.exp(), Tensor)
assert_type(x.sum(dim=0, keepdim=True), Tensor)
assert_type(x.view(3, 1).T @ x.view(1, 3), Tensor)
assert_type(x.shape, Size)
assert_type(x.shape[0], int)
assert_type(x.size(0), int)
assert_type(x.dtype, ember.dtype)
assert_type(x.to("cpu", ember.float64), Tensor)
assert_type(2 - x, Tensor)
assert_type(x == x, Tensor)
assert_type(x.chunk(3), tuple[Tensor, ...])
assert_type(x.allclose(x), bool)
z = ember.randn(2, 3, dtype=ember.float64, device="cpu")
w = ember.full((2, 3), 0.5) + ember.arange(3) * ember.ones_like(z)
n: float = float(w.mean().item())
rows = [row.tolist() for row in w]
logits, labels = ember.randn(4, 3), ember.tensor([0, 2, 1, 0])
assert_type(F.relu(logits), Tensor)
assert_type(F.softmax(logits, dim=-1), Tensor)
assert_type(F.cross_entropy(logits, labels, label_smoothing=0.1), Tensor)
assert_type(F.max_pool1d(logits[None], 2, return_indices=True), tuple[Tensor, Tensor])


class Net(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(3, width)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(x).relu()


net = Net(4).train()
assert_type(net, Net)
opt = ember.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
sched = ember.optim.lr_scheduler.StepLR(opt, step_size=10)
for _ in range(2):
    opt.zero_grad()
    loss = net(ember.randn(8, 3)).pow(2).mean()
    loss.backward()
    opt.step()
    sched.step()


def closure() -> Tensor:
    opt.zero_grad()
    out = net(ember.randn(8, 3)).sum()
    out.backward()
    return out


assert_type(opt.step(closure), Tensor)
assert_type(opt.step(), None)
names = [name for name, p in net.named_parameters() if p.requires_grad]
state = net.state_dict()
net.load_state_dict(state)
adam = ember.optim.Adam([{"params": net.parameters()}], betas=(0.9, 0.99))
'''

# Each line marked "# E" must draw an error, and no other line.
BAD = '''
from __future__ import annotations

import ember
from ember import Tensor, nn

x = ember.zeros(3, requires_grad="yes")  # E
y = ember.ones(2, dtype="float32")  # E
x.grad.exp()  # E
n: int = x.size()  # E
s: str = x.sum()  # E
x.backward(create_graph=1.5)  # E
net = nn.Linear(3, 2).train(mode="yes")  # E
opt = ember.optim.SGD(net.parameters(), lr="fast")  # E
opt.zero_grad(set_to_none=None)  # E
nn.functional.relu([1.0, 2.0])  # E
nn.functional.cross_entropy(x, x, reduction=None)  # E
ok: Tensor = x + 1
'''


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory):
    pytest.importorskip("mypy")
    where = tmp_path_factory.mktemp("typing")
    good, bad = where / "user_good.py", where / "user_bad.py"
    good.write_text(textwrap.dedent(GOOD))
    bad.write_text(textwrap.dedent(BAD))
    # from the repository root: mypy finds this ember and its [tool.mypy] settings, and shares
    # the cache of CI's run on the package
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary",
                           "--show-error-codes", str(good), str(bad)],
                          cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, MYPY_FORCE_COLOR="0"))
    if proc.returncode not in (0, 1):
        pytest.fail(f"mypy failed to run:\n{proc.stdout}\n{proc.stderr}")
    errors = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"(.*?):(\d+): error: (.*)", line)
        if m:
            errors.setdefault(Path(m[1]).name, {}).setdefault(int(m[2]), []).append(m[3])
    return errors, proc.stdout


def test_user_program_type_checks(mypy_run):
    errors, out = mypy_run
    assert "user_good.py" not in errors, out


def test_wrong_uses_are_flagged(mypy_run):
    errors, out = mypy_run
    lines = textwrap.dedent(BAD).splitlines()
    marked = {i for i, line in enumerate(lines, 1) if line.endswith("# E")}
    assert set(errors.get("user_bad.py", {})) == marked, out
