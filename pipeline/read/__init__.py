"""One reader: the way one URL goes for the library, the tools, the MCP server and the batch
command — policy check → extractor (native or a vendor chain) → full-text cache (with
revalidation) → window → post-extraction stages (:data:`~pipeline.read.stages.STAGES`:
language, compressor). Built in one place (:mod:`pipeline.read.reader`), with one behaviour.
"""
