"""One rank started by ``python -m ember.distributed.run``: torchrun's environment from MPI's,
then the user's script with ``import torch`` resolving to ember.

``python -m ember.distributed._rank MODE TARGET [ARGS]``: MODE ``script`` (a file), ``module``
(``python -m TARGET``) or ``exec`` (an executable, run as it is). The rank is read from the
variables MPI's process manager sets (MPICH's ``PMI_RANK``, Open MPI's
``OMPI_COMM_WORLD_RANK``), not from MPI itself, which is started later by the script's
``init_process_group``.
"""
from __future__ import annotations

import os
import runpy
import sys

from ember.__main__ import main as ember_main
from ember._torch_alias import install as install_torch_alias
from ember.distributed._mpi import rank_from_environment


def main(argv):
    mode, target, *args = argv
    rank = rank_from_environment()
    os.environ.update(RANK=rank, LOCAL_RANK=rank)
    if mode == "exec":
        os.execvp(target, [target, *args])
    if mode == "script":
        ember_main(["run", target, *args])
        return
    install_torch_alias()
    sys.argv = [target, *args]
    runpy.run_module(target, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
