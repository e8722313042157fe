"""The numpy weights file pair, ``STEM.npz`` + ``STEM.json``: written, read and checked in one place.

Every learned network the agents play without torch ships as such a pair: the numpy
policies of the ``ppo`` agent (:mod:`concordia_env.agents.numpy_policy`) and the value
networks of the ``az``, ``net`` and ``turn`` agents (:mod:`concordia_env.agents.value_net`).
A :class:`PairFormat` describes what one kind records (its ``format`` name and version, the
fields its header needs, the arrays its architecture implies, its own header fields); the
rest is shared:

* :func:`write_pair`: the ``.npz`` (:func:`concordia_env._internal.files.npz_bytes`, no time stamps)
  then the ``.json`` header naming the ``.npz``'s sha256, each written atomically, the
  ``.npz`` first (a crash in between leaves a header whose hash names the old arrays, which
  :func:`read_pair` refuses, rather than a header that silently describes other weights);
* :func:`read_pair`: the header, checked by :func:`check_header` (its nesting bounded by
  :data:`MAX_HEADER_DEPTH`, ``format``, ``format_version``, the required fields, the ``mlp``
  architecture and its ``layer_sizes`` and ``activation``, the observation size against
  ``concordia_env.encoding.OBSERVATION_SIZE``, ``npz_sha256``, ``metadata``, ``map`` and
  ``players``, then the format's own fields), and the arrays: the ``.npz``'s sha256 must be
  the header's, its members exactly the arrays the header implies, with their shapes and
  dtypes read from the ``.npy`` headers before any array is, read with
  ``allow_pickle=False`` (nothing in either file is unpickled or executed), every float
  finite.

Every problem is a ``FileNotFoundError`` or ``ValueError`` of one line naming the file and
what is wrong with it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from concordia_env import encoding
from concordia_env._internal.files import npz_bytes, write_bytes_atomic
from concordia_env.data import MAP_NAMES, load_map

#: the deepest nesting of lists and objects a JSON header may have (the real ones nest 3 deep):
#: deeper input would exhaust the parser's recursion long before it is read
MAX_HEADER_DEPTH = 32

#: array name -> (shape, dtype), as a header implies them or an ``.npz`` holds them
Layout = dict[str, tuple[tuple[int, ...], np.dtype]]

#: the header fields every kind of pair needs
COMMON_FIELDS = ("architecture", "observation")


@dataclass(frozen=True)
class PairFormat:
    """One kind of weights pair: what :func:`check_header` and :func:`read_pair` check it against.

    Attributes:
        name: the header's ``format``.
        version: the only ``format_version`` read.
        kind: what messages call it ("numpy policy", "value net").
        fields: header fields it needs besides ``architecture``, ``observation`` and ``npz_sha256``.
        min_layers: the fewest entries ``architecture.layer_sizes`` may have.
        activations: the ``architecture.activation`` names it can play.
        arrays: ``header -> Layout``, the arrays the (checked) header implies.
        check: its own header fields (``header, json_path``), ``ValueError`` naming ``json_path``.
        again: what to do about a file of another version or export, ending the messages.
    """

    name: str
    version: int
    kind: str
    fields: tuple[str, ...]
    min_layers: int
    activations: Collection[str]
    arrays: Callable[[dict[str, Any]], Layout]
    check: Callable[[dict[str, Any], Path], None]
    again: str


class Pair(NamedTuple):
    """A pair as :func:`read_pair` read it: the checked header and the arrays it describes."""

    header: dict[str, Any]
    arrays: dict[str, np.ndarray]
    npz_path: Path
    json_path: Path


def pair_files(path: str | os.PathLike) -> tuple[Path, Path]:
    """``(STEM.npz, STEM.json)`` for ``STEM``, ``STEM.npz`` or ``STEM.json``."""
    p = Path(path).expanduser()
    if p.suffix in (".npz", ".json"):
        p = p.with_suffix("")
    return p.with_name(p.name + ".npz"), p.with_name(p.name + ".json")


# ------------------------------------------------------------ writing
def write_pair(path: str | os.PathLike, arrays: dict[str, np.ndarray],
               header: Callable[[str], dict[str, Any]]) -> tuple[Path, Path]:
    """Write ``STEM.npz`` (``arrays``) then ``STEM.json`` (``header(npz_sha256)``), each atomically;
    ``path`` is the stem or either file. The bytes depend only on the arrays and the header (no
    time stamps), so writing the same network twice gives the same files."""
    npz_path, json_path = pair_files(path)
    data = npz_bytes(arrays)
    document = header(hashlib.sha256(data).hexdigest())
    write_bytes_atomic(npz_path, data)
    write_bytes_atomic(json_path, (json.dumps(document, indent=2) + "\n").encode())
    return npz_path, json_path


# ------------------------------------------------------------ the header
def read_json_header(json_path: Path, kind: str = "numpy policy") -> dict[str, Any]:
    """The JSON header of a weights pair (``kind`` names the file kind in messages);
    ``FileNotFoundError`` / ``ValueError`` naming the file when it is missing or not a JSON object."""
    if not json_path.is_file():
        raise FileNotFoundError(f"{kind} header not found: {json_path} (it describes "
                                f"{json_path.with_suffix('.npz').name}; both files are needed)")
    try:
        text = json_path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{json_path}: corrupt JSON header ({exc})") from None
    depth = json_depth(text)
    if depth > MAX_HEADER_DEPTH:
        raise ValueError(f"{json_path}: corrupt JSON header (lists and objects nest {depth} deep; "
                         f"a header nests at most {MAX_HEADER_DEPTH})")
    try:
        header = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{json_path}: corrupt JSON header ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{json_path}: corrupt JSON header (a {type(header).__name__}, not an object)")
    return header


def json_depth(text: str) -> int:
    """How deep lists and objects nest in JSON ``text``, counted without parsing it (a parser
    recurses once per level), in one vectorised pass: brackets inside strings are skipped."""
    outside = _JSON_STRING.sub('""', text)
    codes = np.frombuffer(outside.encode("utf-8", "replace"), np.uint8)
    step = np.isin(codes, _OPENERS).astype(np.int64) - np.isin(codes, _CLOSERS)
    return int(np.cumsum(step).max(initial=0))


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPENERS, _CLOSERS = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)


def _is_count(value: Any) -> bool:
    """A positive int (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def check_header(header: dict[str, Any], json_path: Path, fmt: PairFormat) -> Layout:
    """The arrays ``header`` implies, after checking it against ``fmt`` and this package: format
    and version, required fields, architecture, observation size, hash field, metadata, map and
    players, then ``fmt.check``. ``ValueError`` naming ``json_path`` and the problem."""
    if header.get("format") != fmt.name:
        raise ValueError(f"{json_path}: not a {fmt.kind} header (format {header.get('format')!r}, "
                         f"expected {fmt.name!r})")
    version = header.get("format_version")
    if version != fmt.version or isinstance(version, bool):
        raise ValueError(f"{json_path}: unknown format version {version!r} (this package reads version "
                         f"{fmt.version}); {fmt.again}")
    missing = [k for k in (*COMMON_FIELDS, *fmt.fields, "npz_sha256") if k not in header]
    if missing:
        raise ValueError(f"{json_path}: header lacks {', '.join(missing)}")
    _check_architecture(header["architecture"], json_path, fmt)
    size = encoding.OBSERVATION_SIZE  # read now: the layout may grow between releases
    observation = header["observation"]
    stated = observation.get("size") if isinstance(observation, dict) else None
    for what, value in (("architecture layer_sizes[0]", header["architecture"]["layer_sizes"][0]),
                        ("observation size", stated)):
        if value != size:
            raise ValueError(f"{json_path}: {what} is {value!r}, but this package's observations have {size} "
                             f"values (concordia_env.encoding.OBSERVATION_SIZE): the {fmt.kind} was made for "
                             f"another observation layout; retrain it")
    digest = header["npz_sha256"]
    if not (isinstance(digest, str) and len(digest) == 64):
        raise ValueError(f"{json_path}: npz_sha256 must be a sha256 hex digest, got {digest!r}")
    if not isinstance(header.get("metadata", {}), dict):
        raise ValueError(f"{json_path}: metadata must be an object")
    check_header_map(header, json_path)
    fmt.check(header, json_path)
    return fmt.arrays(header)


def _check_architecture(arch: Any, json_path: Path, fmt: PairFormat) -> None:
    """``ValueError`` naming ``json_path`` unless ``arch`` is an ``mlp`` with usable
    ``layer_sizes`` and an ``activation`` ``fmt`` can play."""
    if not isinstance(arch, dict) or arch.get("type") != "mlp":
        raise ValueError(f"{json_path}: architecture must be an object with type 'mlp', got {arch!r}")
    sizes = arch.get("layer_sizes")
    if not (isinstance(sizes, list) and len(sizes) >= fmt.min_layers and sizes and all(map(_is_count, sizes))):
        least = {1: "one positive integer", 2: "two positive integers"}.get(
            fmt.min_layers, f"{fmt.min_layers} positive integers")
        raise ValueError(f"{json_path}: architecture layer_sizes must be a list of at least {least}, got {sizes!r}")
    if arch.get("activation") not in fmt.activations:
        raise ValueError(f"{json_path}: unsupported activation {arch.get('activation')!r}; "
                         f"supported: {sorted(fmt.activations)}")


def check_players(players: Any, where: str) -> tuple[int, ...] | None:
    """The player counts a network was trained for, as a sorted tuple (None: not recorded);
    ``ValueError`` naming ``where`` unless a list of distinct counts from 2 to 5."""
    if players is None:
        return None
    if not (isinstance(players, (list, tuple)) and players
            and all(type(n) is int and 2 <= n <= 5 for n in players) and len(set(players)) == len(players)):
        raise ValueError(f"{where}: players must be a list of player counts from 2 to 5, or null; "
                         f"got {str(players)[:60]}")
    return tuple(sorted(players))


def check_header_map(header: dict[str, Any], json_path: Path) -> None:
    """``ValueError`` naming ``json_path`` unless the header's ``map`` is a known map or null and
    its ``players`` (optional) a list of player counts that map allows."""
    map_name = header.get("map")
    if map_name is not None and map_name not in MAP_NAMES:
        raise ValueError(f"{json_path}: map must be one of {list(MAP_NAMES)} or null, got {str(map_name)[:60]!r}")
    players = check_players(header.get("players"), str(json_path))
    if players is not None and map_name is not None:
        allowed = load_map(map_name).players
        if not set(players) <= set(allowed):
            raise ValueError(f"{json_path}: players {list(players)} include counts the {map_name} map does not "
                             f"allow ({list(allowed)})")


# ------------------------------------------------------------ the arrays
def npz_layout(data: bytes) -> Layout:
    """Name -> (shape, dtype) from the ``.npy`` headers alone, before any array is read (so a
    file cannot make the loader allocate what its header does not describe)."""
    fmt = np.lib.format
    layout = {}
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for name in zf.namelist():
            if not name.endswith(".npy"):
                raise ValueError(f"member {name!r} is not a .npy array")
            with zf.open(name) as f:
                version = fmt.read_magic(f)
                read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
                shape, _, dtype = read_header(f)
            layout[name[:-len(".npy")]] = (tuple(shape), dtype)
    return layout


def corrupt(npz_path: Path, exc: BaseException) -> ValueError:
    """The one-line error for an ``.npz`` that does not read."""
    return ValueError(f"{npz_path}: corrupt or truncated .npz ({type(exc).__name__}: {exc})")


def read_pair(path: str | os.PathLike, fmt: PairFormat) -> Pair:
    """The pair at ``path`` (stem, ``.npz`` or ``.json``), its header checked by :func:`check_header`
    and its arrays against the header: readable, the hash the header names, exactly the arrays it
    implies with their shapes and dtypes, every float finite. ``FileNotFoundError`` for a missing
    file, ``ValueError`` naming the file and the problem for anything else."""
    npz_path, json_path = pair_files(path)
    header = read_json_header(json_path, fmt.kind)
    expected = check_header(header, json_path, fmt)
    if not npz_path.is_file():
        raise FileNotFoundError(f"{fmt.kind} weights not found: {npz_path} (described by {json_path.name})")
    data = npz_path.read_bytes()
    # A damaged zip or .npy header fails in many ways (BadZipFile, zlib.error, EOFError,
    # ValueError, SyntaxError from numpy's header parser...): all of them mean "corrupt".
    try:
        layout = npz_layout(data)
    except Exception as exc:  # noqa: BLE001 - see above
        raise corrupt(npz_path, exc) from None
    if hashlib.sha256(data).hexdigest() != header["npz_sha256"]:
        raise ValueError(f"{npz_path}: does not match its header {json_path.name} (npz_sha256 differs): the two "
                         f"files come from different exports, or the .npz was altered; {fmt.again}")
    _check_layout(layout, expected, npz_path, json_path)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:  # never unpickle
            arrays = {key: npz[key] for key in expected}
    except Exception as exc:  # noqa: BLE001 - a damaged member: see above
        raise corrupt(npz_path, exc) from None
    for key, a in arrays.items():
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ValueError(f"{npz_path}: array {key!r} has non-finite values (NaN or inf)")
    return Pair(header, arrays, npz_path, json_path)


def _check_layout(layout: Layout, expected: Layout, npz_path: Path, json_path: Path) -> None:
    """``ValueError`` naming ``npz_path`` unless it holds exactly the ``expected`` arrays, each of
    the shape and dtype its header ``json_path`` says."""
    if set(layout) != set(expected):
        missing, extra = sorted(set(expected) - set(layout)), sorted(set(layout) - set(expected))
        raise ValueError(f"{npz_path}: arrays do not match its header {json_path.name} (missing {missing}, "
                         f"unexpected {extra})")
    for key, (shape, kind) in expected.items():
        if layout[key] != (shape, kind):
            found_shape, found_kind = layout[key]
            raise ValueError(f"{npz_path}: array {key!r} is {found_kind} {found_shape}, its header {json_path.name} "
                             f"says {kind} {shape}")
