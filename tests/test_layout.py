"""The package's shape, as the architecture page describes it: no module-level import cycle, no
module over 600 lines and no function over 60, and no package module importing one of the shims
that keep old import paths working for one release."""

from __future__ import annotations

import ast
from pathlib import Path

import concordia_env

PACKAGE = Path(concordia_env.__file__).resolve().parent
#: old import paths kept for one release: each only re-exports from where its code moved
SHIMS = {"render", "menu", "picture", "drawing", "viewer", "jit", "files", "threads", "shorten", "extras",
         "training.train_ppo", "training.ppo_cuda", "training.train_rllib", "training.value_data",
         "training.value_train", "training.evaluation", "training.strength", "server.command", "cuda.newgame"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imported(name: str, path: Path, node: ast.ImportFrom | ast.Import, modules: dict[str, Path]) -> set[str]:
    """The package modules a module-level import statement of module ``name`` loads."""
    if isinstance(node, ast.Import):
        bases = [a.name for a in node.names]
    else:
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        package = ["concordia_env", *package] if node.level else []
        if node.level > 1:
            package = package[:len(package) - (node.level - 1)]
        base = ".".join([*package, *([node.module] if node.module else [])])
        bases = [f"{base}.{a.name}" for a in node.names] + [base]
    found = set()
    for base in bases:
        parts = base.split(".")
        if parts[0] != "concordia_env":
            continue
        while parts and ".".join(parts[1:]) not in modules:
            parts = parts[:-1]
        if len(parts) > 1:
            found.add(".".join(parts[1:]))
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        nodes = [n for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, (ast.Import, ast.ImportFrom))]
        # a module's own packages are imported before it, whatever it imports: not an edge
        ancestors = {".".join(name.split(".")[:k]) for k in range(len(name.split(".")))}
        graph[name] = set().union(*(_imported(name, path, n, modules) for n in nodes)) - {name} - ancestors
    return graph


def test_no_module_level_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            assert state.get(n) != 1, "import cycle: " + " -> ".join([*path[path.index(n):], n])
            if n not in state:
                visit(n, [*path, n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert graph["rules.diplomat"] and "rules.play" not in graph["rules.diplomat"]


def test_modules_and_functions_stay_small():
    too_long = []
    for name, path in _modules().items():
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 600:
            too_long.append(f"module {name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 60:
                too_long.append(f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert not too_long


def test_no_package_module_imports_a_shim():
    graph = _graph()
    modules = _modules()
    assert SHIMS <= set(modules)
    users = {m: sorted(deps & SHIMS) for m, deps in graph.items() if deps & SHIMS and m not in SHIMS}
    assert not users, f"import the new places instead: {users}"
