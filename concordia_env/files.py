"""Files written atomically: the one way the package writes a file a user keeps.

Results, records, released weights, data shards and checkpoints are written to a temporary
file in the destination's own folder (same file system, so the rename is atomic), flushed and
fsynced, then ``os.replace``-d over the destination. A reader, or a run interrupted mid-write
(Ctrl-C, kill, a full disk), therefore sees either the previous file or the complete new one,
never a truncated file under the final name; on any failure the temporary file is removed.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

#: permissions of written files (``mkstemp`` alone would leave them 0600)
FILE_MODE = 0o644


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see the module doc); creates missing parent folders."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(obj: Any, path: str | os.PathLike, indent: int | None = 2) -> None:
    """Write ``obj`` as JSON (and a final newline) to ``path`` atomically. The document is
    serialised before anything is written, so an unserialisable object leaves ``path`` untouched."""
    write_text_atomic(path, json.dumps(obj, indent=indent) + "\n")


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable; not every system can open a folder, which is harmless."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def npz_bytes(arrays: dict[str, np.ndarray], compresslevel: int = 9) -> bytes:
    """An ``.npz`` (a deflated zip of ``.npy`` files, keys sorted) with fixed time stamps, so the
    same arrays give the same bytes (released weights and data shards are compared by sha256)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=compresslevel) as zf:
        for key in sorted(arrays):
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = FILE_MODE << 16
            member = io.BytesIO()
            a = np.asarray(arrays[key])  # (np.ascontiguousarray would turn a 0-d array into a 1-d one)
            np.lib.format.write_array(member, a if a.flags.c_contiguous else a.copy(order="C"), allow_pickle=False)
            zf.writestr(info, member.getvalue(), compresslevel=compresslevel)
    return buf.getvalue()
