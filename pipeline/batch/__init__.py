"""The batch command's run: input items through the engine and the extract stage into a sink,
on one event loop (:mod:`.run`), or as shards (:mod:`.shards`)."""
