"""``python -m sinkproof``: the same entry as the ``sinkproof`` script."""

import os
import sys

from .errors import EXIT_INTERRUPTED

if __name__ == "__main__":
    try:
        from .cli import console_main
    except KeyboardInterrupt:  # Ctrl-C while the CLI itself loads: no traceback
        sys.stderr.write("sinkproof: interrupted (before the command started)\n")
        os._exit(EXIT_INTERRUPTED)
    console_main()
