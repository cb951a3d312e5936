"""One URL to one record with this package's own fetcher and handlers: the native extract
port (:mod:`.native`) and the seam where a handler's CPU-bound work runs (:mod:`.runners`)."""
