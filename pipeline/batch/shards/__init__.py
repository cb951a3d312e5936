"""A run split by host into shards: one shard, N local processes, or Ray tasks."""
