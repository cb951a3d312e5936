import sys

from pipeline.cli import main

# Guarded: handler worker processes (spawn) import the main module under another name.
if __name__ == "__main__":
    sys.exit(main())
