"""Moved to :mod:`concordia_env.cli.serve`; this name stays for one release."""

from .._internal.moved import moved as _moved
from ..cli.serve import add_arguments as add_serve_arguments
from ..cli.serve import cmd_serve

__all__ = ["add_serve_arguments", "cmd_serve"]

_moved("concordia_env.server.command", "concordia_env.cli.serve")
