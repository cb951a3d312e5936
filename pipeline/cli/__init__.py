"""The command line: the batch command (:mod:`.command`) and its sub-commands `search`,
`backends`, `mcp` and `merge`."""
