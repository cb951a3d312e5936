"""Run a command, exit with its status, and write its peak RSS (KiB, largest process of
its tree that was waited for) to the file named by MAXRSS_FILE."""

import os
import resource
import subprocess
import sys

status = subprocess.call(sys.argv[1:])
with open(os.environ["MAXRSS_FILE"], "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(status)
