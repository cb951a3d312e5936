"""Where a run's records go: JSONL and Parquet sinks, the output check, merging parts."""
