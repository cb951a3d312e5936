"""What agents call: the kernel (`web_search`, `web_extract`), tool definitions, rendering for
a model, and the MCP server."""
