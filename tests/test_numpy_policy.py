"""concordia_env.agents.numpy_policy: the .npz + .json format (round trip, atomic and reproducible
writes, every bad-file case refused with a message naming the file) and the export tool
(concordia_env.training.export_policy) on a tiny MaskablePPO, CLI included."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import concordia_env as ce
from concordia_env import encoding
from concordia_env._internal.files import npz_bytes
from concordia_env.agents import numpy_policy as NP
from concordia_env.agents.numpy_policy import NumpyPolicy, observation_scaling, policy_files
from concordia_env.engine import NUM_ACTIONS
from concordia_env.scenario import play_random
from concordia_env.training.selfplay import observation_space

REPO = Path(__file__).resolve().parents[1]
SIZE = encoding.OBSERVATION_SIZE


def random_policy(seed: int = 0, hidden: int = 8, activation: str = "Tanh", name: str = "tiny") -> NumpyPolicy:
    rng = np.random.default_rng(seed)
    sizes = (SIZE, hidden, NUM_ACTIONS)
    layers = [(rng.normal(size=(b, a)).astype(np.float32) * 0.1, rng.normal(size=b).astype(np.float32))
              for a, b in zip(sizes, sizes[1:])]
    return NumpyPolicy.from_bounds(layers, activation, observation_space("italia").high, name=name,
                                   map_name="italia", metadata={"note": "test"})


def positions(n: int = 12, map_name: str = "italia", players: int = 3) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observation, mask) of the deciding seat at ``n`` points of random games."""
    out = []
    for k in range(n):
        state = play_random(ce.new_game(map_name, players, seed=k), 5 + 11 * k, seed=k)
        if not state.is_terminal():
            out.append((encoding.observation(state, state.current_player), state.legal_action_mask()))
    return out


@pytest.fixture()
def saved(tmp_path) -> Path:
    """A valid pair ``tmp_path/tiny.npz`` + ``.json``; returns the stem."""
    random_policy().save(tmp_path / "tiny")
    return tmp_path / "tiny"


def read_header(stem: Path) -> dict:
    return json.loads(stem.with_suffix(".json").read_text())


def write_header(stem: Path, header: dict) -> None:
    stem.with_suffix(".json").write_text(json.dumps(header))


def write_npz(stem: Path, data: bytes) -> None:
    """Replace the arrays and make the header's hash match, so the test reaches the array checks."""
    import hashlib

    stem.with_suffix(".npz").write_bytes(data)
    header = read_header(stem)
    header["npz_sha256"] = hashlib.sha256(data).hexdigest()
    write_header(stem, header)


# ------------------------------------------------------------ round trip and writing
def test_round_trip_keeps_every_logit_and_the_header_describes_the_file(saved):
    policy = random_policy()
    loaded = NumpyPolicy.load(saved)
    for obs, _ in positions(6):
        np.testing.assert_array_equal(loaded.logits(obs), policy.logits(obs))
    assert loaded.layer_sizes == [SIZE, 8, NUM_ACTIONS] and loaded.activation == "Tanh"
    assert loaded.name == "tiny" and loaded.map_name == "italia" and loaded.metadata == {"note": "test"}
    header = read_header(saved)
    assert header["format"] == NP.FORMAT_NAME and header["format_version"] == NP.FORMAT_VERSION
    assert header["architecture"]["layer_sizes"] == [SIZE, 8, NUM_ACTIONS]
    assert header["observation"]["size"] == SIZE and header["num_actions"] == NUM_ACTIONS
    assert header["observation"]["unbounded_features"] == int(observation_scaling(
        observation_space("italia").high)[1].sum())
    assert header["dtype"] == "float32"
    # the stem, either file, or a Path all name the same pair
    for name in (saved, saved.with_suffix(".npz"), str(saved.with_suffix(".json"))):
        np.testing.assert_array_equal(NumpyPolicy.load(name).layers[0][0], loaded.layers[0][0])


def test_writes_are_reproducible_and_leave_no_temporary_file(tmp_path):
    a, b = random_policy().save(tmp_path / "a" / "p"), random_policy().save(tmp_path / "b" / "p")
    assert a[0].read_bytes() == b[0].read_bytes() and a[1].read_bytes() == b[1].read_bytes()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["p.json", "p.npz"]
    assert oct(a[0].stat().st_mode & 0o777) == oct(0o644)


def test_a_failed_write_keeps_the_previous_file(saved, monkeypatch):
    before = {p: p.read_bytes() for p in policy_files(saved)}

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(NP.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        random_policy(seed=1).save(saved)
    assert {p: p.read_bytes() for p in policy_files(saved)} == before
    assert sorted(p.name for p in saved.parent.iterdir()) == ["tiny.json", "tiny.npz"]  # temp file removed


def test_float16_storage_halves_the_file_and_plays_in_float32(tmp_path):
    policy = random_policy(hidden=64)
    full, half = policy.save(tmp_path / "full"), policy.save(tmp_path / "half", dtype="float16")
    assert half[0].stat().st_size < 0.6 * full[0].stat().st_size
    loaded = NumpyPolicy.load(tmp_path / "half")
    assert read_header(tmp_path / "half")["dtype"] == "float16" and loaded.layers[0][0].dtype == np.float32
    for obs, _ in positions(4):
        np.testing.assert_allclose(loaded.logits(obs), policy.logits(obs), atol=0.05)
    with pytest.raises(ValueError, match="storage dtype"):
        policy.save(tmp_path / "x", dtype="int8")


def test_choose_is_legal_argmax_or_seeded_sample():
    policy = random_policy(hidden=16)
    for obs, mask in positions(6):
        legal = np.flatnonzero(mask)
        best = policy.choose(obs, mask, np.random.default_rng(0), deterministic=True)
        assert best == legal[np.argmax(policy.logits(obs)[legal])]
        draws = [policy.choose(obs, mask, np.random.default_rng(s)) for s in range(30)]
        assert set(draws) <= set(legal.tolist())
        assert draws == [policy.choose(obs, mask, np.random.default_rng(s)) for s in range(30)]
    with pytest.raises(ValueError, match="no action"):
        policy.choose(obs, np.zeros(NUM_ACTIONS, np.int8), np.random.default_rng(0))


def test_constructor_refuses_bad_networks():
    good = random_policy()
    with pytest.raises(ValueError, match="activation"):
        NumpyPolicy(good.layers, "Swish", good.scale, good.unbounded)
    bad = [(good.layers[0][0][:, :10], good.layers[0][1]), good.layers[1]]
    with pytest.raises(ValueError, match=f"map {SIZE} inputs"):
        NumpyPolicy(bad, "Tanh", good.scale, good.unbounded)
    nan = [(good.layers[0][0].copy(), good.layers[0][1]), good.layers[1]]
    nan[0][0][0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        NumpyPolicy(nan, "Tanh", good.scale, good.unbounded)
    huge = [(good.layers[0][0] * 1e6, good.layers[0][1]), good.layers[1]]
    with pytest.raises(ValueError, match=r"policy 'tiny': layer 0 weight has a value of magnitude .*above 10000"):
        NumpyPolicy(huge, "Tanh", good.scale, good.unbounded, name="tiny")
    for bad_scale in (np.nan, np.inf, 0.0, -1.0):
        scale = good.scale.copy()
        scale[_first_bounded()] = bad_scale
        with pytest.raises(ValueError, match="observation.scale"):
            NumpyPolicy(good.layers, "Tanh", scale, good.unbounded)
    with pytest.raises(ValueError, match="players must be a list"):
        NumpyPolicy(good.layers, "Tanh", good.scale, good.unbounded, players=[0])


def test_the_released_weights_are_far_inside_the_bound():
    """MAX_WEIGHT is far above what training produces: the released pairs load, with room."""
    for path in sorted((REPO / "concordia_env" / "agents" / "policies").glob("*.npz")):
        with np.load(path) as npz:
            top = max(float(np.abs(npz[k]).max()) for k in npz.files if npz[k].dtype.kind == "f")
        assert top < NP.MAX_WEIGHT / 1000, path


def test_header_depth_is_counted_outside_strings():
    assert NP.json_depth('{"a": [1, {"b": "[[[[{{{"}], "c": "\\"}') == 3
    assert NP.json_depth("[" * 50 + "]" * 50) == 50 and NP.json_depth("7") == 0


def test_players_round_trip_and_are_optional(tmp_path):
    policy = random_policy()
    policy.save(tmp_path / "any")
    assert "players" not in read_header(tmp_path / "any") and NumpyPolicy.load(tmp_path / "any").players is None
    NumpyPolicy(policy.layers, "Tanh", policy.scale, policy.unbounded, players=[3, 2]).save(tmp_path / "two")
    assert read_header(tmp_path / "two")["players"] == [2, 3]
    assert NumpyPolicy.load(tmp_path / "two").players == (2, 3)


# ------------------------------------------------------------ every bad file, named
def _edit_header(**changes):
    def edit(stem: Path) -> None:
        header = read_header(stem)
        for key, value in changes.items():
            if value is _DROP:
                header.pop(key)
            elif key == "layer_sizes" or key == "activation":
                header["architecture"][key] = value
            elif key == "observation_size":
                header["observation"]["size"] = value
            else:
                header[key] = value
        write_header(stem, header)
    return edit


_DROP = object()


def _arrays(stem: Path) -> dict[str, np.ndarray]:
    with np.load(stem.with_suffix(".npz")) as npz:
        return {k: npz[k] for k in npz.files}


def _nan_weights(stem: Path) -> None:
    arrays = _arrays(stem)
    arrays["layers.1.weight"][3, 2] = np.inf
    write_npz(stem, npz_bytes(arrays))


def _set_array(key: str, index: tuple[int, ...], value: float):
    def edit(stem: Path) -> None:
        arrays = _arrays(stem)
        arrays[key][index] = value
        write_npz(stem, npz_bytes(arrays))
    return edit


def _first_bounded() -> int:
    return int(np.flatnonzero(~random_policy().unbounded)[0])


def _deep_header(opener: str, closer: str, depth: int = 100_000):
    return lambda s: s.with_suffix(".json").write_text(opener * depth + "1" + closer * depth)


def _pickled_array(stem: Path) -> None:
    import io

    arrays = _arrays(stem)
    arrays["layers.1.bias"] = np.array([{"evil": 1}] * NUM_ACTIONS, dtype=object)
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # np.savez pickles object arrays
    write_npz(stem, buf.getvalue())


def _other_export(stem: Path) -> None:
    random_policy(seed=5).save(stem.parent / "other")
    stem.with_suffix(".npz").write_bytes((stem.parent / "other.npz").read_bytes())


BAD_FILES = {
    # case: (how to break the pair, the file the message names, exception, message pattern)
    "missing npz": (lambda s: s.with_suffix(".npz").unlink(), ".npz", FileNotFoundError, "not found"),
    "missing json": (lambda s: s.with_suffix(".json").unlink(), ".json", FileNotFoundError, "header not found"),
    "json not JSON": (lambda s: s.with_suffix(".json").write_text('{"format": '), ".json", ValueError,
                      "corrupt JSON header"),
    "json empty": (lambda s: s.with_suffix(".json").write_text(""), ".json", ValueError, "corrupt JSON header"),
    "json not an object": (lambda s: s.with_suffix(".json").write_text("[1, 2]"), ".json", ValueError,
                           "corrupt JSON header"),
    "json binary": (lambda s: s.with_suffix(".json").write_bytes(b"\xff\xfe\x00"), ".json", ValueError,
                    "corrupt JSON header"),
    "other format": (_edit_header(format="keras"), ".json", ValueError, "not a numpy policy header"),
    "format version 2": (_edit_header(format_version=2), ".json", ValueError, "unknown format version 2"),
    "no format version": (_edit_header(format_version=_DROP), ".json", ValueError, "unknown format version None"),
    "header lacks a field": (_edit_header(architecture=_DROP), ".json", ValueError, "lacks architecture"),
    "unknown activation": (_edit_header(activation="Swish"), ".json", ValueError, "unsupported activation"),
    "observation size": (_edit_header(layer_sizes=[SIZE - 1, 8, NUM_ACTIONS]), ".json", ValueError,
                         rf"is {SIZE - 1}.*{SIZE} values \(concordia_env.encoding.OBSERVATION_SIZE\)"),
    "stated observation size": (_edit_header(observation_size=2000), ".json", ValueError,
                                "observation size is 2000"),
    "number of actions": (_edit_header(layer_sizes=[SIZE, 8, 400]), ".json", ValueError,
                          r"is 400.*402 actions \(concordia_env.engine.NUM_ACTIONS\)"),
    "num_actions field": (_edit_header(num_actions=401), ".json", ValueError, "num_actions is 401"),
    "bad layer sizes": (_edit_header(layer_sizes=[SIZE]), ".json", ValueError, "at least two"),
    "storage dtype": (_edit_header(dtype="int8"), ".json", ValueError, "dtype 'int8'"),
    "bad hash field": (_edit_header(npz_sha256="abc"), ".json", ValueError, "sha256"),
    "hidden size differs": (_edit_header(layer_sizes=[SIZE, 16, NUM_ACTIONS]), ".npz", ValueError,
                            r"'layers.0.weight' is float32 \(8, 2378\), its header tiny.json says float32 \(16, 2378\)"),
    "layer count differs": (_edit_header(layer_sizes=[SIZE, 8, 8, NUM_ACTIONS]), ".npz", ValueError,
                            r"missing \['layers.2.bias', 'layers.2.weight'\]"),
    "dtype differs": (_edit_header(dtype="float16"), ".npz", ValueError, "its header tiny.json says float16"),
    "npz truncated": (lambda s: s.with_suffix(".npz").write_bytes(s.with_suffix(".npz").read_bytes()[:5000]),
                      ".npz", ValueError, "corrupt or truncated"),
    "npz not a zip": (lambda s: s.with_suffix(".npz").write_bytes(b"definitely not a zip file"), ".npz",
                      ValueError, "corrupt or truncated"),
    "npz of another export": (_other_export, ".npz", ValueError, "does not match its header tiny.json"),
    "non-finite weights": (_nan_weights, ".npz", ValueError, r"'layers.1.weight' has non-finite"),
    "pickled object array": (_pickled_array, ".npz", ValueError, r"'layers.1.bias' is object \(402,\)"),
    "huge finite weight": (_set_array("layers.0.weight", (0, 0), 1e30), ".npz", ValueError,
                           r"layer 0 weight has a value of magnitude 1e\+30, above 10000"),
    "NaN scale": (_set_array("observation.scale", (0,), np.nan), ".npz", ValueError,
                  r"'observation.scale' has non-finite values"),
    "zero scale": (_set_array("observation.scale", (_first_bounded(),), 0.0), ".npz", ValueError,
                   rf"observation.scale is zero or negative for 1 bounded feature\(s\), the first at index "
                   rf"{_first_bounded()}"),
    "header nested 100k deep": (_deep_header("[", "]"), ".json", ValueError, "nest 100000 deep"),
    "header object nested deep": (_deep_header('{"a": ', "}", 5000), ".json", ValueError, "nest 5000 deep"),
    "unknown map": (_edit_header(map="gallia"), ".json", ValueError, "map must be one of"),
    "bad players": (_edit_header(players=[1, 9]), ".json", ValueError, "players must be a list of player counts"),
    "players the map forbids": (_edit_header(players=[2, 5]), ".json", ValueError,
                                r"players \[2, 5\] include counts the italia map does not allow"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_every_bad_file_is_refused_naming_the_file(saved, case):
    breaks, suffix, error, pattern = BAD_FILES[case]
    breaks(saved)
    with pytest.raises(error) as info:
        NumpyPolicy.load(saved)
    message = str(info.value)
    assert str(saved.with_suffix(suffix)) in message, message
    assert info.match(pattern), message
    assert "\n" not in message and len(message) < 600, "one short line"


def test_a_corrupt_member_inside_a_valid_zip_is_refused(saved):
    # flip bytes inside the deflated data of one array: the zip directory still reads
    data = bytearray(saved.with_suffix(".npz").read_bytes())
    with zipfile.ZipFile(saved.with_suffix(".npz")) as zf:
        info = zf.getinfo("layers.0.weight.npy")
    start = info.header_offset + 30 + len(info.filename) + 100
    data[start:start + 64] = bytes(64)
    write_npz(saved, bytes(data))
    with pytest.raises(ValueError, match="corrupt or truncated") as info_:
        NumpyPolicy.load(saved)
    assert str(saved.with_suffix(".npz")) in str(info_.value)


def test_the_package_sizes_are_read_at_load_time(saved, monkeypatch):
    # the observation may grow: a pair of the old size must then be refused, not crash later
    monkeypatch.setattr(encoding, "OBSERVATION_SIZE", SIZE + 3)
    with pytest.raises(ValueError, match=rf"{SIZE + 3} values \(concordia_env.encoding.OBSERVATION_SIZE\)"):
        NumpyPolicy.load(saved)


def test_loading_never_unpickles(saved, monkeypatch):
    calls = []
    real = np.load
    monkeypatch.setattr(NP.np, "load", lambda *a, **kw: calls.append(kw) or real(*a, **kw))
    NumpyPolicy.load(saved)
    assert calls and all(kw.get("allow_pickle") is False for kw in calls)


# ------------------------------------------------------------ export from a stable-baselines3 zip
@pytest.fixture(scope="module")
def tiny_zip(tmp_path_factory) -> Path:
    """A randomly initialised MaskablePPO with the project's features extractor, saved."""
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from concordia_env.training.nets import ObservationScaler
    from concordia_env.training.selfplay import SingleLearnerEnv

    path = tmp_path_factory.mktemp("zip") / "tiny.zip"
    MaskablePPO("MlpPolicy", SingleLearnerEnv("italia", opponents="random"), n_steps=64, batch_size=64, seed=0,
                device="cpu", policy_kwargs={"features_extractor_class": ObservationScaler, "net_arch": [16, 16],
                                             "activation_fn": torch.nn.ReLU}).save(path)
    return path


class TinyEnv(gym.Env):
    """Just the spaces a model is built with (one that does not fit the game)."""

    def __init__(self, observation_space) -> None:
        self.observation_space = observation_space
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, True, False, {}


def run_export(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "concordia_env.training.export_policy", *args],
                          capture_output=True, text=True, timeout=300, cwd=REPO)


def test_export_cli_round_trip(tiny_zip, tmp_path):
    from concordia_env.agents.policy import PolicyAgent

    proc = run_export(str(tiny_zip), str(tmp_path / "out" / "tiny"), "--map", "italia")
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {tmp_path / 'out' / 'tiny.npz'}" in proc.stdout
    exported = NumpyPolicy.load(tmp_path / "out" / "tiny")
    assert exported.activation == "ReLU" and exported.layer_sizes == [SIZE, 16, 16, NUM_ACTIONS]
    assert exported.map_name == "italia" and exported.metadata["source"]["file"] == "tiny.zip"
    assert exported.metadata["algorithm"] == "MaskablePPO"
    torch_agent = PolicyAgent(tiny_zip)
    numpy_agent = PolicyAgent(tmp_path / "out" / "tiny.npz")
    assert numpy_agent.policy.algorithm == "numpy"
    for obs, mask in positions(20):
        assert numpy_agent.act(obs, mask) == torch_agent.act(obs, mask)


def test_export_is_reproducible_and_never_unpickles(tiny_zip, tmp_path):
    from concordia_env.training.export_policy import export

    # every pickled entry of the zip replaced by bytes that cannot be unpickled: export must not try
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(tiny_zip) as src, zipfile.ZipFile(broken, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "data":
                record = json.loads(data)
                for value in record.values():
                    if isinstance(value, dict) and ":serialized:" in value:
                        value[":serialized:"] = base64.b64encode(b"\x80\x05not a pickle").decode()
                data = json.dumps(record).encode()
            dst.writestr(item, data)
    a = export(tiny_zip, tmp_path / "a", map_name="italia")
    b = export(broken, tmp_path / "b", map_name="italia")
    assert a[0].read_bytes() == b[0].read_bytes()  # same weights, same bytes (no time stamps)
    again = export(tiny_zip, tmp_path / "again" / "a", map_name="italia")
    assert again[0].read_bytes() == a[0].read_bytes() and again[1].read_bytes() == a[1].read_bytes()


@pytest.mark.parametrize("case", ["missing", "not a zip", "data not an object", "ppo", "default extractor",
                                  "wrong size"])
def test_export_cli_rejects_bad_input_in_one_line(case, tmp_path):
    pytest.importorskip("sb3_contrib")
    path = tmp_path / "model.zip"
    if case == "missing":
        expected = "no such file"
    elif case == "not a zip":
        path.write_text("hello")
        expected = "not a stable-baselines3 model file"
    elif case == "data not an object":
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("data", "[1, 2, 3]")
        expected = "JSON list, not an object"
    else:
        from gymnasium import spaces
        from sb3_contrib import MaskablePPO
        from stable_baselines3 import PPO

        from concordia_env.training.selfplay import SingleLearnerEnv

        small = dict(n_steps=64, batch_size=32, policy_kwargs=dict(net_arch=[4]), device="cpu")
        env = SingleLearnerEnv("italia", opponents="random")
        if case == "ppo":
            PPO("MlpPolicy", env, **small).save(path)
            expected = re.escape("needs a MaskablePPO model (sb3-contrib), this is PPO")
        elif case == "default extractor":
            MaskablePPO("MlpPolicy", env, **small).save(path)
            expected = "needs the ObservationScaler features extractor"
        else:
            MaskablePPO("MlpPolicy", TinyEnv(spaces.Box(0, 1, (10,), np.float32)), **small).save(path)
            expected = rf"shape \(10,\), expected \({SIZE},\)"
    proc = run_export(str(path), str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr and lines[-1].startswith("python -m concordia_env.training.export_policy: "
                                                                    "error: ")
    assert str(path) in lines[-1] and re.search(expected, lines[-1]), lines[-1]
    assert not list(tmp_path.glob("out*"))


def test_export_cli_help():
    proc = run_export("--help")
    assert proc.returncode == 0 and "OUT_STEM.npz" in proc.stdout
