"""Sweeps: a grid of checks, certificates, sink maps, searches or trainings, run on an
executor (Dask by default), cached by job and resumable.

>>> import sinkproof as sp
>>> result = sp.sweep({"kind": "certify", "base": {"p": 1, "eps": "1/20"},
...                    "grid": {"T": [2, 3]}}, executor="serial")
>>> result.summary_line()
'sweep certify: 2 jobs, 2 computed, 0 from cache, 0 failed'
"""

from __future__ import annotations

from .._callable import make_callable
from .grid import MAX_JOBS, Sweep, SweepError, load_sweep, sweep_from_dict
from .jobs import JOB_KINDS, JobKind
from .runner import SweepResult, run_sweep

sweep = run_sweep

__all__ = ["JOB_KINDS", "MAX_JOBS", "JobKind", "Sweep", "SweepError", "SweepResult",
           "load_sweep", "run_sweep", "sweep", "sweep_from_dict"]

# ``sinkproof.sweep`` is both this package and the function: ``sp.sweep(spec)`` works
# whether or not the package was imported first
make_callable(__name__, "run_sweep")
