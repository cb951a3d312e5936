"""Peak memory of reading a CSV input with one huge quoted field (default 400 MB), ours
(``--input-format csv``) against the standard library's ``csv.reader`` on the same file (with
and without its field limit), each in a fresh interpreter, its imports done before the
measure: prints the peak RSS each grew by while reading.

    python benchmarks/table_memory.py [--mb 400]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (what is imported first, what is measured)
READERS = {
    "ours (pipeline.batch.input.tables)": ("from pipeline.batch.input.tables import read_input", """
with open(path, "rb") as handle:
    rows = [item.url for item in read_input(handle, "csv")]
"""),
    "csv.reader, its 128 KiB field limit (how tables were read before)": ("import csv, io", """
rows = []
with open(path, "rb") as handle:
    reader = csv.reader(io.TextIOWrapper(handle, encoding="utf-8", newline=""))
    while True:
        try:
            rows.append(next(reader))
        except StopIteration:
            break
        except csv.Error:
            rows.append("error")
"""),
    "csv.reader, no field limit": ("import csv, io", """
csv.field_size_limit(1 << 31)
with open(path, "rb") as handle:
    rows = list(csv.reader(io.TextIOWrapper(handle, encoding="utf-8", newline="")))
"""),
}
MEASURE = """
import resource, sys
{setup}
path = sys.argv[1]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
{reader}
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) >> 10, len(rows))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=400, help="size of the huge field in MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table.csv"
        with path.open("wb") as handle:
            handle.write(b'url,text\nhttps://a.test/1,"')
            for _ in range(args.mb):
                handle.write(b"y" * (1 << 20))
            handle.write(b'"\nhttps://a.test/2,after\n')
        print(f"{path.stat().st_size / 1e6:.0f} MB file, one field of {args.mb} MiB; "
              f"load average {os.getloadavg()[0]:.1f}")
        for name, (setup, reader) in READERS.items():
            code = MEASURE.format(setup=setup, reader=reader)
            done = subprocess.run([sys.executable, "-c", code,
                                   str(path)], capture_output=True, text=True, cwd=ROOT,
                                  check=True)
            grown, rows = done.stdout.split()
            print(f"{name}: peak RSS +{grown} MiB, {rows} rows (header included for csv)")


if __name__ == "__main__":
    main()
