"""Rendering pages in headless Chromium (``--render``), as safe as the fetcher: the
browser (:mod:`~pipeline.render.browser`), the policy proxy all its traffic goes through
(:mod:`~pipeline.render.proxy`), the wait for a page to settle (:mod:`~pipeline.render.settle`),
which pages ``auto`` renders (:mod:`~pipeline.render.shells`), finding Chromium
(:mod:`~pipeline.render.locate`) and its processes (:mod:`~pipeline.render.processes`).
Playwright (extra ``[browser]``) is imported only when a browser starts."""
