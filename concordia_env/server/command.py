"""Moved to :mod:`concordia_env.cli.serve`; this name stays for one release."""

from ..cli.serve import add_arguments as add_serve_arguments
from ..cli.serve import cmd_serve

__all__ = ["add_serve_arguments", "cmd_serve"]
