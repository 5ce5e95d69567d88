"""What kind of process this is, asked without importing ``multiprocessing``."""

from __future__ import annotations

import hashlib
import os
import sys


def is_multiprocessing_child() -> bool:
    """Whether ``multiprocessing`` (any start method, so also ``concurrent.futures`` and
    joblib's workers) started this process.

    Importing ``multiprocessing`` to ask costs a script's start-up about 15 ms. It need not
    be: a child it started has it imported already, by the spawn or forkserver bootstrap
    or, forked, inherited from its parent; a process in which it was never imported is
    no child of it.
    """
    module = sys.modules.get("multiprocessing")
    return module is not None and module.parent_process() is not None


# What MPI launchers set in every process they start, rank and size: Open MPI's mpirun
# and the PMI of MPICH's and Intel MPI's Hydra. Read from the environment: importing
# mpi4py's MPI initialises MPI, which is the program's to do. Not Slurm's SLURM_PROCID:
# a batch script asking for four tasks has it too, running one process.
_RANK_VARIABLES = (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"))


def launcher_rank() -> int | None:
    """This process' rank in a parallel job of more than one process, as its launcher
    says (``mpirun -n 4``: 0 to 3); None outside one."""
    for rank_variable, size_variable in _RANK_VARIABLES:
        rank, size = os.environ.get(rank_variable, ""), os.environ.get(size_variable, "")
        if rank.isdigit() and size.isdigit():
            return int(rank) if int(size) > 1 else None
    return None


# What every process of one parallel job shares and other jobs do not: Open MPI's
# launcher address (its job family, host and port), PMIx's namespace.
_JOB_VARIABLES = ("OMPI_MCA_orte_hnp_uri", "PMIX_NAMESPACE")


def launcher_job() -> tuple[str, int] | None:
    """The parallel job this process is a rank of, as a digest every rank computes
    alike, and its rank; None outside a job of more than one process, or under a
    launcher that names no job (MPICH's Hydra)."""
    rank = launcher_rank()
    if rank is None:
        return None
    named = next((f"{name}={os.environ[name]}" for name in _JOB_VARIABLES if os.environ.get(name)), None)
    if named is None:
        return None
    return hashlib.sha256(named.encode()).hexdigest()[:16], rank
