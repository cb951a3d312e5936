"""The crawler: start pages, links followed in scope and on budget (``crawl``, ``map``).

The pure parts — URL identity, scope, include/exclude rules, trap guards, the frontier and
the skip ledger — know nothing of fetching; :mod:`pipeline.crawl.run` puts them in front of
the batch engine as its scheduler.
"""
