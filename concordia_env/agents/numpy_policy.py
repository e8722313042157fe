"""A trained actor network evaluated with numpy alone, and its file format (``.npz`` + ``.json``).

The released ``ppo`` policies ship as such a pair, so playing them needs neither torch
nor stable-baselines3 (those are the ``train`` extra). Training uses the same class,
as :class:`concordia_env.training.selfplay.FrozenPolicy`, for the frozen past selves
that play opponent seats: a numpy forward pass of a small MLP costs a fraction of a
batch-1 torch call, and the object pickles to ``SubprocVecEnv`` workers.

The network
-----------
Only the actor of a maskable actor-critic policy is kept: the raw observation is
scaled (:func:`scale_observation`: bounded features times ``scale``, unbounded ones
``log1p``; what :class:`concordia_env.training.nets.ObservationScaler` does inside the
torch model), then Linear layers with one activation between them; the last layer
gives one logit per action. A move is the legal action of highest logit
(deterministic) or one drawn from the softmax of the legal actions' logits.

The files
---------
``STEM.npz`` holds the arrays (``np.load(..., allow_pickle=False)`` reads them; nothing
is unpickled):

* ``layers.{i}.weight``: ``(out, in)``, as torch's ``Linear`` stores it, and
  ``layers.{i}.bias``: ``(out,)``, in the header's ``dtype`` (float32 or float16;
  the forward pass always runs in float32);
* ``observation.scale``: float32 ``(OBSERVATION_SIZE,)``, and
  ``observation.unbounded``: bool ``(OBSERVATION_SIZE,)``.

``STEM.json`` is the header: ``format`` (:data:`FORMAT_NAME`), ``format_version``
(:data:`FORMAT_VERSION`), ``architecture`` (``type`` "mlp", ``layer_sizes`` from the
observation size to the number of actions, ``activation``, ``output``),
``observation`` (``size``, the ``scaling`` rule, how many features are unbounded),
``num_actions``, ``dtype``, ``npz_sha256`` (the ``.npz`` it was written with: a pair
from two different exports is refused), ``map`` (the board the policy was trained on,
or null), optionally ``players`` (the player counts it was trained for) and free-form
``metadata`` (where the weights came from). The pair is written and read by
:mod:`concordia_env.agents.weights`, the one reader and header check of every numpy weights
pair (:data:`POLICY_FORMAT` says what is particular to policies): :meth:`NumpyPolicy.load`
checks the header against the arrays and against this package (observation size
``concordia_env.encoding.OBSERVATION_SIZE``, ``concordia_env.engine.NUM_ACTIONS``
actions), bounds the header's nesting (``weights.MAX_HEADER_DEPTH``), requires every array
finite and of sane magnitude (:data:`MAX_WEIGHT`) and the observation scale positive for
bounded features, and raises ``FileNotFoundError`` / ``ValueError`` naming the file and the
problem. A policy trained for another map or player count than the game's is refused when
it is asked to play (:func:`check_trained_for`). :meth:`NumpyPolicy.save` writes each file to
a temporary file in the same directory, then renames it over the target, so a reader never
sees half a file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env import encoding
from concordia_env.engine import NUM_ACTIONS

from .base import sample_softmax
from .weights import (  # noqa: F401 - the file format's names, re-exported: they lived here
    MAX_HEADER_DEPTH,
    Layout,
    PairFormat,
    check_header_map,
    check_players,
    json_depth,
    pair_files,
    read_json_header,
    read_pair,
    write_pair,
)

#: the ``format`` field of every header this module writes
FORMAT_NAME = "concordia-env-numpy-policy"
#: the only ``format_version`` this module reads and writes
FORMAT_VERSION = 1
#: dtypes the layer weights may be stored in (the forward pass is float32 whatever the storage)
STORAGE_DTYPES = ("float32", "float16")
#: the scaling rule, in words, as the header states it
SCALING_RULE = "x * scale where the feature is bounded, log1p(max(x, 0)) where unbounded"
#: the largest magnitude a weight, bias or scale may have. Trained networks stay far below it (the
#: released ones below 2); a larger value is a damaged or hostile file whose activations would
#: overflow to inf and NaN in play.
MAX_WEIGHT = 1e4

#: activation name (torch's class name) -> numpy function
ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Tanh": np.tanh,
    "ReLU": lambda x: np.maximum(x, np.float32(0.0)),
    "ELU": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, np.float32(0.0)))),
    "LeakyReLU": lambda x: np.where(x > 0, x, np.float32(0.01) * x),
}

Layers = Sequence[tuple[np.ndarray, np.ndarray]]

#: ``(STEM.npz, STEM.json)`` for ``STEM``, ``STEM.npz`` or ``STEM.json`` (:func:`concordia_env.agents.weights.pair_files`)
policy_files = pair_files


def observation_scaling(high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(scale, unbounded)`` for the network input: a feature with a finite upper bound is
    multiplied by ``1 / max(bound, 1)`` (so it lies in [0, 1]); an unbounded one (coins, VP,
    the turn counter) becomes ``log1p(x)``. Shared by the torch features extractor
    (:class:`concordia_env.training.nets.ObservationScaler`) and :class:`NumpyPolicy`, so
    both see the same input."""
    high = np.asarray(high, dtype=np.float64)
    unbounded = ~np.isfinite(high)
    scale = np.where(unbounded, 0.0, 1.0 / np.maximum(np.where(unbounded, 1.0, high), 1.0))
    return scale.astype(np.float32), unbounded


def scale_observation(obs: np.ndarray, scale: np.ndarray, unbounded: np.ndarray) -> np.ndarray:
    """The network input of raw observation(s) ``obs`` (see :func:`observation_scaling`)."""
    x = np.asarray(obs, dtype=np.float32)
    return np.where(unbounded, np.log1p(np.maximum(x, 0.0)), x * scale).astype(np.float32)


def _check_layers(layers: Layers, activation: str, where: str) -> None:
    """``ValueError`` unless ``layers`` chain OBSERVATION_SIZE inputs to NUM_ACTIONS logits."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"{where}: unsupported activation {activation!r}; supported: {sorted(ACTIVATIONS)}")
    size = encoding.OBSERVATION_SIZE  # read now: the layout may grow between releases
    if not layers:
        raise ValueError(f"{where}: a policy needs at least one layer")
    n_in = size
    for i, (w, b) in enumerate(layers):
        if w.ndim != 2 or b.ndim != 1 or w.shape[0] != b.shape[0]:
            raise ValueError(f"{where}: layer {i} has weight {w.shape} and bias {b.shape}; "
                             f"expected (out, in) and (out,)")
        if w.shape[1] != n_in:
            what = (f"policy layers must map {size} inputs (concordia_env.encoding.OBSERVATION_SIZE)"
                    if i == 0 else f"layer {i} must take the {n_in} outputs of layer {i - 1}")
            raise ValueError(f"{where}: layer {i} takes {w.shape[1]} inputs; {what}")
        n_in = w.shape[0]
    if n_in != NUM_ACTIONS:
        raise ValueError(f"{where}: policy layers must map {size} inputs to {NUM_ACTIONS} logits "
                         f"(concordia_env.engine.NUM_ACTIONS), the last layer gives {n_in}")


def check_weights(named: Iterable[tuple[str, np.ndarray]]) -> None:
    """``ValueError`` naming the first array of ``(name, array)`` pairs that holds a non-finite value
    (NaN or inf) or one of magnitude above :data:`MAX_WEIGHT`."""
    for name, a in named:
        a = np.asarray(a)
        if not np.isfinite(a).all():
            raise ValueError(f"{name} has non-finite values (NaN or inf)")
        top = float(np.abs(a).max(initial=0.0))
        if top > MAX_WEIGHT:
            raise ValueError(f"{name} has a value of magnitude {top:.3g}, above {MAX_WEIGHT:g}: not the weights "
                             f"of a trained network (the released ones stay below 2)")


def check_scaling(scale: np.ndarray, unbounded: np.ndarray) -> None:
    """``ValueError`` unless the observation scaling is usable: every ``scale`` finite and at most
    :data:`MAX_WEIGHT`, and positive for every bounded feature (it is ``1 / bound``: a zero would
    silence that input; the unbounded features take ``log1p`` and ignore their scale)."""
    check_weights([("observation.scale", scale)])
    bad = np.flatnonzero(~(np.asarray(scale)[~np.asarray(unbounded, bool)] > 0))
    if bad.size:
        first = int(np.flatnonzero(~np.asarray(unbounded, bool))[bad[0]])
        raise ValueError(f"observation.scale is zero or negative for {bad.size} bounded feature(s), the first "
                         f"at index {first}: a bounded feature's scale is 1 / its bound, always positive")


def check_trained_for(net: Any, map_name: str, num_players: int | None = None) -> None:
    """``ValueError`` naming the network's file (or its name) if ``net`` (a :class:`NumpyPolicy` or
    :class:`~concordia_env.agents.value_net.ValueNet`) was trained for another map or player
    count than the game's (``num_players`` None: not checked). A network that does not record
    them plays any game."""
    where = str(net.path) if getattr(net, "path", None) is not None else f"network {getattr(net, 'name', '')!r}"
    if net.map_name is not None and net.map_name != map_name:
        raise ValueError(f"{where}: trained for the {net.map_name} map, but this game is on {map_name}; "
                         f"play a network trained for {map_name}")
    players = getattr(net, "players", None)
    if players is not None and num_players is not None and num_players not in players:
        raise ValueError(f"{where}: trained for {', '.join(map(str, players))} players, but this game has "
                         f"{num_players}")


class NumpyPolicy:
    """An actor MLP (observation scaling -> Linear/activation layers -> action logits) in numpy.

    Args:
        layers: ``(weight (out, in), bias (out,))`` per Linear layer, first taking
            ``OBSERVATION_SIZE`` inputs, last giving ``NUM_ACTIONS`` logits.
        activation: a key of :data:`ACTIVATIONS`, applied between layers.
        scale, unbounded: the observation scaling (see :func:`observation_scaling`).
        name: what opponent pools and logs call it.
        map_name: the board it was trained on, if known (saved in the header).
        metadata: free-form JSON-able facts saved in the header (source file, steps...).

        players: the player counts it was trained for, if known (saved in the header).
        path: the file it was read from (:meth:`load` sets it; messages name it).

    ``ValueError`` for shapes that do not chain, an unknown activation, non-finite or huge values
    (:func:`check_weights`) or an unusable observation scaling (:func:`check_scaling`).
    """

    def __init__(self, layers: Layers, activation: str, scale: np.ndarray, unbounded: np.ndarray,
                 name: str = "policy", map_name: str | None = None,
                 metadata: dict[str, Any] | None = None, players: Sequence[int] | None = None,
                 path: Path | None = None) -> None:
        where = f"policy {name!r}"
        layers = [(np.asarray(w), np.asarray(b)) for w, b in layers]
        _check_layers(layers, activation, where)
        # float32 compute whatever the storage: contiguous copies make the matmuls fast
        self.layers = [(np.ascontiguousarray(w, np.float32), np.ascontiguousarray(b, np.float32)) for w, b in layers]
        try:
            check_weights([(f"layer {i} {part}", a) for i, lay in enumerate(self.layers)
                           for part, a in zip(("weight", "bias"), lay)])
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        self.scale = np.ascontiguousarray(scale, np.float32)
        self.unbounded = np.ascontiguousarray(unbounded, bool)
        size = encoding.OBSERVATION_SIZE
        if self.scale.shape != (size,) or self.unbounded.shape != (size,):
            raise ValueError(f"{where}: observation scaling has shapes {self.scale.shape} and "
                             f"{self.unbounded.shape}, expected ({size},)")
        try:
            check_scaling(self.scale, self.unbounded)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        self.activation = activation
        self.name = name
        self.map_name = map_name
        self.players = check_players(players, where)
        self.path = path
        self.metadata = dict(metadata or {})

    # ------------------------------------------------------------ construction
    @classmethod
    def from_bounds(cls, layers: Layers, activation: str, high: np.ndarray, name: str = "snapshot",
                    **kw: Any) -> NumpyPolicy:
        """A policy whose input scaling comes from the observation space's upper bounds ``high``."""
        scale, unbounded = observation_scaling(high)
        return cls(layers, activation, scale, unbounded, name=name, **kw)

    @classmethod
    def from_policy(cls, policy: Any, name: str = "snapshot", **kw: Any) -> NumpyPolicy:
        """Copy the actor of an sb3 ``MaskableActorCriticPolicy`` whose features extractor is
        :class:`concordia_env.training.nets.ObservationScaler` and whose policy net is
        Linear/activation layers. Reads torch tensors without importing torch here."""
        extractor = policy.pi_features_extractor
        if type(extractor).__name__ != "ObservationScaler":
            raise ValueError(f"a numpy policy needs the ObservationScaler features extractor, "
                             f"not {type(extractor).__name__}")
        layers: list[tuple[np.ndarray, np.ndarray]] = []
        activation = None
        for module in list(policy.mlp_extractor.policy_net) + [policy.action_net]:
            kind = type(module).__name__
            if kind == "Linear":
                layers.append((module.weight.detach().cpu().numpy().copy(),
                               module.bias.detach().cpu().numpy().copy()))
            elif kind in ACTIVATIONS and activation in (None, kind):
                activation = kind
            else:
                raise ValueError(f"a numpy policy cannot copy a {kind} layer")
        # the extractor's own buffers, not a recomputation from the space: they are what the
        # saved model was trained with, even if the package's bounds changed since
        scale = extractor.scale.detach().cpu().numpy()
        unbounded = extractor.unbounded.detach().cpu().numpy()
        return cls(layers, activation or "Tanh", scale, unbounded, name=name, **kw)

    # ------------------------------------------------------------ play
    @property
    def layer_sizes(self) -> list[int]:
        """Inputs, then the outputs of every layer: ``[OBSERVATION_SIZE, ..., NUM_ACTIONS]``."""
        return [int(self.layers[0][0].shape[1])] + [int(w.shape[0]) for w, _ in self.layers]

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Action logits (float32) for one observation, or a batch of them as rows."""
        x = scale_observation(obs, self.scale, self.unbounded)
        act = ACTIVATIONS[self.activation]
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            x = x @ w.T + b
            if i < last:
                x = act(x)
        return x

    def choose(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator,
               deterministic: bool = False) -> int:
        """A legal action: the legal one of highest logit (deterministic), or one drawn from
        the softmax of the legal actions' logits with ``rng``."""
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("action_mask allows no action: this seat is not deciding now")
        if legal.size == 1:  # forced move: no need to ask the network
            return int(legal[0])
        s = self.logits(obs)[legal].astype(np.float64)
        if deterministic:
            return int(legal[int(np.argmax(s))])
        return sample_softmax(legal, s, rng)

    # ------------------------------------------------------------ files
    def arrays(self, dtype: str = "float32") -> dict[str, np.ndarray]:
        """The ``.npz`` contents, weights stored as ``dtype``."""
        if dtype not in STORAGE_DTYPES:
            raise ValueError(f"storage dtype must be one of {STORAGE_DTYPES}, got {dtype!r}")
        out: dict[str, np.ndarray] = {}
        for i, (w, b) in enumerate(self.layers):
            out[f"layers.{i}.weight"] = w.astype(dtype)
            out[f"layers.{i}.bias"] = b.astype(dtype)
        out["observation.scale"] = self.scale
        out["observation.unbounded"] = self.unbounded
        return out

    def header(self, dtype: str, npz_sha256: str) -> dict[str, Any]:
        """The ``.json`` header for weights stored as ``dtype`` in an ``.npz`` of that hash."""
        return {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "name": self.name,
            "map": self.map_name,
            **({"players": list(self.players)} if self.players is not None else {}),
            "architecture": {"type": "mlp", "layer_sizes": self.layer_sizes, "activation": self.activation,
                             "output": "action logits"},
            "observation": {"size": int(self.scale.shape[0]), "scaling": SCALING_RULE,
                            "unbounded_features": int(self.unbounded.sum())},
            "num_actions": NUM_ACTIONS,
            "dtype": dtype,
            "npz_sha256": npz_sha256,
            "metadata": self.metadata,
        }

    def save(self, path: str | os.PathLike, dtype: str = "float32") -> tuple[Path, Path]:
        """Write ``STEM.npz`` then ``STEM.json`` (``path`` is the stem or either file), each
        atomically; returns both paths. The output depends only on the policy (no time stamps),
        so exporting the same weights twice gives the same bytes."""
        # npz first: a crash in between leaves a header whose hash names the old arrays, which
        # load() refuses, rather than a header that silently describes other weights
        return write_pair(path, self.arrays(dtype), lambda digest: self.header(dtype, digest))

    @classmethod
    def load(cls, path: str | os.PathLike) -> NumpyPolicy:
        """Read and validate the pair at ``path`` (stem, ``.npz`` or ``.json``).

        ``FileNotFoundError`` for a missing file; ``ValueError`` naming the file and the
        problem for anything else: corrupt header, unknown format or version, corrupt or
        truncated ``.npz``, arrays that do not match the header, a header that does not match
        this package (observation size, number of actions), non-finite weights."""
        header, a, npz_path, _ = read_pair(path, POLICY_FORMAT)
        arch = header["architecture"]
        layers = [(a[f"layers.{i}.weight"], a[f"layers.{i}.bias"]) for i in range(len(arch["layer_sizes"]) - 1)]
        name = header["name"] if isinstance(header.get("name"), str) else npz_path.stem
        try:
            return cls(layers, arch["activation"], a["observation.scale"], a["observation.unbounded"], name=name,
                       map_name=header.get("map"), metadata=header.get("metadata") or {},
                       players=header.get("players"), path=npz_path)
        except ValueError as exc:  # huge weights, a bad scale or player list: name the file, not just the policy
            raise ValueError(f"{npz_path}: {exc}") from None

    def __repr__(self) -> str:
        return f"<NumpyPolicy {self.name!r} {self.activation} {self.layer_sizes}>"


# ------------------------------------------------------------ the file format
def _check_policy_fields(header: dict[str, Any], json_path: Path) -> None:
    """``ValueError`` naming ``json_path`` unless the header's own fields of a numpy policy match
    this package: the last layer and ``num_actions`` give NUM_ACTIONS logits, ``dtype`` a storage dtype."""
    sizes = header["architecture"]["layer_sizes"]
    for what, value in (("architecture layer_sizes[-1]", sizes[-1]), ("num_actions", header["num_actions"])):
        if value != NUM_ACTIONS:
            raise ValueError(f"{json_path}: {what} is {value!r}, but this package has {NUM_ACTIONS} actions "
                             f"(concordia_env.engine.NUM_ACTIONS); retrain the policy")
    if header["dtype"] not in STORAGE_DTYPES:
        raise ValueError(f"{json_path}: dtype {header['dtype']!r} is not one of {STORAGE_DTYPES}")


def _expected_arrays(header: dict[str, Any]) -> Layout:
    """Name -> (shape, dtype) of every array the header's architecture and ``dtype`` imply."""
    sizes, dtype = header["architecture"]["layer_sizes"], np.dtype(header["dtype"])
    expected: Layout = {}
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        expected[f"layers.{i}.weight"] = ((n_out, n_in), dtype)
        expected[f"layers.{i}.bias"] = ((n_out,), dtype)
    expected["observation.scale"] = ((sizes[0],), np.dtype("float32"))
    expected["observation.unbounded"] = ((sizes[0],), np.dtype("bool"))
    return expected


#: the numpy policy pair, as :func:`concordia_env.agents.weights.read_pair` checks it
POLICY_FORMAT = PairFormat(
    name=FORMAT_NAME, version=FORMAT_VERSION, kind="numpy policy", fields=("num_actions", "dtype"),
    min_layers=2, activations=ACTIVATIONS, arrays=_expected_arrays, check=_check_policy_fields,
    again="export the policy again with this package")
