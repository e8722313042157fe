"""The command line: the options, the checks argparse cannot make alone, and :func:`main` with its
exit statuses (0; 1 for a file that could not be written; 2 for bad input; 130 when interrupted)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from concordia_env._internal.extras import require_installed, requires

with requires("train", "concordia_env.training.expert_iteration"):
    import torch

from concordia_env.agents.numpy_policy import ACTIVATIONS
from concordia_env.agents.value_net import ValueNet
from concordia_env.arena.pools import sigterm_as_ctrl_c
from concordia_env.arguments import fraction, layer_widths, positive_float, positive_int
from concordia_env.data import MAP_NAMES
from concordia_env.game import check_setup_args

from .loop import run
from .settings import FIXED_DEFAULTS, PROG, TEACHERS
from .train import _Interrupted


def _positive(kind: type) -> Any:
    """The argument type of a positive ``kind`` (int or float), from :mod:`concordia_env.arguments`."""
    return positive_int if kind is int else positive_float


_fraction, _widths = fraction, layer_widths  # the names this module's options used before


def _description() -> str:
    """The first line of the package doc, which ``--help`` shows."""
    from concordia_env.training import expert_iteration as package

    return (package.__doc__ or "").split("\n")[0]


def _add_run_options(p: argparse.ArgumentParser) -> None:
    pos_int = _positive(int)
    p.add_argument("--map", required=True, choices=MAP_NAMES)
    p.add_argument("--players", type=int, required=True, help="player count of every game")
    p.add_argument("--out", required=True, help="run directory (see the module doc for its files)")
    p.add_argument("--generations", type=pos_int, default=3, help="generations to reach (a resumed run may raise it)")
    p.add_argument("--games", type=pos_int, default=64, help="self-play games per generation")
    p.add_argument("--simulations", type=pos_int, default=100, help="search simulations per self-play decision")
    p.add_argument("--workers", type=pos_int, default=1, help="processes for self-play and evaluation games")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="self-play games in local processes, or as tasks on a Ray cluster (the ray extra; the run "
                        "directory must be at the same path on every machine); evaluation games stay local")
    p.add_argument("--address", default=None,
                   help="with --backend ray: the cluster's HOST:PORT, ray://HOST:10001 or auto (default: a local "
                        "Ray instance)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="training device")
    p.add_argument("--torch-threads", type=pos_int, default=1, help="torch CPU threads for training")
    p.add_argument("--init-net", default=None, help="a ValueNet (stem) to start from: generation 0's expert "
                                                    "and the first best network")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last complete step")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def _add_selfplay_options(p: argparse.ArgumentParser) -> None:
    pos_int, pos_float = _positive(int), _positive(float)
    sp = p.add_argument_group("self-play")
    sp.add_argument("--shard-size", type=pos_int, default=4, help="games per shard file")
    sp.add_argument("--max-turns", type=pos_int, default=400, help="cut a game off after this many card plays")
    sp.add_argument("--c-puct", type=pos_float, default=1.5, help="PUCT exploration constant")
    sp.add_argument("--leaf-mix", type=_fraction, default=0.0,
                    help="weight of the heuristic leaf value blended into the network's (az)")
    sp.add_argument("--root-noise", type=_fraction, default=0.25, help="Dirichlet noise weight at the root")
    sp.add_argument("--root-noise-alpha", type=pos_float, default=0.3, help="Dirichlet concentration")
    sp.add_argument("--move-temperature", type=pos_float, default=1.0,
                    help="temperature of the sampled moves early in a game")
    sp.add_argument("--temperature-decisions", type=int, default=30,
                    help="searched decisions per game that sample their move (then: most visited)")
    sp.add_argument("--teacher", choices=TEACHERS, default=FIXED_DEFAULTS["teacher"],
                    help="generation 0's self-play without --init-net: heuristic-guided MCTS (mcts), or the "
                         "heuristic's own moves and priors (heuristic: much faster; see the module doc)")
    sp.add_argument("--teacher-epsilon", type=float, default=FIXED_DEFAULTS["teacher_epsilon"],
                    help="with --teacher heuristic: share of decisions whose move is sampled from the priors")


def _add_training_options(p: argparse.ArgumentParser) -> None:
    pos_int, pos_float = _positive(int), _positive(float)
    tr = p.add_argument_group("training")
    tr.add_argument("--hidden", type=_widths, default=[128], help="trunk widths, comma-separated")
    tr.add_argument("--activation", default="ReLU", choices=sorted(ACTIVATIONS))
    tr.add_argument("--window", type=pos_int, default=4, help="train on the positions of the last K generations")
    tr.add_argument("--epochs", type=pos_float, default=2.0, help="passes over the window's positions")
    tr.add_argument("--batch", type=pos_int, default=256, help="positions per batch")
    tr.add_argument("--lr", type=pos_float, default=1e-3)
    tr.add_argument("--weight-decay", type=float, default=1e-4, help="AdamW decoupled weight decay")
    tr.add_argument("--dropout", type=_fraction, default=0.0, help="dropout after each hidden layer (training only)")
    tr.add_argument("--value-target-mix", type=_fraction, default=0.0,
                    help="weight of the root search value in the value target (0: the outcome alone)")
    tr.add_argument("--value-weight", type=float, default=1.0)
    tr.add_argument("--policy-weight", type=float, default=1.0)
    tr.add_argument("--warm-start", default="previous", choices=["previous", "best", "none"],
                    help="initial weights of a generation's network")
    tr.add_argument("--val-fraction", type=_fraction, default=0.05, help="share of the window's games held out")
    tr.add_argument("--checkpoint-every", type=pos_int, default=200, help="training steps between checkpoints")


def _add_gate_options(p: argparse.ArgumentParser) -> None:
    pos_int = _positive(int)
    gt = p.add_argument_group("gating and evaluation")
    gt.add_argument("--gate-deals", type=pos_int, default=20, help="deals (each played in every seat rotation)")
    gt.add_argument("--gate-simulations", type=pos_int, default=50, help="simulations per decision in evaluations")
    gt.add_argument("--gate-threshold", type=_fraction, default=0.55, help="gate score the new network needs")
    gt.add_argument("--eval-deals", type=pos_int, default=20, help="deals against the heuristic per generation")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=_description())
    _add_run_options(p)
    _add_selfplay_options(p)
    _add_training_options(p)
    _add_gate_options(p)
    return p


def check_args(args: argparse.Namespace) -> None:
    """``ValueError`` in one line for arguments argparse cannot check alone."""
    check_setup_args(args.map, args.players)
    if args.address is not None and args.backend != "ray":
        raise ValueError("--address needs --backend ray")
    if args.backend == "ray":  # Ray missing or its cluster unreachable: one line before any work
        from concordia_env.integrations.ray_backend import check_address, require_ray

        require_ray()
        if args.address is not None:
            check_address(args.address)
    if args.temperature_decisions < 0:
        raise ValueError(f"--temperature-decisions must be >= 0, got {args.temperature_decisions}")
    if not 0.0 <= args.teacher_epsilon <= 1.0:
        raise ValueError(f"--teacher-epsilon must lie in [0, 1], got {args.teacher_epsilon}")
    if args.value_weight < 0 or args.policy_weight < 0 or args.value_weight + args.policy_weight == 0:
        raise ValueError("--value-weight and --policy-weight must be >= 0 and not both 0")
    if args.weight_decay < 0:
        raise ValueError(f"--weight-decay must be >= 0, got {args.weight_decay}")
    for name in ("out", "init_net"):
        if vars(args)[name] and ":" in vars(args)[name]:
            raise ValueError(f"--{name.replace('_', '-')} {vars(args)[name]!r}: a path with ':' cannot be "
                             f"named in an agent spec; use another")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: torch finds no CUDA device (use --device auto or cpu)")
    if args.init_net:
        net = ValueNet.load(args.init_net)  # one-line FileNotFoundError / ValueError naming the file
        if net.map_name not in (None, args.map):
            raise ValueError(f"--init-net {args.init_net}: trained on {net.map_name!r}, not {args.map!r}")
        if args.warm_start != "none" and (net.layer_sizes[1:] != args.hidden or net.activation != args.activation):
            raise ValueError(f"--init-net {args.init_net} is a {net.activation} {net.layer_sizes[1:]} network but "
                             f"--hidden/--activation give {args.activation} {args.hidden}: match them, "
                             f"or pass --warm-start none")
        args.init_net = str(Path(args.init_net).with_suffix("")) if Path(args.init_net).suffix in (".npz", ".json") \
            else args.init_net


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    args.command = f"{PROG} {shlex.join(argv)}"
    try:
        check_args(args)
        # each generation ends by drawing curves.png: refuse a run that would stop there
        require_installed(("matplotlib",), "train", "expert iteration's curves.png", "pip install matplotlib")
        with sigterm_as_ctrl_c():
            summary = run(args)
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that could not be written (a full disk): the complete ones are intact
        where = f" {exc.filename}" if exc.filename else ""
        print(f"{PROG}: error: could not write{where}: {exc.strerror or exc}; complete steps are kept: run the "
              f"same command with --resume once there is room", file=sys.stderr)
        return 1
    except _Interrupted as exc:
        print(f"{exc}; complete steps are kept: run the same command with --resume to continue", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("interrupted: complete steps and self-play shards are kept; run the same command with --resume "
              "to continue", file=sys.stderr)
        return 130
    print(json.dumps(summary))
    return 0
