"""What a run reads: URL lines, tables, sitemaps and feeds, as numbered items."""
