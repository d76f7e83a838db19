"""``torch.optim.LBFGS``: limited-memory BFGS, optionally with a strong-Wolfe line search.

PyTorch's LBFGS follows Mark Schmidt's minFunc. ember computes the same iteration in the
same order on NumPy arrays: all parameters flattened into one vector, the two-loop recursion
over the last ``history_size`` curvature pairs, and (with ``line_search_fn="strong_wolfe"``)
a bracketing then zoom phase that picks trial steps by cubic interpolation.

Numbers PyTorch keeps as 0-d tensors (the step ``t`` after a search, ``ro``, ``H_diag``,
``al``) are NumPy scalars of the parameters' dtype while a step runs and 0-d tensors in
``state`` between steps, as in PyTorch; plain Python numbers stay Python numbers.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer, _add_, _wrap, _write

if TYPE_CHECKING:
    from .optimizer import ParamsT

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through ``(x1, f1)`` and ``(x2, f2)`` with slopes ``g1``,
    ``g2``, clipped to ``bounds`` (default: the interval between ``x1`` and ``x2``); the
    middle of the bounds when the cubic has no minimum."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(obj_func, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions

        f(t) <= f + c1 * t * gtd      and      |g(t) . d| <= -c2 * gtd

    (sufficient decrease and curvature), searched for with at most ``max_ls`` evaluations
    of ``obj_func(t) -> (loss, flat gradient)``. First steps grow (by cubic extrapolation,
    up to 10x) until an interval brackets such a point, then the interval shrinks (cubic
    interpolation, kept 10% away from its ends) until one is found or the interval gets
    shorter than ``tolerance_change`` along ``d``.

    Returns ``(loss, flat gradient, t, evaluations)`` at the best point found.
    """
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(t)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    # bracketing: grow t until [t_prev, t] holds a point meeting the conditions
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                          bounds=(min_step, max_step))
        f_prev, g_prev, gtd_prev = f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(t)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:  # out of evaluations while still growing
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket; low_pos is its end with the lower loss
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # a trial too near an end of the bracket is moved 10% inside it, unless the last
        # trial already was near an end but not at or beyond one
        top, bottom = max(bracket), min(bracket)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insuf_progress or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(t)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # not enough decrease: t becomes the high end
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # the minimum lies on the other side of t: the old low end becomes high
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _to_state(value):
    """A step-local value as PyTorch keeps it in ``state``: arrays and NumPy scalars become
    tensors, lists are converted item by item, Python numbers stay."""
    if isinstance(value, (np.ndarray, np.generic)):
        return _wrap(np.asarray(value))
    if isinstance(value, list):
        return [_to_state(v) for v in value]
    return value


def _from_state(value):
    """The inverse of ``_to_state``: tensors to arrays (0-d ones to NumPy scalars)."""
    if isinstance(value, Tensor):
        return value._data[()] if value._data.ndim == 0 else value._data
    if isinstance(value, list):
        return [_from_state(v) for v in value]
    return value


class LBFGS(Optimizer):
    """L-BFGS (PyTorch's port of minFunc). ``step(closure)`` runs up to ``max_iter``
    iterations, the closure re-evaluating the loss (and its gradients) each time.

    Each iteration: ``d = -H g`` with ``H`` the inverse-Hessian estimate from the last
    ``history_size`` pairs ``(s, y)`` of steps and gradient changes (two-loop recursion,
    scaled by ``H_diag = s.y / y.y``; the first direction is ``-g``); then step
    ``p += t * d`` with ``t = lr`` (the very first ``t`` is ``min(1, 1/|g|_1) * lr``), or
    with the ``t`` a strong-Wolfe line search finds. It stops early when the largest
    gradient entry is ``<= tolerance_grad``, when the loss or the step changes by less than
    ``tolerance_change``, or after ``max_eval`` closure evaluations (default
    ``max_iter * 5 // 4``).

    All parameters must be in one group (no per-parameter options). The closure must
    return the loss; ``step`` returns the loss from its first evaluation.

    Example::

        >>> opt = ember.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = loss_fn(model(x), y)
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        """All gradients as one vector (zeros for a parameter without one)."""
        return np.concatenate([np.zeros(p.numel(), p._data.dtype) if p.grad is None
                               else p.grad._data.reshape(-1) for p in self._params])

    def _add_grad(self, step_size, update):
        """``p += step_size * update[p's slice]`` for every parameter."""
        offset = 0
        for p in self._params:
            numel = p.numel()
            _add_(p, update[offset:offset + numel].reshape(p.shape), step_size)
            offset += numel

    def _directional_evaluate(self, closure, x, t, d):
        """The loss and flat gradient at ``x + t * d``; the parameters are put back to
        ``x`` afterwards."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        for p, data in zip(self._params, x):
            _write(p, data)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; ``closure()`` must compute the loss,
        call ``backward`` and return the loss. Returns the loss before the step."""
        if len(self.param_groups) != 1:
            raise AssertionError(
                f"Expected exactly one param_group, but got {len(self.param_groups)}")
        with no_grad():
            return self._step(enable_grad()(closure))

    def _step(self, closure):
        group = self.param_groups[0]
        lr = group["lr"]
        if isinstance(lr, Tensor):
            lr = lr._data.reshape(())[()]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:  # already optimal
            return orig_loss

        d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad, prev_loss = (
            _from_state(state.get(k)) for k in ("d", "t", "old_dirs", "old_stps", "ro",
                                                  "H_diag", "prev_flat_grad", "prev_loss"))
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only where the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = _from_state(state["al"])
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += old_dirs[i] * -al[i]
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += old_stps[i] * (al[i] - be_i)
                state["al"] = _to_state(al)

            prev_flat_grad = flat_grad.copy()
            prev_loss = loss

            # the step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._data.copy() for p in self._params]

                def obj_func(step):
                    return self._directional_evaluate(closure, x_init, step, d)
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:  # re-evaluate, except after the last iteration
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if (n_iter == max_iter or current_evals >= max_eval or opt_cond
                    or np.abs(d * t).max() <= tolerance_change
                    or abs(loss - prev_loss) < tolerance_change):
                break

        for key, value in (("d", d), ("t", t), ("old_dirs", old_dirs), ("old_stps", old_stps),
                           ("ro", ro), ("H_diag", H_diag), ("prev_flat_grad", prev_flat_grad),
                           ("prev_loss", prev_loss)):
            state[key] = _to_state(value)
        return orig_loss
