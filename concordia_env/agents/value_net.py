"""A trained value network evaluated with numpy alone, and its file format (``.npz`` + ``.json``).

Trained by :mod:`concordia_env.training.value.train` (torch); playing or searching with it
needs only numpy: this module never imports torch.

The network
-----------
The raw observation (any seat's view) is scaled as for the policies
(:func:`concordia_env.agents.numpy_policy.scale_observation`: bounded features times
``scale``, unbounded ones ``log1p``), then a trunk of Linear layers each followed by the
activation, then heads: ``win`` and ``margin`` of :data:`ROWS` outputs, one per seat row of the
observation (row 0 the observer, then the others in turn order), and ``policy`` of one output:

* ``win``: logits; :meth:`ValueNet.values` returns their softmax over the rows of seats
  present in the game (the observation's ``seat_present`` block), 0 for absent rows: each
  player's share of a win, summing to 1;
* ``margin`` (optional): final VP minus the best other player's, divided by
  ``margin_scale`` (50) in training; :meth:`ValueNet.margins` returns it in VP;
* ``policy`` (optional): one logit per observation, used on *afterstates*: the observation,
  seen by the deciding player, of the position a legal action leads to
  (:mod:`concordia_env.agents.afterstates`). The softmax of the logits over a decision's
  legal actions is the policy (:meth:`ValueNet.policy_logits`); one shared scorer of
  positions rather than a head over the 402 positional action ids.

The files
---------
``STEM.npz`` (read with ``allow_pickle=False``): ``trunk.{i}.weight`` ``(out, in)`` and
``trunk.{i}.bias`` ``(out,)`` per trunk layer, ``{head}.weight`` ``(5, hidden)`` and
``{head}.bias`` ``(5,)`` per head (``(1, hidden)`` and ``(1,)`` for ``policy``), ``observation.scale`` float32 and
``observation.unbounded`` bool ``(OBSERVATION_SIZE,)``; weights float32.
``STEM.json``: ``format`` (:data:`FORMAT_NAME`), ``format_version``, ``architecture``
(``type`` "mlp", ``layer_sizes`` from the observation size through the trunk,
``activation``, ``heads``, ``rows``, optionally ``features``: a set of
:mod:`concordia_env.board_features` appended to the scaled observation, so the first layer
reads ``layer_sizes[0]`` plus their count), ``observation`` (``size``, ``scaling``),
``margin_scale``, ``npz_sha256``, ``map``, optionally ``players`` (the player counts it was
trained for) and free-form ``metadata``. The pair is written and read by
:mod:`concordia_env.agents.weights`, the one reader and header check of every numpy weights pair
(:data:`VALUE_NET_FORMAT` says what is particular to value nets): :meth:`ValueNet.load` checks it
all (the header's nesting, every array finite and of sane magnitude, the observation scale
positive where a feature is bounded: ``numpy_policy.check_weights`` / ``check_scaling``) and
raises ``FileNotFoundError`` / ``ValueError`` with one line naming the file and the problem;
:meth:`ValueNet.save` writes both files atomically, ``.npz`` first. The released ``az`` and
``turn`` networks are such pairs. The agents refuse a network trained for another map or player
count than the game's (``numpy_policy.check_trained_for``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env import encoding
from concordia_env.board_features import FEATURE_SETS, board_features, feature_size

from .numpy_policy import ACTIVATIONS, SCALING_RULE, check_scaling, check_weights
from .weights import Layout, PairFormat, check_players, read_pair, write_pair

FORMAT_NAME = "concordia-env-value-net"
FORMAT_VERSION = 1
#: one output per seat row of the observation (the most players a game has)
ROWS = 5
HEADS = ("win", "margin", "policy")


def head_rows(head: str) -> int:
    """Outputs of a head: one per seat row, or one logit for ``policy``."""
    return 1 if head == "policy" else ROWS
#: VP margins are divided by this in training (the env's "vp" reward scale)
MARGIN_SCALE = 50.0

Layer = tuple[np.ndarray, np.ndarray]


class ValueNet:
    """Per-seat-row win shares (and optionally VP margins) of observations, in numpy.

    Args:
        trunk: ``(weight (out, in), bias (out,))`` per hidden layer, the first taking
            ``OBSERVATION_SIZE`` inputs; may be empty (a linear model).
        heads: ``{"win": layer}`` plus optionally ``"margin"`` (each giving :data:`ROWS` outputs)
            and ``"policy"`` (one output).
        activation: a key of ``numpy_policy.ACTIVATIONS``, after every trunk layer.
        scale, unbounded: the observation scaling (``numpy_policy.observation_scaling``).
        map_name, players: the map and player counts it was trained for, if known (saved in the
            header; agents refuse to play it in another game).
        path: the file it was read from (:meth:`load` sets it; messages name it).
        features: a set of :mod:`concordia_env.board_features` computed from the observation and
            appended to the scaled observation (the first layer then reads
            ``OBSERVATION_SIZE + feature_size(features)`` inputs); None: the observation alone.

    ``ValueError`` for shapes that do not chain, unknown heads or activation, non-finite or huge
    values (``numpy_policy.check_weights``) or an unusable scaling (``numpy_policy.check_scaling``).
    """

    def __init__(self, trunk: list[Layer], heads: dict[str, Layer], activation: str, scale: np.ndarray,
                 unbounded: np.ndarray, map_name: str | None = None, margin_scale: float = MARGIN_SCALE,
                 metadata: dict[str, Any] | None = None, players: list[int] | tuple[int, ...] | None = None,
                 path: Path | None = None, features: str | None = None) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"unsupported activation {activation!r}; supported: {sorted(ACTIVATIONS)}")
        if "win" not in heads or set(heads) - set(HEADS):
            raise ValueError(f"heads must be 'win' and optionally 'margin' and 'policy', got {sorted(heads)}")
        f32 = np.float32
        self.trunk = [(np.ascontiguousarray(w, f32), np.ascontiguousarray(b, f32)) for w, b in trunk]
        self.heads = {k: (np.ascontiguousarray(w, f32), np.ascontiguousarray(b, f32)) for k, (w, b) in heads.items()}
        self.features = features
        n_in = encoding.OBSERVATION_SIZE + feature_size(features)
        for name, (w, b) in [(f"trunk layer {i}", lay) for i, lay in enumerate(self.trunk)]:
            if w.ndim != 2 or w.shape != (b.shape[0], n_in) or b.ndim != 1:
                raise ValueError(f"{name} has weight {w.shape} and bias {b.shape}; expected ({b.shape[0]}, {n_in})")
            n_in = w.shape[0]
        for name, (w, b) in self.heads.items():
            rows = head_rows(name)
            if w.shape != (rows, n_in) or b.shape != (rows,):
                raise ValueError(f"head {name!r} has weight {w.shape} and bias {b.shape}; expected ({rows}, {n_in})")
        check_weights([(f"weights of trunk layer {i} {part}", a) for i, lay in enumerate(self.trunk)
                       for part, a in zip(("weight", "bias"), lay)]
                      + [(f"weights of head {k!r} {part}", a) for k, lay in self.heads.items()
                         for part, a in zip(("weight", "bias"), lay)])
        self.scale = np.ascontiguousarray(scale, f32)
        self.unbounded = np.ascontiguousarray(unbounded, bool)
        if self.scale.shape != (encoding.OBSERVATION_SIZE,) or self.unbounded.shape != self.scale.shape:
            raise ValueError(f"observation scaling has shapes {self.scale.shape} and {self.unbounded.shape}, "
                             f"expected ({encoding.OBSERVATION_SIZE},)")
        check_scaling(self.scale, self.unbounded)
        self._unbounded_idx = np.flatnonzero(self.unbounded)
        self.activation = activation
        self.map_name = map_name
        self.players = check_players(players, "value net")
        self.path = path
        if not (isinstance(margin_scale, (int, float)) and np.isfinite(margin_scale) and margin_scale > 0):
            raise ValueError(f"margin_scale must be a positive finite number, got {margin_scale!r}")
        self.margin_scale = float(margin_scale)
        self.metadata = dict(metadata or {})

    # ------------------------------------------------------------ evaluation
    @property
    def layer_sizes(self) -> list[int]:
        """Observation size, then the width of every trunk layer."""
        return [encoding.OBSERVATION_SIZE] + [int(w.shape[0]) for w, _ in self.trunk]

    def _features(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(obs, np.float32)
        if x.ndim != 2 or x.shape[1] != encoding.OBSERVATION_SIZE:
            raise ValueError(f"observations must be a (B, {encoding.OBSERVATION_SIZE}) batch, got {x.shape}")
        present = x[:, encoding.OBSERVATION_LAYOUT["seat_present"]] > 0
        # scale_observation's result, computed column-wise: a search calls this once per node
        h = x * self.scale
        h[:, self._unbounded_idx] = np.log1p(np.maximum(x[:, self._unbounded_idx], 0.0))
        if self.features is not None:
            h = np.concatenate([h, board_features(x)], axis=1)
        act = ACTIVATIONS[self.activation]
        for w, b in self.trunk:
            h = act(h @ w.T + b)
        return h, present

    def _win_shares(self, h: np.ndarray, present: np.ndarray) -> np.ndarray:
        w, b = self.heads["win"]
        z = np.where(present, h @ w.T + b, -np.inf)
        z = np.exp(z - z.max(axis=1, keepdims=True))
        return (z / z.sum(axis=1, keepdims=True)).astype(np.float32)

    @property
    def has_policy(self) -> bool:
        """Whether the net scores afterstates (has a ``policy`` head)."""
        return "policy" in self.heads

    def values(self, obs: np.ndarray) -> np.ndarray:
        """``(B, 5)`` float32 win shares per seat row of a ``(B, OBSERVATION_SIZE)`` batch: softmax of
        the win logits over the present seats, 0 for absent rows."""
        return self._win_shares(*self._features(obs))

    def policy_logits(self, obs: np.ndarray) -> np.ndarray:
        """``(B,)`` float32 policy logits of a batch of afterstate observations (``ValueError``
        without a policy head)."""
        return self.forward(obs)[1]

    def forward(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Win shares ``(B, 5)`` and policy logits ``(B,)`` in one pass over the trunk."""
        if "policy" not in self.heads:
            raise ValueError("this value net has no policy head")
        h, present = self._features(obs)
        w, b = self.heads["policy"]
        return self._win_shares(h, present), (h @ w.T + b)[:, 0].astype(np.float32)

    def margins(self, obs: np.ndarray) -> np.ndarray:
        """``(B, 5)`` predicted final VP margin (own VP minus the best other's) per seat row, 0 for absent rows."""
        if "margin" not in self.heads:
            raise ValueError("this value net has no margin head")
        h, present = self._features(obs)
        w, b = self.heads["margin"]
        return np.where(present, (h @ w.T + b) * self.margin_scale, 0.0).astype(np.float32)

    # ------------------------------------------------------------ files
    def arrays(self) -> dict[str, np.ndarray]:
        """The ``.npz`` contents: trunk layers, heads and the observation scaling."""
        out: dict[str, np.ndarray] = {}
        for i, (w, b) in enumerate(self.trunk):
            out[f"trunk.{i}.weight"], out[f"trunk.{i}.bias"] = w, b
        for name, (w, b) in self.heads.items():
            out[f"{name}.weight"], out[f"{name}.bias"] = w, b
        out["observation.scale"], out["observation.unbounded"] = self.scale, self.unbounded
        return out

    def header(self, npz_sha256: str) -> dict[str, Any]:
        """The ``.json`` header for an ``.npz`` of that hash."""
        return {
            "format": FORMAT_NAME, "format_version": FORMAT_VERSION, "map": self.map_name,
            **({"players": list(self.players)} if self.players is not None else {}),
            "architecture": {"type": "mlp", "layer_sizes": self.layer_sizes, "activation": self.activation,
                             **({"features": self.features} if self.features is not None else {}),
                             "heads": [h for h in HEADS if h in self.heads], "rows": ROWS,
                             "output": "win: softmax over present seat rows; margin: (VP - best other VP) / "
                                       "margin_scale; policy: one logit per afterstate"},
            "observation": {"size": encoding.OBSERVATION_SIZE, "scaling": SCALING_RULE,
                            "unbounded_features": int(self.unbounded.sum())},
            "margin_scale": self.margin_scale, "npz_sha256": npz_sha256, "metadata": self.metadata,
        }

    def save(self, path: str | os.PathLike) -> tuple[Path, Path]:
        """Write ``STEM.npz`` then ``STEM.json`` atomically (``path``: the stem or either file)."""
        return write_pair(path, self.arrays(), self.header)

    @classmethod
    def load(cls, path: str | os.PathLike) -> ValueNet:
        """Read and validate the pair at ``path`` (stem, ``.npz`` or ``.json``); one-line
        ``FileNotFoundError`` / ``ValueError`` naming the file and the problem."""
        header, a, npz_path, _ = read_pair(path, VALUE_NET_FORMAT)
        sizes, heads = header["architecture"]["layer_sizes"], header["architecture"]["heads"]
        trunk = [(a[f"trunk.{i}.weight"], a[f"trunk.{i}.bias"]) for i in range(len(sizes) - 1)]
        try:
            return cls(trunk, {h: (a[f"{h}.weight"], a[f"{h}.bias"]) for h in heads}, header["architecture"]["activation"],
                       a["observation.scale"], a["observation.unbounded"], map_name=header.get("map"),
                       margin_scale=header["margin_scale"], metadata=header.get("metadata") or {},
                       players=header.get("players"), path=npz_path, features=header["architecture"].get("features"))
        except ValueError as exc:
            raise ValueError(f"{npz_path}: {exc}") from None

    def __repr__(self) -> str:
        extra = f" features={self.features}" if self.features is not None else ""
        return f"<ValueNet {self.map_name} {self.activation} {self.layer_sizes}{extra} heads={sorted(self.heads)}>"


def _check_value_fields(header: dict[str, Any], json_path: Path) -> None:
    """``ValueError`` naming ``json_path`` unless the header's own fields of a value net are
    usable: ``heads`` 'win' plus optionally 'margin' and 'policy', :data:`ROWS` rows, a positive
    finite ``margin_scale``."""
    arch = header["architecture"]
    heads = arch.get("heads")
    if not (isinstance(heads, list) and all(isinstance(h, str) for h in heads) and "win" in heads
            and set(heads) <= set(HEADS)):
        raise ValueError(f"{json_path}: architecture heads must be 'win' plus optionally 'margin' and 'policy', "
                         f"got {heads!r}")
    if arch.get("rows") != ROWS or isinstance(arch.get("rows"), bool):
        raise ValueError(f"{json_path}: architecture rows must be {ROWS}, got {arch.get('rows')!r}")
    features = arch.get("features")
    if features is not None and features not in FEATURE_SETS:
        raise ValueError(f"{json_path}: architecture features must be one of {list(FEATURE_SETS)}, got {features!r}")
    margin = header["margin_scale"]
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 < margin < float("inf"):
        raise ValueError(f"{json_path}: margin_scale must be a positive finite number")


def _expected(header: dict[str, Any]) -> Layout:
    """Name -> (shape, dtype) of every array the header's trunk and heads imply."""
    sizes, heads = header["architecture"]["layer_sizes"], header["architecture"]["heads"]
    f32 = np.dtype("float32")
    out: Layout = {}
    inputs = [sizes[0] + feature_size(header["architecture"].get("features"))] + list(sizes[1:])
    for i, (n_in, n_out) in enumerate(zip(inputs, inputs[1:])):
        out[f"trunk.{i}.weight"], out[f"trunk.{i}.bias"] = ((n_out, n_in), f32), ((n_out,), f32)
    for h in heads:
        rows = head_rows(h)
        out[f"{h}.weight"], out[f"{h}.bias"] = ((rows, inputs[-1]), f32), ((rows,), f32)
    out["observation.scale"] = ((sizes[0],), f32)
    out["observation.unbounded"] = ((sizes[0],), np.dtype("bool"))
    return out


#: the value net pair (``az``, ``net`` and ``turn`` networks), as :func:`concordia_env.agents.weights.read_pair`
#: checks it
VALUE_NET_FORMAT = PairFormat(
    name=FORMAT_NAME, version=FORMAT_VERSION, kind="value net", fields=("margin_scale",), min_layers=1,
    activations=ACTIVATIONS, arrays=_expected, check=_check_value_fields,
    again="save the value net again with this package")
