"""How a message tells the user to install one of the package's optional extras.

The package is installed from its source folder (it is not on the package index), so the hint
names the extra as pip takes it there: ``pip install ".[train]"`` run in the concordia-env
folder. One function, so every "missing package" message says it the same way."""

from __future__ import annotations


def install_hint(extra: str, alternative: str | None = None) -> str:
    """``pip install ".[EXTRA]"`` (in the concordia-env source folder), with ``alternative`` (the
    bare third-party package, say) after it when given."""
    hint = f'pip install ".[{extra}]" in the concordia-env source folder'
    return f"{hint} (or: {alternative})" if alternative else hint
