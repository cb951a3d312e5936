"""What rendering needs on this machine: Playwright (extra ``[browser]``) and a Chromium.

The executable is, in order: ``browser_path`` (``--browser-path``, ``PIPELINE_BROWSER_PATH``),
Playwright's own Chromium when ``playwright install chromium`` put it there, then the
distribution's (Debian's ``chromium`` package and the usual names). Whatever is missing is
said in one line, with what to install.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from pipeline.core.errors import PipelineError
from pipeline.core.extras import install_hint
from pipeline.core.slices import RenderSettings

# The real binary first: Debian's /usr/bin/chromium is a shell script that adds its own
# flags and Google API keys from /etc/chromium.d.
KNOWN_PATHS = (
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/lib/chromium-browser/chromium-browser",
    "/snap/bin/chromium",
    "/usr/bin/google-chrome-stable",
    "/usr/bin/google-chrome",
)
INSTALL_HINT = (f"{install_hint('browser')} and a Chromium: the distribution's "
                "(apt-get install chromium) or Playwright's (playwright install chromium)")


def require_playwright() -> None:
    """``config`` error naming the extra when Playwright is not installed."""
    if importlib.util.find_spec("playwright") is None:
        raise PipelineError("config", f"--render needs Playwright: {INSTALL_HINT}")


def playwright_chromium() -> str | None:
    """Where Playwright keeps its own Chromium, when it has been downloaded."""
    root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(
        Path.home() / ".cache" / "ms-playwright")
    if root == "0" or not Path(root).is_dir():
        return None
    for pattern in ("chromium_headless_shell-*/chrome-*/headless_shell",
                    "chromium-*/chrome-linux*/chrome"):
        found = sorted(Path(root).glob(pattern), reverse=True)  # newest revision first
        if found and os.access(found[0], os.X_OK):
            return str(found[0])
    return None


def find_browser(browser_path: str | None) -> str:
    """The Chromium to launch; ``config`` error naming what is missing."""
    if browser_path:
        path = shutil.which(browser_path) or browser_path
        if not (Path(path).is_file() and os.access(path, os.X_OK)):
            raise PipelineError("config", f"browser_path {browser_path!r} is not an "
                                          "executable file")
        return path
    found = playwright_chromium()
    if found:
        return found
    for candidate in KNOWN_PATHS:
        if Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if (on_path := shutil.which(name)) is not None:
            return on_path
    raise PipelineError("config", "--render needs a Chromium and none was found (looked at "
                        "--browser-path, Playwright's browsers and " + ", ".join(KNOWN_PATHS[:3])
                        + f"): {INSTALL_HINT}")


def check_rendering(settings: RenderSettings) -> str:
    """Every check of the render settings, before a run starts; returns the executable."""
    if settings.proxy or settings.trust_env:
        raise PipelineError("config", "--render does not go through --proxy/--trust-env: "
                            "the browser's requests would bypass your proxy")
    require_playwright()
    return find_browser(settings.browser_path)
