import sys

from pipeline.cli.command import main

# Guarded, as a main module should be: a process started by multiprocessing may import it
# again under another name.
if __name__ == "__main__":
    sys.exit(main())
