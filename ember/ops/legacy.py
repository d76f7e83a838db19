"""PyTorch's older spellings, kept because real code still calls them: ``torch.svd`` and
``torch.qr`` (``some=`` rather than ``full_matrices=``/``mode=``; ``svd`` returns ``V``, not
``Vh``), ``torch.pinverse``, the NumPy-style splits ``hsplit``/``vsplit``/``dsplit``,
``Tensor.fill_diagonal_``, and ``quantile``/``nanquantile``.

Each is PyTorch's composite of the modern op, so results, ``grad_fn`` (``LinalgSvdBackward0``,
``TransposeBackward0`` for ``V``, ``SliceBackward0`` for split pieces, ``CopySlices`` after
``fill_diagonal_``) and gradients are the modern op's. Each function declares where it goes
(``ops/_surface.py``).
"""
from __future__ import annotations

import warnings

from .. import _creation, _dtypes
from .._creation import zeros
from .._tensor import Tensor
from . import linalg as _linalg
from . import shape as _shape
from .linalg.products import linalg_multi_dot
from .operands import _check_tensor
from .reduction import return_type
from .registry import public

_SvdResult = return_type("svd", ("U", "S", "V"))
_QrResult = return_type("qr", ("Q", "R"))
_qr_warned = False


@public
def svd(input, some=True, compute_uv=True, *, out=None):
    """``U, S, V`` with ``input = U diag(S) V^H`` (``V``, where ``linalg.svd`` gives ``Vh``);
    ``some``: the reduced factors. Without ``compute_uv``, ``U`` and ``V`` are zeros of the
    full shapes, as PyTorch returns them."""
    _check_tensor("svd", input)
    if out is not None:
        raise TypeError("svd(): out= is not supported by ember")
    if compute_uv:
        U, S, Vh = _linalg.linalg_svd(input, full_matrices=not some)
        return _SvdResult((U, S, Vh.mH))
    m, n = input.shape[-2:]
    batch = tuple(input.shape[:-2])
    S = _linalg.linalg_svdvals(input)
    return _SvdResult((zeros(*batch, m, m, dtype=input.dtype),
                       S, zeros(*batch, n, n, dtype=input.dtype)))


@public
def qr(input, some=True, *, out=None):
    """``linalg.qr(input, 'reduced' if some else 'complete')``, with PyTorch's deprecation
    warning (once per process)."""
    global _qr_warned
    _check_tensor("qr", input)
    if out is not None:
        raise TypeError("qr(): out= is not supported by ember")
    if not _qr_warned:
        _qr_warned = True
        warnings.warn(
            "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a "
            "future PyTorch release.\nThe boolean parameter 'some' has been replaced with a "
            "string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\n"
            "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')", UserWarning,
            stacklevel=2)
    Q, R = _linalg.linalg_qr(input, "reduced" if some else "complete")
    return _QrResult((Q, R))


@public
def pinverse(input, rcond=1e-15):
    """The pseudo-inverse: ``linalg.pinv(input, rcond)``."""
    _check_tensor("pinverse", input)
    return _linalg.linalg_pinv(input, rcond)


def _numpy_split(name, dim_of, least):
    def split(input, indices_or_sections):
        _check_tensor(name, input)
        if input.ndim < least:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {least} "
                               f"dimension, but got a tensor with {input.ndim} dimensions!")
        dim = dim_of(input)
        if isinstance(indices_or_sections, bool) or not isinstance(
                indices_or_sections, (int, list, tuple)):
            got = type(indices_or_sections).__name__
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got (Tensor, {got}), "
                "but expected one of:\n * (Tensor input, int sections)\n      didn't match "
                f"because some of the arguments have invalid types: (Tensor, !{got}!)\n"
                " * (Tensor input, tuple of ints indices)\n      didn't match because some "
                f"of the arguments have invalid types: (Tensor, !{got}!)\n")
        if isinstance(indices_or_sections, int):
            size = input.shape[dim]
            if indices_or_sections == 0 or size % indices_or_sections != 0:
                raise RuntimeError(
                    f"torch.{name} attempted to split along dimension {dim}, but the size of "
                    f"the dimension {size} is not divisible by the split_size "
                    f"{indices_or_sections}!")
        return _shape.tensor_split(input, indices_or_sections, dim)
    split.__name__ = split.__qualname__ = name
    where = "1 (0 of a 1-D tensor)" if least == 1 else str(least - 1)
    split.__doc__ = f"``tensor_split`` along dim {where}; an int must divide that dim exactly."
    return public(split)


hsplit = _numpy_split("hsplit", lambda t: 0 if t.ndim == 1 else 1, 1)
vsplit = _numpy_split("vsplit", lambda t: 0, 2)
dsplit = _numpy_split("dsplit", lambda t: 2, 3)


@public(function=False)
def fill_diagonal_(self, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal (all indices equal) in place; a tall matrix
    with ``wrap`` starts again every ``ncols + 1`` rows, as NumPy's ``fill_diagonal``."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    # (the write goes through a diagonal view: a leaf's error is "a view of a leaf ...")
    if self.ndim > 2:
        diag = self
        while diag.ndim > 1:  # the diagonal of the first two dims (it becomes the last)
            diag = _linalg.diagonal(diag, 0, 0, 1)
        diag.fill_(fill_value)
        return self
    rows, cols = self.shape
    starts = range(0, rows, cols + 1) if wrap else (0,)
    for start in starts:
        _linalg.diagonal(self[start:], 0, 0, 1).fill_(fill_value)
    return self


# --------------------------------------------------------------------------- quantile


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    """PyTorch's quantile: sort (the reduced dim moved last), ranks ``q * (n - 1)`` (NaN
    slices rank last, or for ``nanquantile`` the ranks count non-NaN values only), then gather
    and interpolate in place, so the grad_fn chain is PyTorch's (``SqueezeBackward4`` <-
    ``LerpBackward1`` <- ``GatherBackward0`` <- ``ViewBackward0`` <- ``SortBackward0``)."""
    _check_tensor(name, input)  # (PyTorch's messages below say quantile() for both)
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if input.dtype not in (_dtypes.float32, _dtypes.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if q.numel() and not bool(((q >= 0) & (q <= 1)).all()):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {float(q)}")
        q = _creation.scalar_tensor(q, dtype=input.dtype)
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if dim is None:
        sorted_ = input.flatten().sort().values
        out_shape = [1] * input.ndim if keepdim else []
    else:
        d = dim + input.ndim if dim < 0 else dim
        if not 0 <= d < max(input.ndim, 1):
            input.size(dim)  # PyTorch's IndexError for a dim out of range
        moved = input if d == input.ndim - 1 else input.unsqueeze(-1).transpose(d, -1)
        sorted_ = moved.sort().values
        out_shape = list(input.shape)
        if keepdim:
            out_shape[d] = 1
        else:
            del out_shape[d]
    n = sorted_.shape[-1]
    sorted_ = sorted_.view(*out_shape, n)
    if ignore_nan:  # ranks among the non-NaN values; an all-NaN slice ranks 0 (NaN)
        ranks = q * (sorted_.isnan().logical_not().sum(-1, keepdim=True) - 1)
        ranks.masked_fill_(ranks < 0, 0)
    else:  # a slice holding NaN ranks last: its quantile is NaN (sorted last)
        scaled, has_nan = _shape.broadcast_tensors(q * (n - 1),
                                                   sorted_.isnan().any(-1, keepdim=True))
        ranks = scaled.masked_fill(has_nan, n - 1)
    if interpolation == "lower":
        ranks.floor_()
    elif interpolation == "higher":
        ranks.ceil_()
    elif interpolation == "nearest":
        ranks.round_()
    below = ranks.long()
    values = sorted_.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = _creation.full_like(ranks, 0.5) if interpolation == "midpoint" \
            else ranks - below
        values.lerp_(sorted_.gather(-1, ranks.ceil_().long()), weights)
    if q.ndim == 0:
        return values.squeeze_(-1)
    return values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


@public
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles of ``input`` (over ``dim``, or all of it), interpolating between
    the two nearest values as ``interpolation`` says; a NaN in a slice makes its quantile NaN.
    A 1-D ``q`` adds a first dim of its length."""
    if out is not None:
        raise TypeError("quantile(): out= is not supported by ember")
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


@public
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """``quantile`` ignoring NaN values (NaN only where a slice is all NaN)."""
    if out is not None:
        raise TypeError("nanquantile(): out= is not supported by ember")
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# --------------------------------------------------------------------------- chain_matmul
_chain_warned = False


@public(method=False)
def chain_matmul(*matrices, out=None):
    """The product of 2-D matrices: ``linalg.multi_dot`` (one matrix: a copy), with
    PyTorch's deprecation warning (once per process)."""
    global _chain_warned
    if out is not None:
        raise TypeError("chain_matmul(): out= is not supported by ember")
    if not _chain_warned:
        _chain_warned = True
        warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                      "release. Use torch.linalg.multi_dot instead, which accepts a list of two "
                      "or more tensors rather than multiple parameters.", UserWarning,
                      stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        _check_tensor("chain_matmul", matrices[0])
        return matrices[0].clone()
    return linalg_multi_dot(matrices)
