"""``set_num_threads`` / ``get_num_threads`` / ``set_num_interop_threads`` /
``get_num_interop_threads`` (``ember/_threads.py``): PyTorch's errors and defaults, NumPy's
BLAS pools resized through threadpoolctl, and the warning without it."""
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember
from ember import _threads

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def restore():
    """Put the thread counts (ember's record and the BLAS pools) back after a test."""
    tpc = _threads._threadpoolctl()
    saved = dict(_threads._state)
    limits = tpc.threadpool_limits(limits=None) if tpc else None  # records the current ones
    yield
    _threads._state.update(saved)
    if limits is not None:
        limits.restore_original_limits()


def _script(code, env=None, lib="ember"):
    """Run ``code`` (with ``L`` the library) in a fresh interpreter; its stdout lines."""
    full = {k: v for k, v in os.environ.items()
            if k not in _threads._BLAS_ENV}
    full.update(env or {})
    full["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", f"import {lib} as L\n{code}"], env=full,
                         capture_output=True, text=True, cwd=ROOT, check=True)
    return out.stdout.split()


BAD = [0, -1, 1.5, "2", True, None]


@pytest.mark.parametrize("value", BAD, ids=repr)
@pytest.mark.parametrize("name", ["set_num_threads", "set_num_interop_threads"])
def test_errors_match_torch(torch, name, value):
    messages = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as err:
            getattr(lib, name)(value)
        messages.append(str(err.value).splitlines()[0])
    assert messages[0] == messages[1]


def test_set_get_resizes_the_blas_pools(restore):
    tpc = pytest.importorskip("threadpoolctl")
    for n in (1, 2, 1):
        ember.set_num_threads(n)
        assert ember.get_num_threads() == n
        blas = [p for p in tpc.threadpool_info() if p["user_api"] == "blas"]
        assert blas and all(p["num_threads"] == n for p in blas)
    ember.set_num_threads(np.int64(2))  # NumPy's integers are integers
    assert ember.get_num_threads() == 2


def test_without_threadpoolctl_records_and_warns_once(restore, monkeypatch):
    monkeypatch.setattr(_threads, "_threadpoolctl", lambda: None)
    monkeypatch.setitem(_threads._state, "warned", False)
    with pytest.warns(RuntimeWarning, match="threadpoolctl is not installed"):
        ember.set_num_threads(3)
    assert ember.get_num_threads() == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.set_num_threads(2)  # once is enough
    assert ember.get_num_threads() == 2


def test_interop_threads_are_set_once_as_in_torch(torch):
    code = """
print(L.get_num_interop_threads() > 0)
L.set_num_interop_threads(1)
print(L.get_num_interop_threads())
try:
    L.set_num_interop_threads(2)
except RuntimeError as e:
    print(repr(str(e)))
print(L.get_num_interop_threads())
"""
    assert _script(code) == _script(code, lib="torch")


@pytest.mark.parametrize("env", [{"OMP_NUM_THREADS": "1"}, {"MKL_NUM_THREADS": "1"},
                                 {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "2"}])
def test_environment_sets_the_default_as_in_torch(torch, env):
    code = "print(L.get_num_threads())"
    assert _script(code, env) == _script(code, env, lib="torch")


def test_default_never_exceeds_the_usable_cpus(monkeypatch):
    usable = len(_threads._usable_cpus())
    for env in ({}, {"OMP_NUM_THREADS": "100000"}, {"OMP_NUM_THREADS": "zero"}):
        for var in _threads._ENV:
            monkeypatch.delenv(var, raising=False)
        for var, value in env.items():
            monkeypatch.setenv(var, value)
        assert 1 <= _threads.default_num_threads() <= usable
    monkeypatch.setattr(_threads, "_usable_cpus", lambda: [0, 1, 2, 3])
    monkeypatch.setattr(_threads, "_physical_cores", lambda cpus: 2)  # SMT: 2 per core
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert _threads.default_num_threads() == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert _threads.default_num_threads() == 3


def test_import_lowers_only_an_unsized_larger_pool(monkeypatch):
    calls = []

    class FakeTpc:
        @staticmethod
        def threadpool_limits(limits, user_api=None):
            calls.append((limits, user_api))

    monkeypatch.setattr(_threads, "_threadpoolctl", lambda: FakeTpc)
    monkeypatch.setattr(_threads, "_usable_cpus", lambda: [0, 1, 2, 3])
    monkeypatch.setattr(_threads, "_physical_cores", lambda cpus: 2)
    for var in _threads._BLAS_ENV:
        monkeypatch.delenv(var, raising=False)
    _threads.apply_default()
    assert calls == [(2, "blas")]
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")  # the user sized it: left alone
    _threads.apply_default()
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    monkeypatch.setattr(_threads, "_physical_cores", lambda cpus: 4)  # nothing to lower
    _threads.apply_default()
    assert calls == [(2, "blas")]


def test_physical_cores_counts_each_core_once():
    cpus = _threads._usable_cpus()
    assert 1 <= _threads._physical_cores(cpus) <= len(cpus)
    assert _threads._physical_cores([10 ** 6]) == 1  # no topology: the CPUs themselves


def test_fresh_import_pool_within_usable_cpus():
    pytest.importorskip("threadpoolctl")
    code = ("import threadpoolctl, os\n"
            "print(max(p['num_threads'] for p in threadpoolctl.threadpool_info() "
            "if p['user_api'] == 'blas') <= len(os.sched_getaffinity(0)))")
    assert _script(code) == ["True"]
