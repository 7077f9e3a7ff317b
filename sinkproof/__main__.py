import atexit
import os
import signal
import sys

from .errors import EXIT_INTERRUPTED

if __name__ == "__main__":
    try:
        from .cli import main
    except KeyboardInterrupt:  # Ctrl-C while the CLI itself loads: no traceback
        sys.stderr.write("sinkproof: interrupted (before the command started)\n")
        os._exit(EXIT_INTERRUPTED)
    status = main()
    # the command is over: a Ctrl-C during interpreter teardown (garbage-collector callbacks,
    # worker shutdown) must not print a traceback after the result
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if status == EXIT_INTERRUPTED:
        # interrupted: the partial result is out; run the exit handlers (multiprocessing's
        # clean-up of workers and semaphores) and leave without freeing a large heap object
        # by object (seconds after a big sink map)
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)
