"""The checkpoint of a value-network run (``OUT/checkpoint.pt``): written atomically, read with
``weights_only=True`` (tensors and plain data only: nothing in a file runs)."""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path
from typing import Any

from concordia_env._internal.extras import requires

with requires("train", "concordia_env.training.value"):
    import torch

from concordia_env._internal.files import write_bytes_atomic


def plain(x: Any) -> Any:
    """``x`` as JSON data (dicts, lists, strings, numbers, bools, None; anything else as its string):
    what a checkpoint stores besides tensors, so that ``torch.load(weights_only=True)`` reads it."""
    return json.loads(json.dumps(x, default=str))


def save_checkpoint(path: Path, model: torch.nn.Module, opt: torch.optim.Optimizer, step: int, args: dict[str, Any],
                    history: list[dict[str, Any]], wall: float) -> None:
    """Write the checkpoint atomically: weights, optimizer state, step, arguments, history and seconds."""
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step, "args": plain(args),
                "history": plain(history), "wall_s": wall}, buf)
    write_bytes_atomic(path, buf.getvalue())


class UnsafeCheckpointError(ValueError):
    """A checkpoint holding objects other than tensors and plain data: loading it could run code."""


def load_torch_checkpoint(path: Path) -> Any:
    """What ``path`` (a ``torch.save`` file) holds, read with ``weights_only=True``: tensors and plain
    data only, so a crafted file cannot run code. :class:`UnsafeCheckpointError` for a file that
    holds anything else, ``ValueError`` for one torch cannot read (truncated, corrupt); both one
    line naming the file."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        if "weights only" in str(exc).lower():  # torch's refusal of an object it does not allow
            raise UnsafeCheckpointError(f"{path}: refused: it holds objects other than tensors and plain data, "
                                        f"which could run code when loaded; only load checkpoints you made") from None
        raise ValueError(f"{path}: truncated or corrupt checkpoint (UnpicklingError)") from None
    except Exception as exc:  # noqa: BLE001 - a truncated file fails in many ways (EOFError, RuntimeError...)
        raise ValueError(f"{path}: truncated or corrupt checkpoint ({type(exc).__name__})") from None


def load_checkpoint(path: Path) -> dict[str, Any]:
    """The checkpoint ``--resume`` names (``OUT/checkpoint.pt``); ``ValueError`` in one line if it is
    missing, truncated or corrupt (it is written atomically, so only damage from outside does that),
    or holds more than tensors and plain data (:func:`load_torch_checkpoint`: nothing in it runs)."""
    if not path.is_file():
        raise ValueError(f"--resume: {path}: no checkpoint to resume; run without --resume to start")
    try:
        ck = load_torch_checkpoint(path)
        if not isinstance(ck, dict) or not {"model", "optimizer", "step", "args"} <= set(ck):
            raise ValueError(f"{path}: not a value_train checkpoint")
    except UnsafeCheckpointError as exc:
        raise ValueError(f"--resume: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"--resume: {exc}; delete it and run without --resume to train from the start") from None
    return ck
