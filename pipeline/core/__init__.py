"""The shared contract every part builds on: records and errors (:mod:`.models`,
:mod:`.errors`), settings, and boundary-aware truncation. Imports nothing else of ours."""
