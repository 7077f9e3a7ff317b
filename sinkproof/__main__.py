import signal
import sys

from .cli import main

if __name__ == "__main__":
    status = main()
    # the command is over: a Ctrl-C during interpreter teardown (garbage-collector callbacks,
    # worker shutdown) must not print a traceback after the result
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(status)
