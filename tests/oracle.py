"""Running one piece of code on ember and on PyTorch and comparing what each gives.

The suite's one home for the oracle helpers; test files import these instead of writing their
own. Two kinds:

- errors: ``raised`` (what a call raised, or None), ``error_of`` (what it raised; the test fails
  if it returned), ``outcome`` (its result, or what it raised), ``same_error`` (ember and PyTorch
  raise the same type and message), ``pytorch_words`` (a message without ember's added
  explanation). What was raised is a ``Raised(type, message)`` record, a named tuple, so it
  compares equal to a plain ``(type name, message)`` pair.
- values: ``assert_same_tensor`` (one tensor against another: dtype, shape, values),
  ``assert_same`` (nested results, tensors compared as float arrays) and ``agree`` (run once on
  each library, compare results or errors).

A file may bind its own short name to one of these (``_err = partial(raised, exact_type=True)``)
or describe a result its own way before comparing (shape and dtype only, say), but the
capturing and the comparing live here.
"""
import warnings
from collections import namedtuple

import numpy as np

import ember

Raised = namedtuple("Raised", ["type", "message"])

EMBER_NOTE = "\n\nember: "  # where ember's explanation starts, after PyTorch's own words


def _record(exc, exact_type):
    return Raised(type(exc) if exact_type else type(exc).__name__, str(exc))


def _call(fn, args, quiet):
    if not quiet:
        return fn(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def raised(fn, *args, quiet=False, exact_type=False):
    """What ``fn(*args)`` raised as ``Raised(type name, message)``, or None if it returned.

    ``quiet``: warnings during the call are ignored. ``exact_type``: ``Raised.type`` is the
    exception class itself, so a comparison tells apart two classes of the same name.
    """
    try:
        _call(fn, args, quiet)
    except Exception as e:  # noqa: BLE001 - whatever is raised is compared
        return _record(e, exact_type)
    return None


def error_of(fn, *args, quiet=False, exact_type=False):
    """Like ``raised``, but ``fn(*args)`` must raise: the test fails if it returns."""
    got = raised(fn, *args, quiet=quiet, exact_type=exact_type)
    assert got is not None, f"{getattr(fn, '__name__', fn)} raised nothing"
    return got


def outcome(fn, *args, quiet=False, exact_type=False):
    """``fn(*args)``'s result, or ``Raised(type name, message)`` if it raised.

    ``quiet`` and ``exact_type`` as for ``raised``.
    """
    try:
        return _call(fn, args, quiet)
    except Exception as e:  # noqa: BLE001 - whatever is raised is compared
        return _record(e, exact_type)


def pytorch_words(message):
    """An error message as PyTorch words it: ember may add a paragraph starting ``ember:``
    (which op wrote a tensor, and where; checked in autograd/test_anomaly.py)."""
    return message.split(EMBER_NOTE)[0]


def same_error(run, torch, *, explained=False):
    """``run(ember)`` and ``run(torch)`` both raise, the same exception type (by name) and the
    same message. Returns ember's ``Raised``.

    ``torch``: None when PyTorch is not installed; then only ember must raise.
    ``explained``: ember's message may go on after PyTorch's with its own explanation
    (``pytorch_words``); only PyTorch's part is compared and returned.
    """
    got = error_of(run, ember)
    if explained:
        got = Raised(got.type, pytorch_words(got.message))
    if torch is not None:
        want = error_of(run, torch)
        assert got == want, f"ember raised {got!r}, PyTorch {want!r}"
    return got


def _values(t):
    """A NumPy copy of a tensor (either library) with its conjugation applied."""
    return np.asarray(t.detach().resolve_conj().cpu().numpy())


def assert_same_tensor(got, want, *, rtol=0.0, atol=0.0, conj=False, signed_zeros=False):
    """Tensor ``got`` equals tensor ``want`` (either library): the dtype's name, the shape and
    the values, NaNs equal to NaNs.

    ``rtol``, ``atol``: tolerances of ``np.testing.assert_allclose``; both 0 (the default):
    exactly equal values. ``conj``: the conjugate bits agree too. ``signed_zeros``: so do the
    signs of zeros (the sign of a NaN is noise and is not compared).
    """
    assert str(got.dtype) == str(want.dtype), f"dtype {got.dtype} != {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"shape {tuple(got.shape)} != " \
                                                  f"{tuple(want.shape)}"
    if conj:
        assert got.is_conj() == want.is_conj(), "conjugate bits differ"
    g, w = _values(got), _values(want)
    if rtol == 0 and atol == 0:
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    if signed_zeros:
        np.testing.assert_array_equal(np.signbit(g) & ~np.isnan(g), np.signbit(w) & ~np.isnan(w))


def assert_same(got, want, path="result"):
    """Equal structures, where tensors (of either library) are compared as float arrays."""
    if hasattr(want, "detach") and hasattr(got, "detach"):
        got = np.asarray(got.detach().numpy(), dtype=np.float64)
        want = np.asarray(want.detach().numpy(), dtype=np.float64)
        assert got.shape == want.shape, f"{path}: shape {got.shape} != {want.shape}"
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8, err_msg=path)
    elif isinstance(want, (tuple, list)) and not isinstance(want, Raised):
        assert type(got) is type(want) and len(got) == len(want), f"{path}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{path}[{i}]")
    elif isinstance(want, dict):
        assert got.keys() == want.keys(), f"{path}: {got!r} != {want!r}"
        for k in want:
            assert_same(got[k], want[k], f"{path}[{k!r}]")
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def agree(run, torch, raises=None):
    """``run(lib)`` gives the same on ember and on PyTorch (values, names, error texts).

    ``raises``: the exception type both must raise; by default neither may raise. Returns
    ember's result (the ``Raised`` record for errors) for further checks.
    """
    got = outcome(run, ember)
    if raises is None:
        assert not isinstance(got, Raised), f"ember raised {got}"
    else:
        assert isinstance(got, Raised) and got.type == raises.__name__, f"ember gave {got!r}"
    assert_same(got, outcome(run, torch))
    return got
