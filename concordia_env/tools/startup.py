"""Start-up times: ``python -m concordia_env.tools.startup``.

Runs each command in a fresh subprocess, first with an empty kernel cache (cold: every kernel
it needs is compiled) and then again with the cache that run left (warm), and prints a table:
seconds to exit, and for cold runs the seconds until the first line on stderr (the
"compiling ..." notice). Each command gets its own temporary cache directory
(``CONCORDIA_CACHE_DIR``, and ``NUMBA_CACHE_DIR`` for older versions that only know numba's
variable), deleted afterwards; the user's cache is not touched.

``--pythonpath DIR`` measures the package found in ``DIR`` instead (e.g. an older checkout),
to compare before and after a change on the same machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .bench import machine_description

#: what is timed: label -> command line (run with this Python)
COMMANDS: dict[str, list[str]] = {
    "concordia demo --seed 0": [sys.executable, "-m", "concordia_env.cli", "demo", "--seed", "0"],
    "import concordia_env; new_game(...)":
        [sys.executable, "-c", "import concordia_env; concordia_env.new_game('imperium', 4, seed=0)"],
    "python -m concordia_env --quiet": [sys.executable, "-m", "concordia_env", "--quiet"],
    # library use, as in the README: the env, a reset and a game of steps (the kernels compile on first call)
    "concordia_env.env(...): reset, step": [sys.executable, "-c", (
        "import numpy as np, concordia_env\n"
        "env = concordia_env.env(map_name='italia', num_players=2)\n"
        "env.reset(seed=0)\n"
        "rng = np.random.default_rng(0)\n"
        "for name in env.agent_iter():\n"
        "    obs, reward, terminated, truncated, info = env.last()\n"
        "    env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs['action_mask']))))\n")],
    "concordia --help": [sys.executable, "-m", "concordia_env.cli", "--help"],
}


@dataclass
class Timed:
    """One finished run: wall seconds, exit status, stdout, and stderr lines with the seconds they arrived."""

    seconds: float
    returncode: int | None
    stdout: str
    stderr: list[tuple[float, str]] = field(default_factory=list)

    @property
    def stderr_text(self) -> str:
        return "\n".join(line for _, line in self.stderr)

    def first_stderr(self, contains: str = "") -> float | None:
        """Seconds from the start to the first stderr line containing ``contains`` (None: no such line)."""
        return next((t for t, line in self.stderr if contains in line), None)


def run_timed(cmd: Sequence[str], env: dict[str, str] | None = None, cwd: str | Path | None = None,
              timeout: float = 600.0) -> Timed:
    """Run ``cmd``, timing it and stamping each stderr line with when it arrived (stdout is
    read alongside, so a chatty command cannot block on a full pipe). A run past ``timeout``
    is killed and returns ``returncode`` None."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=cwd, bufsize=1)
    assert proc.stdout is not None and proc.stderr is not None
    err: list[tuple[float, str]] = []
    out: list[str] = []

    def read_stderr() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            err.append((time.perf_counter() - start, line.rstrip("\n")))

    readers = [threading.Thread(target=read_stderr, daemon=True),
               threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)]  # type: ignore[union-attr]
    for t in readers:
        t.start()
    try:
        code: int | None = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = None
    seconds = time.perf_counter() - start
    for t in readers:
        t.join()
    return Timed(seconds, code, "".join(out), err)


def cache_env(cache_dir: Path, pythonpath: str | None = None) -> dict[str, str]:
    """The environment for a measured run: this one, with its kernel cache in ``cache_dir``."""
    env = dict(os.environ)
    env["CONCORDIA_CACHE_DIR"] = env["NUMBA_CACHE_DIR"] = str(cache_dir)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


@dataclass
class Row:
    label: str
    cold: Timed
    warm: list[Timed]

    @property
    def warm_seconds(self) -> float:
        return statistics.median(t.seconds for t in self.warm)


def measure(label: str, cmd: Sequence[str], repeats: int, pythonpath: str | None, workdir: Path) -> Row:
    """Cold run in a fresh cache, then ``repeats`` warm runs with the cache it left."""
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=workdir))
    env = cache_env(cache, pythonpath)
    cold = run_timed(cmd, env, cwd=workdir)
    warm = [run_timed(cmd, env, cwd=workdir) for _ in range(repeats)]
    shutil.rmtree(cache, ignore_errors=True)
    for t in (cold, *warm):
        if t.returncode != 0:
            raise RuntimeError(f"{label!r} failed (exit {t.returncode}):\n{t.stderr_text[-2000:]}")
    return Row(label, cold, warm)


def format_rows(rows: list[Row]) -> str:
    """The table: command, cold seconds, seconds to the first stderr line when cold, warm seconds."""
    width = max(len(r.label) for r in rows)
    lines = [f"{'command':<{width}}  {'cold s':>7}  {'notice s':>8}  {'warm s':>7}"]
    for r in rows:
        notice = r.cold.first_stderr()
        shown = f"{notice:8.2f}" if notice is not None else f"{'-':>8}"
        lines.append(f"{r.label:<{width}}  {r.cold.seconds:7.2f}  {shown}  {r.warm_seconds:7.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m concordia_env.tools.startup",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="warm runs per command; the median is shown")
    parser.add_argument("--only", metavar="TEXT", help="only the commands whose label contains TEXT")
    parser.add_argument("--pythonpath", metavar="DIR", help="measure the concordia_env package found in DIR")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    pythonpath = str(Path(args.pythonpath).resolve()) if args.pythonpath else None
    print(f"machine: {machine_description()}")
    print("cold: empty kernel cache; notice: seconds to the first stderr line (cold); "
          f"warm: median of {args.repeats} runs\n", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="concordia-startup-") as tmp:
        for label, cmd in COMMANDS.items():
            if args.only and args.only not in label:
                continue
            rows.append(measure(label, cmd, args.repeats, pythonpath, Path(tmp)))
    print(format_rows(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
