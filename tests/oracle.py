"""Running one piece of code on ember and on PyTorch and comparing what each gives."""
from collections import namedtuple

import numpy as np

import ember

Raised = namedtuple("Raised", ["type", "message"])


def outcome(fn, *args):
    """``fn(*args)``'s result, or ``Raised(type name, message)`` if it raised."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - whatever is raised is compared
        return Raised(type(e).__name__, str(e))


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
