"""Agents from outside the package: ``module:Class`` specs and the ``concordia_env.agents`` entry points.

Any :class:`~concordia_env.agents.base.Agent` subclass plays wherever a built-in does (``concordia
tournament``, ``play``, ``serve``, the strength table), named in one of two ways:

- ``module:Class[:key=value...]``, e.g. ``mypkg.bots:MyBot:depth=3``: the module is imported (it
  must be importable: installed, or on ``PYTHONPATH``) and ``Class(seed=seed, depth=3)`` is built,
  exactly as a built-in's options are passed. ``Class`` may be a dotted path inside the module.
- a name registered by an installed distribution in the entry-point group :data:`ENTRY_POINT_GROUP`
  (``[project.entry-points."concordia_env.agents"] mybot = "mypkg.bots:MyBot"`` in its
  ``pyproject.toml``), used like a built-in: ``mybot:depth=3``. Built-in names win over entry points.

The target must be a concrete ``Agent`` subclass (``ValueError`` otherwise). Importing a module runs
its code, so a spec read back from a file (a game record, a strength config, a results file) is made
with ``allow_import=False``: a ``module:Class`` spec is then refused before anything is imported.
An entry-point name is not refused: it names code the user installed as a Concordia agent.
"""

from __future__ import annotations

import importlib
import inspect
import re
from importlib import metadata

from .base import AGENTS, Agent, parse_spec

#: the entry-point group installed packages register their agents in
ENTRY_POINT_GROUP = "concordia_env.agents"
_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
#: what a ``module:attribute`` name looks like (dotted identifiers on both sides)
MODULE_NAME_RE = re.compile(rf"^{_DOTTED}:{_DOTTED}$")


def module_of(name: str) -> str | None:
    """The module a ``module:Class`` agent name imports (None for a registered name)."""
    return name.partition(":")[0] if ":" in name else None


def entry_points() -> dict[str, metadata.EntryPoint]:
    """The agents installed packages register, by name (:data:`ENTRY_POINT_GROUP`); nothing is imported."""
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def known_agents() -> list[str]:
    """Every registered name a spec can start with: the built-ins, then the entry points (each sorted)."""
    return sorted(AGENTS) + sorted(set(entry_points()) - set(AGENTS))


def check_agent_class(target: object, where: str) -> type[Agent]:
    """``target`` if it is a concrete :class:`Agent` subclass, else a ``ValueError`` naming ``where``."""
    if not (isinstance(target, type) and issubclass(target, Agent)):
        kind = f"the class {target.__name__}" if isinstance(target, type) else f"a {type(target).__name__}"
        raise ValueError(f"{where} is not an Agent subclass (concordia_env.agents.base.Agent): it is {kind}")
    if inspect.isabstract(target):
        raise ValueError(f"{where} is abstract: it does not implement act(observation, action_mask, state=None)")
    return target


def import_agent_class(name: str, allow_import: bool = True) -> type[Agent]:
    """The Agent subclass a ``module:Class`` name names, importing its module; with ``allow_import``
    false a ``ValueError`` before anything is imported (the spec came from a file)."""
    if not MODULE_NAME_RE.match(name):
        raise ValueError(f"{name!r} is neither a known agent nor MODULE:CLASS (dotted Python names); "
                         f"known agents: {', '.join(known_agents())}")
    module_name, _, attribute = name.partition(":")
    if not allow_import:
        raise ValueError(f"{name!r} would import the Python module {module_name!r}, and a spec read from a "
                         f"file never imports a module; name the agent yourself on the command line (or "
                         f"install it as a {ENTRY_POINT_GROUP!r} entry point)")
    try:
        target: object = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import: say so in one line
        raise ValueError(f"cannot import module {module_name!r} for agent {name!r}: "
                         f"{type(exc).__name__}: {exc}") from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(f"module {module_name!r} has no {attribute!r} (agent {name!r})") from None
    return check_agent_class(target, name)


def entry_point_class(name: str) -> type[Agent] | None:
    """The Agent subclass the entry point ``name`` of :data:`ENTRY_POINT_GROUP` names, loaded now;
    None if no installed package registers ``name``."""
    ep = entry_points().get(name)
    if ep is None:
        return None
    where = f"agent {name!r} (entry point {ep.value!r} of group {ENTRY_POINT_GROUP!r})"
    try:
        target = ep.load()
    except Exception as exc:  # noqa: BLE001 - the installed package failed to load: one line
        raise ValueError(f"cannot load {where}: {type(exc).__name__}: {exc}") from None
    return check_agent_class(target, where)


def outside_code(spec: str) -> str | None:
    """What making ``spec`` would run from outside the package and the user's installed agents, as
    a phrase (``"imports the Python module 'os'"``, ``"starts the program 'node bot.js'"``), or None.
    Imports nothing; a malformed spec runs nothing (making it fails anyway)."""
    try:
        name, options = parse_spec(spec)
    except ValueError:
        return None
    module = module_of(name)
    if module is not None:
        return f"imports the Python module {module!r}"
    if name == "bot" and "cmd" in options:
        return f"starts the program {str(options['cmd'])!r}"
    return None
