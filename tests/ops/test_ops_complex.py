"""``complex``, ``polar`` and ``conj_physical`` in the op spec table: gradients by finite
differences (first and second order) and against PyTorch, through a real function of both
parts of the result; and ``conj_physical``'s behaviour beside PyTorch's (the op that
``docs/add_an_op.md`` adds)."""
import pytest

import ember
from ember.func import vmap
from tests.opspec import BINARY_SHAPES, Spec, op_tests
from tests.oracle import raised

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch")


def _parts(lib, z):
    """Both parts of ``z`` turned by a fixed complex factor (so each input reaches each)."""
    w = z * (0.6 - 0.8j)
    return lib.stack([w.real, w.imag])


SPECS = [
    Spec("complex", lambda lib, a, b: _parts(lib, lib.complex(a, b)), BINARY_SHAPES),
    Spec("polar", lambda lib, a, b: _parts(lib, lib.polar(a, b)), BINARY_SHAPES,
         domain=(0.2, 2.0)),
    Spec("conj_physical", lambda lib, a, b: _parts(lib, lib.conj_physical(lib.complex(a, b))),
         BINARY_SHAPES),
    Spec("conj_physical_", lambda lib, a, b: _parts(lib, lib.complex(a, b).conj_physical_()),
         BINARY_SHAPES),
]

test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


def _conj_physical_story(lib):
    """What a user sees: values, grad_fn names (the in-place form is PyTorch's overload 1),
    gradients, a real tensor returned as it is, under vmap and in forward mode."""
    x = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    y = lib.conj_physical(x * 2)
    y.backward(lib.tensor([1 + 1j, 1 - 2j]))
    lines = [repr(y), repr(x.grad)]
    x.grad = None
    w = x * 1
    w.conj_physical_()
    w.sum().abs().backward()
    lines += [type(w.grad_fn).__name__, repr(x.grad)]
    r = lib.tensor([1.0, 2.0], requires_grad=True)
    lines.append(str(lib.conj_physical(r) is r))
    lines.append(repr(lib.conj_physical(lib.tensor([1, 2], dtype=lib.int8))))
    lines.append(repr(vmap_of(lib)(lib.conj_physical)(lib.tensor([[1 + 1j], [2 - 2j]]))))
    with lib.autograd.forward_ad.dual_level():
        dual = lib.autograd.forward_ad.make_dual(lib.tensor([1 + 1j]), lib.tensor([2 + 3j]))
        tangent = lib.autograd.forward_ad.unpack_dual(lib.conj_physical(dual)).tangent
    lines.append(repr(tangent))
    return "\n".join(lines)


def vmap_of(lib):
    return vmap if lib is ember else torch.func.vmap


@needs_torch
@pytest.mark.filterwarnings("ignore:There is a performance drop")  # (PyTorch's vmap fallback)
def test_conj_physical_prints_what_pytorch_prints():
    assert _conj_physical_story(ember) == _conj_physical_story(torch)


@needs_torch
@pytest.mark.parametrize("case", ["list", "leaf_in_place"])
def test_conj_physical_refuses_what_pytorch_refuses(case):
    def run(lib):
        if case == "list":
            return lib.conj_physical([1.0])
        return lib.tensor([1.0], requires_grad=True).conj_physical_()
    assert raised(lambda: run(ember)) == raised(lambda: run(torch))
