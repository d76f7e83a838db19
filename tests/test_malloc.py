"""glibc's malloc thresholds set at import (``ember/_malloc.py``): freed arrays are reused
without page faults; nothing is set where the program chose (``MALLOC_*``), opted out
(``EMBER_MALLOC_DEFAULTS=0``) or runs off Linux. Each case runs in a fresh interpreter: the
settings are process-wide."""
import os
import subprocess
import sys
import textwrap

import pytest

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")


def _run(code, **env):
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith("MALLOC_")
             and k not in ("EMBER_MALLOC_DEFAULTS", "GLIBC_TUNABLES")}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env={**clean, **env}, check=True)
    return out.stdout.strip()


APPLIED = "import ember, ember._malloc as m; print(m.apply_default())"


@linux
def test_applied_at_import_and_again_harmlessly():
    assert _run(APPLIED) == "True"


@linux
@pytest.mark.parametrize("env", [{"EMBER_MALLOC_DEFAULTS": "0"},
                                 {"MALLOC_TRIM_THRESHOLD_": "1000000"},
                                 {"MALLOC_ARENA_MAX": "2"},
                                 {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1000000"}])
def test_left_alone_where_the_program_chose(env):
    assert _run(APPLIED, **env) == "False"


def test_nothing_off_linux(monkeypatch):
    from ember import _malloc
    monkeypatch.setattr(_malloc.sys, "platform", "darwin")
    assert _malloc.apply_default() is False


@linux
def test_freed_arrays_are_reused_without_page_faults():
    """A step's worth of 1 MB activations allocated and freed five times: after the first
    round the memory is the heap's, reused, not unmapped and faulted back in."""
    faults = _run("""
        import resource
        import numpy as np
        import ember
        counts = []
        for _ in range(5):
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            arrays = [np.ones(250_000, np.float32) for _ in range(24)]
            del arrays
            counts.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        print(max(counts[1:]))
    """)
    assert int(faults) < 200  # (glibc's defaults: ~6,000 a round, every round)
