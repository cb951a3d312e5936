"""How a missing optional extra is named in messages: one command that works.

The package is installed from a checkout (it is not on a package index under its name), so
the hint is the editable install of the extra, never the package's name with the extra: a
name an index does not hold invites a look-alike package there.
"""

from __future__ import annotations


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` into the checkout's environment."""
    return f"pip install -e '.[{extra}]' (in the extract-pipeline checkout)"


__all__ = ["install_hint"]
