"""``python -m ember run SCRIPT [ARGS...]``: run a PyTorch script on ember.

Inside the script, ``import torch`` (and ``torch.nn.functional``, ``from torch.autograd import
Variable``, ...) resolve to ember's modules of the same names. ``--cuda-on-cpu`` runs a script
written for a GPU on the CPU as it is (every ``cuda`` device is the CPU: see
``ember._device.CUDA_ON_CPU``).
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys

from . import _device
from ._torch_alias import install as install_torch_alias

__all__ = ["cuda_on_cpu", "install_torch_alias", "main"]


def cuda_on_cpu():
    """Make ``cuda`` the CPU in this process (ember is imported already) and in the processes
    it starts (a launcher's ranks, DataLoader workers)."""
    os.environ["EMBER_CUDA_ON_CPU"] = "1"
    _device.CUDA_ON_CPU = True


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ember", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a PyTorch script with `torch` resolving to ember")
    run.add_argument("--cuda-on-cpu", action="store_true",
                     help="run a script written for a GPU on the CPU: 'cuda' devices are the CPU")
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    if ns.cuda_on_cpu:
        cuda_on_cpu()
    install_torch_alias()
    sys.argv = [ns.script, *ns.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(ns.script)))
    try:
        runpy.run_path(ns.script, run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:  # report it as `python SCRIPT` would, then exit 1
        _print_script_error(exc, os.path.abspath(ns.script))
        sys.exit(1)


def _print_script_error(exc, script):
    """Print ``exc`` without the runner's own frames (a SyntaxError has no traceback at all)."""
    tb = exc.__traceback__
    if isinstance(exc, SyntaxError):
        tb = None
    else:
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
            tb = tb.tb_next
    # The default hook (not the traceback module) adds 3.11's "Did you mean" hints.
    sys.excepthook(type(exc), exc.with_traceback(tb), tb)


if __name__ == "__main__":
    main()
