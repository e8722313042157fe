"""Files written atomically: the one way the package writes a file a user keeps.

Results, records, released weights, data shards and checkpoints are written to a temporary
file in the destination's own folder (same file system, so the rename is atomic), flushed and
fsynced, then ``os.replace``-d over the destination. A reader, or a run interrupted mid-write
(Ctrl-C, kill, a full disk), therefore sees either the previous file or the complete new one,
never a truncated file under the final name; on any failure the temporary file is removed.

Permissions are those an ordinary write would give: a new file gets ``0666`` less the umask
(``0644`` under the usual umask 022, ``0600`` under 077), and a file written over keeps its
mode. A failed write raises ``OSError`` naming the final file, never the temporary one.
"""

from __future__ import annotations

import io
import json
import os
import stat
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

#: permissions of the members of an ``.npz`` (:func:`npz_bytes`), fixed so equal arrays give equal bytes
FILE_MODE = 0o644
#: permissions a new file gets before the umask, as ``open(path, "w")`` would create it
NEW_FILE_MODE = 0o666


def current_umask() -> int:
    """This process's umask. Read from ``/proc`` where it can be: ``os.umask`` can only be read by
    setting it, which for a moment would change it for every thread of the process."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode(path: Path) -> int:
    """The permissions to write ``path`` with: its own if it is a file already (written over, it
    keeps them), else those the umask gives a new file (``mkstemp`` alone would leave 0600)."""
    try:
        st = path.stat()
    except OSError:
        return NEW_FILE_MODE & ~current_umask()
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else NEW_FILE_MODE & ~current_umask()


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` as it would read had the write gone to ``path`` itself: the temporary file's name
    (or none at all: a full disk's ``write`` names no file) replaced by the final file's."""
    if exc.errno is None:
        return exc
    named = type(exc)(exc.errno, exc.strerror, os.fspath(path))
    named.__traceback__ = exc.__traceback__
    return named


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see the module doc); creates missing parent folders.
    ``OSError`` (a full disk, a read-only folder, a file size limit) names ``path``."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, file_mode(path))
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _naming(exc, path) from None
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
