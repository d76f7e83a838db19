"""An op's forward mode: the tangents of its outputs from its inputs' tangents, by the kind its
declaration names (``Op.defjvp``; ``jvp="elementwise" | "linear" | "multilinear" |
"transpose"``). Bound as ``Op.jvp``; ``autograd/forward_ad.py``'s interposer calls it.
"""
from __future__ import annotations

from .. import _array_api, _errors, _xp
from .._tensor import Tensor as _Tensor
from ..autograd import grad, grad_mode


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _sum_parts(parts):
    """Tangent contributions (tuples, one entry per output) summed per output."""
    total = None
    for part in parts:
        total = part if total is None else tuple(
            a if b is None else b if a is None else a + b for a, b in zip(total, part))
    return total or ()


def _zero_like(a):
    """The tangent of an input that has none: zeros (0 for a Python number)."""
    if isinstance(a, _Tensor):
        return _Tensor._make(_xp.namespace_of(a._data).zeros_like(a._data), None, False)
    return 0 if isinstance(a, (int, float, complex)) and not isinstance(a, bool) else a


def jvp(self, args, n_in, tangents, results):
    """The outputs' tangents (a tuple; None where zero) for the inputs' ``tangents``;
    None for an op that is not differentiable (comparisons): its results get none."""
    kind = self.jvp_kind
    if self.rules is None:
        return None
    if kind is None:
        raise NotImplementedError(_errors.NO_JVP.format(name=self.name))
    params = args[n_in:]
    if kind == "linear":
        inputs = [t if t is not None else _zero_like(a) for a, t in zip(args, tangents)]
        return _as_tuple(self(*inputs, *params))
    if kind == "multilinear":
        parts = [self(*args[:i], t, *args[i + 1:]) for i, t in enumerate(tangents)
                 if t is not None]
        return _sum_parts(_as_tuple(p) for p in parts)
    xp = _array_api.on_device(results[0].device)
    ans = results[0] if self.nout == 1 else results
    if kind == "transpose":
        return self._transposed_vjp(xp, args, n_in, tangents, results)
    if self.variadic is not None:
        inputs = args[:n_in]
        parts = [self.rules(xp, t, ans, i, inputs, *params) for i, t in enumerate(tangents)
                 if t is not None]
    else:
        rules = self.rules if kind == "elementwise" else self.jvp_rules
        parts = [rule(xp, t, ans, *args) for rule, t in zip(rules, tangents)
                 if t is not None and rule is not None]
    return _sum_parts(_as_tuple(p) for p in parts)

def _transposed_vjp(self, xp, args, n_in, tangents, results):
    """``J·t`` from the gradient in ``v`` of ``Σ_i (J_iᵀ·v)·t_i`` (see ``defjvp``; complex
    numbers: below)."""
    vs = [_Tensor._make(_xp.namespace_of(r._data).zeros_like(r._data), None, True)
          if r.is_floating_point() or r.is_complex() else None for r in results]
    with grad_mode.enable_grad():
        g = vs[0] if self.nout == 1 else tuple(vs)
        ans = results[0] if self.nout == 1 else results
        total = None
        for i, t in enumerate(tangents):
            if t is None:
                continue
            if self.variadic is not None:
                part = self.rules(xp, g, ans, i, args[:n_in], *args[n_in:])
            else:
                part = self.rules[i](xp, g, ans, *args)
            if part is not None:
                if not self.holomorphic and part.is_complex():
                    part = part.conj()  # (its rule gives the adjoint, J^H v)
                term = (part * t).sum()
                total = term if total is None else total + term
        if total is None or not total.requires_grad:
            return (None,) * len(results)
        jt = iter(grad(total, [v for v in vs if v is not None], create_graph=True,
                       allow_unused=True))
    # With a holomorphic op's rule ``total = v·(J t)`` is holomorphic in ``v``, and its
    # gradient in PyTorch's convention the conjugate, conj(J t): conjugated back. (Without this
    # a complex tangent came back conjugated: hfft of a zero-padded spectrum, a reversed
    # tangent.) A rule in PyTorch's convention gives ``total = conj(v)·(J t)``, gradient J t.
    out = (None if v is None else next(jt) for v in vs)
    if not any(isinstance(a, _Tensor) and a.requires_grad for a in (*args[:n_in], *tangents)):
        # J·t needs no graph then; a rule that records a composition on a leaf of its own
        # (``nn.functional._common.composite_vjp``) would leave it requiring grad
        out = (None if t is None else t.detach() for t in tuple(out))
    if not self.holomorphic:
        return tuple(out)
    return tuple(t.conj() if t is not None and t.is_complex() else t for t in out)
