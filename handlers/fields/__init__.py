"""Fields from a page by schema, without a model: the record's ``fields`` and
``fields_meta`` (docs/fields.md).

The HTML handler makes a :class:`FieldReader` on the tree it parsed, before cleaning, only
when its options carry a schema (``HandlerOptions.schema``), and finishes it with the
visible text it made after cleaning: no page is parsed twice, and a run without a schema
pays nothing. Modules: the sources (``declared``: JSON-LD, microdata, RDFa, meta tags,
``itemprop``; ``embedded``: JSON for scripts; ``visible``: the page as shown), values and
the on-page check (``values``), a candidate (``candidates``), choosing and validating
(``reader``).
"""

from __future__ import annotations

from handlers.fields.reader import FieldReader

__all__ = ["FieldReader"]
