"""Fetch-only baseline: GET every URL and drop the body — the ceiling for the fetch path."""

from __future__ import annotations

from baseline import main

if __name__ == "__main__":
    main(__doc__, lambda body: None)
