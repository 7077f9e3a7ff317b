"""A machine ``SINKPROOF_TEST_SLOWDOWN`` times slower, as every clock sees it: imported at
start-up by every Python process (the command and its worker processes) whose path holds
this folder.  Each clock runs that many times faster than real time — ``time.time`` from
one epoch shared by all the processes (``SINKPROOF_TEST_EPOCH``), so that a deadline one
process sets reads the same in another — and a wall-time budget runs out that many times
sooner while the work itself takes as long as ever."""

import os
import time

_factor = float(os.environ.get("SINKPROOF_TEST_SLOWDOWN", "1"))
if _factor != 1.0:
    _epoch = float(os.environ["SINKPROOF_TEST_EPOCH"])
    _time = time.time

    def _faster(real):
        start = real()
        return lambda: start + _factor * (real() - start)

    time.time = lambda: _epoch + _factor * (_time() - _epoch)
    time.perf_counter = _faster(time.perf_counter)
    time.monotonic = _faster(time.monotonic)
