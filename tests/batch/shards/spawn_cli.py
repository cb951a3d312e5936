"""The real command line, with ``--processes`` starting its shard processes as fresh
interpreters (``spawn``, the start method where fork is not safe) instead of forking."""

from __future__ import annotations

import sys

from pipeline.batch.shards import processes
from pipeline.cli.command import main

if __name__ == "__main__":
    processes.START_METHOD = "spawn"
    sys.exit(main(sys.argv[1:]))
