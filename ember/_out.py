"""PyTorch's ``out=`` keyword, in one place: a function's result written into the tensor the
caller handed in, which is then returned.

Every public function PyTorch gives ``out=`` has a rule in ``ember/_out_rules.py`` (its ATen
name, how ``out``'s dtype may differ from the result's and PyTorch's words when it may not,
how many resize warnings it gives). ``add_out`` wraps each function of a namespace that has
a rule, so the functions themselves never see ``out``; a function that still handles ``out``
itself calls ``write_out`` with its rule's name.

As in PyTorch: no autograd through ``out=`` (an argument that requires grad is refused, save
for the functions PyTorch writes as a composite, whose ``out`` joins the graph through a
copy); an ``out`` of another shape is resized, with PyTorch's deprecation warning when it had
elements (twice when an elementwise op also casts, as PyTorch's TensorIterator resizes its
temporary too); a function returning several tensors takes a tuple of them and returns them
as its named tuple; factory functions (``zeros``, ``arange``, ``randint`` ...) make ``out``'s
dtype when given none.
"""
from __future__ import annotations

import functools
import inspect
import sys
import warnings

from . import _dtypes, _errors, _recording
from ._out_rules import RULES, Rule
from ._tensor import Tensor
from .autograd import anomaly_mode, grad_mode

__all__ = ["write_out", "add_out", "factory_out", "RULES"]


def _rule(name):
    return RULES.get(name) or Rule(aten=name)


def write_out(name, out, result, rule=None):
    """``out`` holding ``result``, as PyTorch's ``name(..., out=out)`` leaves it; returns it.
    ``rule``: how ``out`` is checked (default: ``name``'s in ``RULES``, else an elementwise
    op's)."""
    rule = rule or _rule(name)
    if isinstance(result, tuple):
        return _write_tuple(rule, out, result)
    records = _check_grad(rule, (result,), (out,))
    if rule.first is not None:
        _check_dtype(rule.first, result, out)
    resized = _resize_first(rule, out, result)
    _check_dtype(rule, result, out, resized or out.shape != result.shape)
    return _write(rule, out, result, records, resized)


def _check_grad(rule, results, outs):
    """Whether the write joins the graph (a composite's ``out``); PyTorch's refusal when an
    argument requires grad and the function is not one."""
    if not grad_mode.is_grad_enabled():
        return False
    if any(getattr(r, "requires_grad", False) for r in results) or any(
            o.requires_grad for o in outs):
        if rule.composite:
            return True
        raise RuntimeError(_errors.OUT_AUTOGRAD.format(name=rule.aten))
    return False


def _resize_first(rule, out, result):
    """For the kernels that resize ``out`` before they look at its dtype: resized (with the
    warning) now; whether it was."""
    if not rule.resize_first or tuple(out.shape) == tuple(result.shape):
        return False
    _warn_resize(rule, out, result, 1)
    _recording.unsupported("an out= tensor is resized (its new storage is not recorded yet)")
    out._data = result._data.astype(out._data.dtype)  # resized (whatever the check says next)
    return True


def _check_dtype(rule, result, out, other_shape=False):
    src, dst = result.dtype, out.dtype
    problem = rule.refuses(src, dst)
    if problem is not None:
        error, message = problem
        if other_shape and rule.resized_message:
            error, message = RuntimeError, rule.resized_message
        raise error(_words(message, rule, src, dst))


def _write(rule, out, result, records=False, resized=False):
    data, target = result._data, out._data
    if not resized and data.shape != target.shape:
        times = 2 if rule.double_warning and result.dtype != out.dtype else 1
        _warn_resize(rule, out, result, times)
        resized = True
    if resized:  # (new storage, as resizing gives)
        _recording.unsupported("an out= tensor is resized (its new storage is not recorded "
                               "yet)")
    if records:  # a composite's out: the copy is recorded, as PyTorch's copy_ is
        if resized:
            out._data = data.astype(target.dtype)
        out.copy_(result)
        return out
    if resized:
        out._data = data.astype(target.dtype)
    else:
        _recording.opaque(_copy_into, target, data)  # (compiled mode records the write)
    anomaly_mode.note_write(out, rule.aten + "(out=...)")
    if _recording.state.recorder is not None:
        _recording.state.recorder.wrote(out)
    return out


def _copy_into(target, data):
    target[...] = data


def _warn_resize(rule, out, result, times):
    if not out._data.size or rule.warning is None:
        return
    old, new = list(out.shape), list(result.shape)
    message = rule.warning.format(old=old, new=new, old_numel=out._data.size,
                                  numel=result._data.size, new_tuple=tuple(new))
    for _ in range(times):
        warnings.warn(message, UserWarning, stacklevel=_user_level())


def _out_tensor(label, out):
    """PyTorch's TypeError for an ``out`` that is not a tensor."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{label}(): argument 'out' must be Tensor, not {type(out).__name__}")


def _write_tuple(rule, out, result):
    """A several-tensor result into the tuple ``out``: every part checked before any is
    written (an index part must be int64 exactly), then the named tuple of ``out``'s parts."""
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{rule.aten}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != len(result):
        raise TypeError(f"expected tuple of {len(result)} elements but got {len(out)}")
    records = _check_grad(rule, result, out)
    for part, target in zip(result, out):  # (no several-tensor function has a ``first``)
        _check_dtype(rule.index_rule if part.dtype is _dtypes.int64 and part is not result[0]
                     else rule, part, target)
    written = [_write(rule, target, part, records) for part, target in zip(result, out)]
    return type(result)(written) if type(result) is not tuple else tuple(written)


def _words(message, rule, src, dst):
    return message.format(result=src._word, out=dst._word, result_c=_cpp_name(src),
                          out_c=_cpp_name(dst), name=rule.aten,
                          result_legacy="torch." + src._legacy, out_legacy=_legacy(dst))


def _legacy(dtype):
    return "CPUBoolType" if dtype is _dtypes.bool else "torch." + dtype._legacy


# --------------------------------------------------------------------------- the wrappers


def with_out(fn, rule, label):
    """``fn`` taking PyTorch's ``out=`` by ``rule`` (``fn`` itself is called without it);
    ``label``: its name in the argument parser's errors ('linalg_inv')."""
    if rule.factory:
        def function(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            _out_tensor(label, out)
            dtype = kwargs.pop("dtype", None)
            return factory_out(rule, out, dtype, lambda dt: fn(*args, dtype=dt, **kwargs))
    elif rule.passes_dtype:  # the reductions that compute in out's dtype (sum, cumsum ...)
        def function(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            _out_tensor(label, out)
            if rule.refuses(out.dtype, out.dtype):  # a dtype they cannot compute in
                if rule.resize_first:  # (refused after the resize)
                    _resize_first(rule, out, fn(*args, **kwargs))
                _check_dtype(rule, out, out)
            given = kwargs.get("dtype")
            if given is not None and given != out.dtype:
                raise RuntimeError(_words(rule.dtype_message, rule, given, out.dtype))
            kwargs["dtype"] = out.dtype
            return write_out(None, out, fn(*args, **kwargs), rule)
    else:
        def function(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            if rule.grad_of_inputs:
                _out_tensor(label, out)
                _check_grad(rule, args, (out,))
            result = fn(*args, **kwargs)
            if not isinstance(result, tuple):
                _out_tensor(label, out)
            return write_out(None, out, result, rule)
    functools.update_wrapper(function, fn)
    function.__signature__ = _signature_with_out(fn)
    return function


def _signature_with_out(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if "out" in sig.parameters:
        return sig
    at = next((k for k, p in enumerate(params) if p.kind == p.VAR_KEYWORD), len(params))
    out = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    return sig.replace(parameters=params[:at] + [out] + params[at:])


def add_out(namespace, prefix=""):
    """Give each function of ``namespace`` (a module's globals) that has a rule under
    ``prefix + name`` PyTorch's ``out=``."""
    for key, rule in RULES.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix):]
        fn = namespace.get(name)
        if fn is None or "." in name:
            continue
        namespace[name] = with_out(fn, rule, key.replace(".", "_"))


def factory_out(rule, out, dtype, make):
    """``make(dtype)`` written into ``out``: a factory function's ``out=``, whose dtype must be
    ``out``'s when it is given (``arange`` alone warns when it resizes, in words of its own).
    ``rule``: a Rule, or the name of one."""
    rule = _rule(rule) if isinstance(rule, str) else rule
    if dtype is not None and dtype != out.dtype:
        raise RuntimeError(_errors.OUT_DTYPE.format(dtype=dtype._word, out=out.dtype._word))
    return write_out(None, out, make(out.dtype), rule)


def _user_level():
    """The ``stacklevel`` that makes a warning raised in ``write_out`` name the user's line."""
    frame, level = sys._getframe(1), 1  # (the frame walk of anomaly_mode.note_write)
    while frame is not None and frame.f_code.co_filename.startswith(anomaly_mode._PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _cpp_name(dtype):
    """The C++ name of ``dtype`` in PyTorch's out= dtype errors ('long int', 'float')."""
    word = dtype._word
    return {"Long": "long int", "Short": "short int", "Char": "signed char",
            "Byte": "unsigned char", "Half": "c10::Half"}.get(word, word.lower())
