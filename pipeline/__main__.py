import sys

from pipeline.cli import main

# Guarded: handler worker processes (forkserver or spawn) run the main module under another
# name.
if __name__ == "__main__":
    sys.exit(main())
