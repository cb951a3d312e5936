"""Rendering pages in headless Chromium (``--render``), as safe as the fetcher: the
renderer (:mod:`~pipeline.browser.renderer`), the policy proxy all the browser's traffic goes
through (:mod:`~pipeline.browser.proxy`), the wait for a page to settle
(:mod:`~pipeline.browser.settle`), which pages ``auto`` renders
(:mod:`~pipeline.browser.shells`), finding Chromium (:mod:`~pipeline.browser.locate`) and its
processes (:mod:`~pipeline.browser.processes`). Playwright (extra ``[browser]``) is imported
only when a browser starts."""
