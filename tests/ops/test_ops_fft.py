"""The ops under ``torch.fft`` (``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``) in the spec table:
values, grad_fns, gradients by finite differences (first and second order), PyTorch's
gradients and forward-mode tangents. Complex inputs are built from real ones, complex outputs
compared as their real and imaginary parts. The functional tests are in ``tests/test_fft.py``."""
from ..opspec import Spec, op_tests


def _ri(L, z):
    """A complex result as real numbers (resolving PyTorch's lazy conjugate first)."""
    return L.view_as_real(z.resolve_conj())


def _c(L, a, b):
    return L.complex(a, b)


SPECS = [
    Spec("fft_complex", lambda L, a, b: _ri(L, L.fft.fft(_c(L, a, b))),
         [((5,), (5,)), ((2, 4), (2, 4))]),
    Spec("fft_real_n", lambda L, a: _ri(L, L.fft.fft(a, n=7, dim=0, norm="ortho")),
         [((4, 2),), ((9, 3),)]),
    Spec("ifft_real", lambda L, a: _ri(L, L.fft.ifft(a, norm="forward")), [((6,),), ((2, 5),)]),
    Spec("ifft_complex", lambda L, a, b: _ri(L, L.fft.ifft(_c(L, a, b), n=4)), [((3, 5), (3, 5))]),
    Spec("rfft", lambda L, a: _ri(L, L.fft.rfft(a)), [((6,),), ((3, 7),)]),
    Spec("rfft_n", lambda L, a: _ri(L, L.fft.rfft(a, n=9, dim=0, norm="ortho")), [((6, 2),)]),
    Spec("irfft", lambda L, a, b: L.fft.irfft(_c(L, a, b)), [((5,), (5,)), ((2, 4), (2, 4))]),
    Spec("irfft_odd", lambda L, a, b: L.fft.irfft(_c(L, a, b), n=7, norm="forward"),
         [((4,), (4,)), ((2, 5), (2, 5))], tol=5),  # (unscaled sums: outputs of ~4, where
    # pocketfft and MKL round float32 a unit apart: 1.2e-7 off an entry of 8e-4)
    Spec("irfft_real", lambda L, a: L.fft.irfft(a, n=5, dim=0, norm="ortho"), [((3, 2),)]),
    Spec("hfft", lambda L, a, b: L.fft.hfft(_c(L, a, b), n=6), [((4,), (4,)), ((3,), (3,))]),
    Spec("ihfft", lambda L, a: _ri(L, L.fft.ihfft(a, norm="ortho")), [((5,),), ((2, 6),)]),
    Spec("fft2", lambda L, a, b: _ri(L, L.fft.fft2(_c(L, a, b), norm="ortho")),
         [((2, 3, 4), (2, 3, 4))]),
    Spec("rfft2", lambda L, a: _ri(L, L.fft.rfft2(a, s=(3, 6))), [((2, 4, 5),)]),
    Spec("irfftn", lambda L, a, b: L.fft.irfftn(_c(L, a, b), s=(3, 5), dim=(0, 2)),
         [((2, 2, 3), (2, 2, 3))]),
    Spec("ifftn_real", lambda L, a: _ri(L, L.fft.ifftn(a, dim=(0, 1))), [((3, 4),)]),
    Spec("hfftn", lambda L, a, b: L.fft.hfftn(_c(L, a, b), s=(2, 4)), [((2, 3), (2, 3))]),
    Spec("ihfft2", lambda L, a: _ri(L, L.fft.ihfft2(a)), [((3, 4),)]),
    Spec("ifft2", lambda L, a, b: _ri(L, L.fft.ifft2(_c(L, a, b), s=(3, 2))),
         [((2, 3, 4), (2, 3, 4))]),
    Spec("fftn_real", lambda L, a: _ri(L, L.fft.fftn(a, s=(4, 3), norm="forward")),
         [((3, 3),), ((2, 3, 2),)]),
    Spec("irfft2", lambda L, a, b: L.fft.irfft2(_c(L, a, b), norm="ortho"),
         [((2, 3), (2, 3)), ((2, 2, 4), (2, 2, 4))]),
    Spec("rfftn", lambda L, a: _ri(L, L.fft.rfftn(a, dim=(0, 2))), [((3, 2, 4),)]),
    Spec("hfft2", lambda L, a, b: L.fft.hfft2(_c(L, a, b), s=(3, 4), norm="forward"),
         [((3, 3), (3, 3))]),
    Spec("ihfftn", lambda L, a: _ri(L, L.fft.ihfftn(a, s=(2, 5))), [((3, 4),)]),
    Spec("fftshift", lambda L, a: L.fft.fftshift(a), [((5,),), ((3, 4),)]),
    Spec("ifftshift_dim", lambda L, a: L.fft.ifftshift(a, dim=(0,)), [((5, 2),)]),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)
