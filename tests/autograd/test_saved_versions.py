"""Every tensor a node saves is version-checked, whatever its dtype, against PyTorch.

Index tensors, masks, conditions and targets reach their ops' nodes as raw arrays among the
parameters (``registry.saves_also`` records them); writing one in place before the backward
must raise PyTorch's "modified by an inplace operation" error, naming it as PyTorch does
(``torch.LongTensor``, ``CPUBoolType``), and must not give a gradient computed from either
the old or the new indices.
"""
import pytest

import ember
from tests.oracle import Raised, outcome, pytorch_words


def _x(lib):
    return lib.arange(6.0).reshape(2, 3).requires_grad_()


def _run(lib, program):
    x = _x(lib)
    program(lib, x)
    return x.grad.tolist()


def getitem(lib, x):
    i = lib.tensor([0, 1])
    y = x[i]
    i[0] = 1
    y.sum().backward()


def getitem_mask(lib, x):
    m = lib.tensor([True, False])
    y = x[m]
    m[1] = True
    y.sum().backward()


def gather(lib, x):
    i = lib.tensor([[0, 1, 0]])
    y = x.gather(0, i)
    i[0, 0] = 1
    y.sum().backward()


def scatter_value(lib, x):
    i = lib.tensor([[0, 1, 0]])
    y = x.scatter(0, i, 5.0)
    i[0, 0] = 1
    y.sum().backward()


def scatter_src(lib, x):
    i = lib.tensor([[0, 1, 0]])
    s = lib.ones(1, 3, requires_grad=True)
    y = x.scatter(0, i, s)
    i[0, 0] = 1
    (y * y).sum().backward()


def scatter_add(lib, x):
    i = lib.tensor([[0, 1, 0]])
    y = x.scatter_add(0, i, lib.ones(1, 3))
    i.add_(1)
    y.sum().backward()


def masked_fill(lib, x):
    m = lib.tensor([True, False, True])
    y = x.masked_fill(m, 0.0)
    m[0] = False
    y.sum().backward()


def masked_select(lib, x):
    m = lib.tensor([True, False, True])
    y = x.masked_select(m)
    m[1] = True
    y.sum().backward()


def where(lib, x):
    m = lib.tensor([True, False, True])
    y = lib.where(m, x, 0.0)
    m[1] = True
    y.sum().backward()


def index_select(lib, x):
    i = lib.tensor([0, 2])
    y = x.index_select(1, i)
    i[0] = 1
    y.sum().backward()


def index_add(lib, x):
    i = lib.tensor([0, 2])
    s = lib.ones(2, 2, requires_grad=True)
    y = x.index_add(1, i, s)
    i[0] = 1
    (y * y).sum().backward()


def index_fill(lib, x):
    i = lib.tensor([0, 2])
    y = x.index_fill(1, i, 1.0)
    i[0] = 1
    y.sum().backward()


def embedding(lib, x):
    i = lib.tensor([0, 1])
    y = lib.nn.functional.embedding(i, x)
    i[0] = 1
    y.sum().backward()


def setitem_index(lib, x):
    i = lib.tensor([0])
    a = x * 1
    a[i] = 5.0
    i[0] = 1
    a.sum().backward()


def index_put(lib, x):
    i = lib.tensor([0])
    y = x.index_put((i,), lib.tensor(5.0))
    i[0] = 1
    y.sum().backward()


def take(lib, x):
    i = lib.tensor([0, 4])
    y = x.take(i)
    i[0] = 1
    y.sum().backward()


def nll_loss(lib, x):
    t = lib.tensor([0, 1])
    y = lib.nn.functional.nll_loss(x, t)
    t[0] = 2
    y.backward()


def cross_entropy(lib, x):
    t = lib.tensor([0, 1])
    y = lib.nn.functional.cross_entropy(x, t)
    t[0] = 2
    y.backward()


def mul_by_bool(lib, x):
    m = lib.tensor([True, False, True])
    y = x * m
    m[0] = False
    y.sum().backward()


def take_along_dim_copies(lib, x):
    i = lib.tensor([[0, 1, 0]])
    y = lib.take_along_dim(x, i, 0)
    i[0, 0] = 1  # PyTorch gathers with a broadcast copy: no error, the original indices
    y.sum().backward()


def index_written_after_backward(lib, x):
    i = lib.tensor([0, 1])
    y = x[i]
    y.sum().backward()
    i[0] = 1  # after the backward: nothing to check


def index_without_grad(lib, x):
    i = lib.tensor([0, 1])
    with lib.no_grad():
        x[i]
    i[0] = 1
    x[i].sum().backward()


PROGRAMS = [getitem, getitem_mask, gather, scatter_value, scatter_src, scatter_add, masked_fill,
            masked_select, where, index_select, index_add, index_fill, embedding, setitem_index,
            index_put, take, nll_loss, cross_entropy, mul_by_bool, take_along_dim_copies,
            index_written_after_backward, index_without_grad]


def _pytorch_part(got):
    """An error as PyTorch words it: ember adds which node saved the tensor and who wrote it
    (after a blank line)."""
    if isinstance(got, Raised):
        return Raised(got.type, pytorch_words(got.message))
    return got


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
def test_same_as_pytorch(program, torch):
    assert _pytorch_part(outcome(_run, ember, program)) == outcome(_run, torch, program)


@pytest.mark.parametrize("program", [gather, masked_fill, where], ids=lambda f: f.__name__)
def test_raises_without_pytorch(program):
    got = outcome(_run, ember, program)
    assert got.type == "RuntimeError"
    assert got.message.startswith("one of the variables needed for gradient computation has "
                                  "been modified by an inplace operation: [")
    assert "is at version 1; expected version 0 instead." in got.message


def _written_input(lib, read):
    x = lib.arange(6.0).reshape(2, 3).requires_grad_()
    a = x * 1
    y = read(lib, a)
    a.add_(1)
    y.sum().backward()
    return x.grad.tolist()


READS = {  # which reads save their input (PyTorch's gather, take, masked_select do)
    "gather": lambda lib, a: a.gather(0, lib.tensor([[0, 1, 0]])),
    "take": lambda lib, a: a.take(lib.tensor([0, 2])),
    "masked_select": lambda lib, a: a.masked_select(lib.tensor([True, False, True])),
    "take_along_dim": lambda lib, a: a.take_along_dim(lib.tensor([[0, 1, 0]]), 0),
    "index_select": lambda lib, a: a.index_select(1, lib.tensor([0])),
    "index": lambda lib, a: a[lib.tensor([0])],
    "mask_index": lambda lib, a: a[:, lib.tensor([True, False, True])],
    "scatter": lambda lib, a: a.scatter(0, lib.tensor([[0, 1, 0]]), 1.0),
    "masked_fill": lambda lib, a: a.masked_fill(lib.tensor([True, False, True]), 1.0),
    "where": lambda lib, a: lib.where(lib.tensor([True, False, True]), a, 1.0),
}


@pytest.mark.parametrize("name", sorted(READS))
def test_written_input_as_pytorch(name, torch):
    read = READS[name]
    got = _pytorch_part(outcome(_written_input, ember, read))
    assert got == outcome(_written_input, torch, read)
