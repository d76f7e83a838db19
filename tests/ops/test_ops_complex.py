"""``complex`` and ``polar`` in the op spec table: gradients by finite differences (first and
second order) and against PyTorch, through a real function of both parts of the result."""
from tests.opspec import BINARY_SHAPES, Spec, op_tests


def _parts(lib, z):
    """Both parts of ``z`` turned by a fixed complex factor (so each input reaches each)."""
    w = z * (0.6 - 0.8j)
    return lib.stack([w.real, w.imag])


SPECS = [
    Spec("complex", lambda lib, a, b: _parts(lib, lib.complex(a, b)), BINARY_SHAPES),
    Spec("polar", lambda lib, a, b: _parts(lib, lib.polar(a, b)), BINARY_SHAPES,
         domain=(0.2, 2.0)),
]

test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)
