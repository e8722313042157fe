"""The TD loop at turn boundaries: self-play, positions, training, gate (see the package doc).

    python -m concordia_env.training.turn_td --map italia --players 2 --rounds 4 \\
        --games 400 --workers 2 --out runs/turn_italia

A run folder holds ``settings.json`` (the run's fixed settings: ``--resume`` refuses others),
``round_NN/selfplay.json`` and ``round_NN/games/`` (the self-play tournament and its records),
``round_NN/net.npz``/``.json`` (the network trained that round), ``round_NN/gate_*.json``
(its gate tournaments) and ``curves.json`` (per round: positions, losses, the network's
agreement with and regret against the agent that played (:mod:`.telemetry`), gate win rates
with intervals, seconds; at the end the CPU-hours). Stopped (Ctrl-C, SIGTERM, a crash), the same command with
``--resume`` continues with the first step whose output is missing or unfinished.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from concordia_env._internal.files import write_json_atomic
from concordia_env.agents.az import released_net
from concordia_env.agents.value_net import ValueNet
from concordia_env.arena.pools import Interrupted, sigterm_as_ctrl_c
from concordia_env.arena.run_folder import RunFolder, flag_label
from concordia_env.arena.tournament import check_tournament_args, run_tournament
from concordia_env.board_features import FEATURE_SETS
from concordia_env.game import check_setup_args

from .data import load_positions, td_targets
from .model import export, fit, model_from_net, new_model
from .telemetry import TELEMETRY_GAMES, compare

PROG = "python -m concordia_env.training.turn_td"
#: the settings a run is made with; ``--resume`` checks them against ``settings.json``
FIXED = ("map", "players", "rounds", "games", "explore", "lam", "w_start", "win", "init", "hidden", "epochs", "lr",
         "batch", "window", "margin_weight", "gate", "gate_games", "seed", "candidates")
#: the gate opponents: the heuristic, and the search at 200 iterations
DEFAULT_GATE = ["heuristic", "mcts:iterations=200"]
#: seeds of the gates' deals: far from the self-play seeds, the same deals every round
GATE_SEED = 1_000_000_000


class RunError(ValueError):
    """A run folder or setting that cannot be used; the message says why and what to do."""


def w_play(args: argparse.Namespace, r: int) -> float:
    """The heuristic's weight in round ``r``'s self-play: from ``w_start`` down by equal steps
    (the round after the last would play with 0)."""
    return round(args.w_start * (1.0 - r / args.rounds), 6)


def round_dir(out: Path, r: int) -> Path:
    return out / f"round_{r:02d}"


def _finished(path: Path) -> bool:
    """Whether ``path`` holds a complete tournament result."""
    if not path.is_file():
        return False
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("complete") is True
    except (OSError, ValueError):
        return False


def _tournament(args: argparse.Namespace, specs: list[str], games: int, seed: int, out: Path,
                records: Path | None) -> dict[str, Any]:
    """A tournament through the arena's runner, resumed if ``out`` holds an unfinished one."""
    resume = out.is_file() or (records is not None and records.is_dir() and any(records.glob("game_*.json")))
    return run_tournament(args.map, args.players, specs, games, seed=seed, workers=args.workers, record_dir=records,
                          progress=not args.no_progress, out=out, resume=resume)


def _net_source(args: argparse.Namespace, out: Path, r: int) -> tuple[str, ValueNet | None]:
    """The network that plays round ``r``'s self-play: its ``net=`` spec value and the network."""
    if r > 0:
        path = round_dir(out, r - 1) / "net.npz"
        return str(path), ValueNet.load(path)
    if args.init == "az":
        return "az", released_net(args.map)
    if args.init == "none":
        return "none", None
    return args.init, ValueNet.load(args.init)


def _agent(net_spec: str, w: float, args: argparse.Namespace, explore: float = 0.0) -> str:
    spec = f"turn:net={net_spec}:w={w:g}:win={args.win:g}:candidates={args.candidates}"
    return spec + (f":explore={explore:g}" if explore > 0 else "")


def self_play(args: argparse.Namespace, out: Path, r: int) -> dict[str, Any]:
    net_spec, _ = _net_source(args, out, r)
    w = w_play(args, r)
    if net_spec == "none" and w == 0:
        raise RunError("--init none needs --w-start > 0 (the first round plays by the heuristic's value)")
    spec = _agent(net_spec, w, args, args.explore)
    folder = round_dir(out, r)
    start = time.perf_counter()
    result = _tournament(args, [spec] * args.players, args.games, args.seed + 10_000_000 * (r + 1),
                         folder / "selfplay.json", folder / "games")
    return {"agent": spec, "games": result["games"], "seconds": round(time.perf_counter() - start, 1)}


def train_round(args: argparse.Namespace, out: Path, r: int) -> dict[str, Any]:
    _, net = _net_source(args, out, r)
    dirs = [round_dir(out, k) / "games" for k in range(max(0, r - args.window + 1), r + 1)]
    start = time.perf_counter()
    data = load_positions(dirs)
    target = td_targets(data, net, args.lam)
    features = args.features
    model = model_from_net(net, features) if net is not None else new_model(args.map, args.hidden, features=features)
    report = fit(model, data["obs"], target, data["margin"], epochs=args.epochs, lr=args.lr, batch=args.batch,
                 margin_weight=args.margin_weight, seed=args.seed + r)
    metadata = {"trainer": "turn_td", "round": r, "lam": args.lam, "w_play": w_play(args, r),
                "games": int(data["game"].max()) + 1, "positions": report["positions"],
                "window_rounds": [int(d.parent.name[6:]) for d in dirs]}
    export(model, args.map, [args.players], metadata).save(round_dir(out, r) / "net.npz")
    return {**report, "seconds": round(time.perf_counter() - start, 1)}


def telemetry(args: argparse.Namespace, out: Path, r: int) -> dict[str, Any]:
    """The round's network alone against the agent that played the round (:mod:`.telemetry`), on
    the first :data:`TELEMETRY_GAMES` self-play games."""
    _, teacher = _net_source(args, out, r)
    student = ValueNet.load(round_dir(out, r) / "net.npz")
    records = sorted((round_dir(out, r) / "games").glob("game_*.json"))[:TELEMETRY_GAMES]
    start = time.perf_counter()
    report = compare(records, teacher, w_play(args, r), args.win, student, args.candidates)
    return {**report, "games": len(records), "seconds": round(time.perf_counter() - start, 1)}


def gate(args: argparse.Namespace, out: Path, r: int) -> list[dict[str, Any]]:
    """The round's network against every ``--gate`` opponent, with the next round's ``w`` and alone."""
    net_path = str(round_dir(out, r) / "net.npz")
    rows = []
    for i, opponent in enumerate(args.gate):
        for w in sorted({w_play(args, r + 1), 0.0}, reverse=True):
            spec = _agent(net_path, w, args)
            path = round_dir(out, r) / f"gate_{i}_w{w:g}.json"
            start = time.perf_counter()
            result = _tournament(args, [spec] + [opponent] * (args.players - 1), args.gate_games, GATE_SEED, path,
                                 None)
            stats = result["per_agent"][spec]
            rows.append({"opponent": opponent, "w": w, "games": stats["games"], "wins": stats["wins"],
                         "win_rate": round(stats["win_rate"], 4),
                         "win_rate_ci95": [round(x, 4) for x in stats["win_rate_ci95"]],
                         "mean_vp": stats["mean_vp"], "seconds": round(time.perf_counter() - start, 1)})
    return rows


def run(args: argparse.Namespace) -> dict[str, Any]:
    out = Path(args.out)
    curves_path = out / "curves.json"
    curves: dict[str, Any] = json.loads(curves_path.read_text(encoding="utf-8")) if curves_path.is_file() else {
        "settings": settings(args), "rounds": []}
    for r in range(args.rounds):
        while len(curves["rounds"]) <= r:
            curves["rounds"].append({"round": len(curves["rounds"])})
        row = curves["rounds"][r]
        folder = round_dir(out, r)
        if "selfplay" not in row or not _finished(folder / "selfplay.json"):
            row["selfplay"] = self_play(args, out, r)
            write_json_atomic(curves, curves_path)
        if "train" not in row or not (folder / "net.npz").is_file():
            row["train"] = train_round(args, out, r)
            write_json_atomic(curves, curves_path)
        if "telemetry" not in row:
            row["telemetry"] = telemetry(args, out, r)
            write_json_atomic(curves, curves_path)
        if "gate" not in row:
            row["gate"] = gate(args, out, r)
            write_json_atomic(curves, curves_path)
        _say(args, f"round {r}: " + "; ".join(
            f"w={g['w']:g} vs {g['opponent']} {g['wins']}/{g['games']} "
            f"[{100 * g['win_rate_ci95'][0]:.1f}-{100 * g['win_rate_ci95'][1]:.1f}%]" for g in row["gate"]))
    cpu = sum(row["selfplay"]["seconds"] * args.workers + row["train"]["seconds"] + row["telemetry"]["seconds"]
              + sum(g["seconds"] for g in row["gate"]) * args.workers for row in curves["rounds"])
    curves["cpu_seconds"] = round(cpu, 1)
    curves["cpu_hours"] = round(cpu / 3600, 3)
    write_json_atomic(curves, curves_path)
    return curves


def _say(args: argparse.Namespace, text: str) -> None:
    if not args.no_progress or args.verbose:
        print(text, file=sys.stderr, flush=True)


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """The run's fixed settings (``features`` only when given: runs from before it resume)."""
    fixed = {k: getattr(args, k) for k in FIXED}
    return fixed if args.features is None else {**fixed, "features": args.features}


def prepare(args: argparse.Namespace) -> None:
    """Check the arguments and the run folder before anything runs; :class:`RunError` if unusable."""
    check_setup_args(args.map, args.players)
    for name in ("rounds", "games", "epochs", "batch", "window", "gate_games", "candidates"):
        if getattr(args, name) < 1:
            raise RunError(f"--{name.replace('_', '-')} must be at least 1; got {getattr(args, name)}")
    for name, low, high in (("explore", 0, 1), ("lam", 0, 1), ("w_start", 0, 1e6), ("win", 0, 1e6),
                            ("lr", 1e-9, 1), ("margin_weight", 0, 1e6)):
        value = getattr(args, name)
        if not low <= value <= high:
            raise RunError(f"--{name.replace('_', '-')} must be from {low:g} to {high:g}; got {value}")
    check_tournament_args(args.map, args.players, ["random"] * args.players, args.games, args.workers)
    check_tournament_args(args.map, args.players, ["random"] * args.players, args.gate_games, args.workers)
    if args.init not in ("az", "none") and not Path(args.init).with_suffix(".npz").is_file():
        raise RunError(f"--init {args.init}: no such network file (give az, none or a .npz path)")
    try:
        RunFolder.open(args.out, settings(args), units=("round_*/*",), resume=bool(args.resume), label=flag_label)
    except ValueError as exc:
        raise RunError(str(exc)) from None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="TD learning of values at turn boundaries for the turn agent.")
    p.add_argument("--map", default="italia", choices=("imperium", "italia"))
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--rounds", type=int, default=4, help="self-play, training and gate rounds (default 4)")
    p.add_argument("--games", type=int, default=400, help="self-play games per round (default 400)")
    p.add_argument("--explore", type=float, default=0.1,
                   help="probability of a random candidate turn in self-play (default 0.1)")
    p.add_argument("--lam", type=float, default=0.7, help="TD(lambda)'s lambda; 1 is Monte Carlo (default 0.7)")
    p.add_argument("--w-start", type=float, default=1.0,
                   help="the heuristic's weight in round 0's play, falling by equal steps (default 1)")
    p.add_argument("--win", type=float, default=40.0, help="points per whole win share in the score (default 40)")
    p.add_argument("--init", default="az",
                   help="first network: az (the released one), none (fresh, see --hidden) or a .npz path")
    p.add_argument("--hidden", type=int, nargs="+", default=[256], help="trunk widths of a fresh network")
    p.add_argument("--features", choices=FEATURE_SETS, default=None,
                   help="board features the networks also read (concordia_env.board_features; default none); "
                        "a network without them starts with zero weights on them")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--window", type=int, default=2, help="rounds of self-play each training reads (default 2)")
    p.add_argument("--margin-weight", type=float, default=0.2, help="weight of the VP-margin loss (default 0.2)")
    p.add_argument("--gate", default=DEFAULT_GATE, type=lambda t: [s.strip() for s in t.split(",") if s.strip()],
                   help="comma list of gate opponents (default heuristic,mcts:iterations=200)")
    p.add_argument("--gate-games", type=int, default=200, help="games per gate line (default 200)")
    p.add_argument("--candidates", type=int, default=32, help="candidate turns per decision (default 32)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--out", required=True, help="the run folder")
    p.add_argument("--resume", action="store_true", help="continue the run in --out")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--verbose", action="store_true", help="print each round's gate even with --no-progress")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        prepare(args)
    except (RunError, ValueError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    try:
        with sigterm_as_ctrl_c():
            curves = run(args)
    except (KeyboardInterrupt, Interrupted):
        print(f"stopped; continue with: {PROG} {' '.join(sys.argv[1:] if argv is None else argv)}"
              + ("" if args.resume else " --resume"), file=sys.stderr)
        return 130
    except (RunError, ValueError, FileNotFoundError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    last = curves["rounds"][-1]
    print(json.dumps({"rounds": len(curves["rounds"]), "cpu_hours": curves["cpu_hours"], "last_gate": last["gate"]}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
