"""Packaging: the sdist holds the whole source tree the tests need, the wheel installs one namespaced
package with its data and typing marker, and the version has one source.

Both archives are built once per session with ``python -m build`` (the sdist first, then the wheel
from the unpacked sdist, so the wheel also proves the sdist builds)."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import concordia_env

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11 (the CI runs 3.11)

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# in git but deliberately not shipped: repository settings, not sources
NOT_IN_SDIST = {".gitignore"}
# written by the build backend into every sdist
SDIST_GENERATED = re.compile(r"^(PKG-INFO|setup\.cfg|concordia_env\.egg-info/.*)$")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (sdist,), (wheel,) = out.glob("*.tar.gz"), out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


def git_files() -> set[str]:
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("not a git checkout (e.g. an unpacked sdist): nothing to compare the sdist with")
    return {f for f in proc.stdout.split("\0") if f and (ROOT / f).is_file()}


def test_sdist_holds_every_tracked_source_file_and_nothing_else(built):
    with tarfile.open(built["sdist"]) as tar:
        names = {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()}
    shipped = {n for n in names if not SDIST_GENERATED.match(n)}
    expected = git_files() - NOT_IN_SDIST
    assert not expected - shipped, f"missing from the sdist: {sorted(expected - shipped)[:20]}"
    assert not shipped - expected, f"in the sdist but not in git: {sorted(shipped - expected)[:20]}"


def test_wheel_installs_only_the_concordia_env_namespace(built):
    with zipfile.ZipFile(built["wheel"]) as whl:
        names = whl.namelist()
        top = {n.split("/", 1)[0] for n in names}
        dist_info = next(t for t in top if t.endswith(".dist-info"))
        entry_points = whl.read(f"{dist_info}/entry_points.txt").decode()
        wheel_meta = whl.read(f"{dist_info}/METADATA").decode()
    assert top == {"concordia_env", dist_info}, top
    for needed in ("concordia_env/py.typed", "concordia_env/display/viewer/template.html",
                   "concordia_env/display/viewer/draw.js", "concordia_env/display/viewer/draw.css",
                   "concordia_env/server/page.html", "concordia_env/data/maps.json",
                   "concordia_env/data/components.json", f"{dist_info}/licenses/LICENSE",
                   # the picture's fonts and their licence (no matplotlib needed for them)
                   "concordia_env/display/fonts/DejaVuSans.ttf", "concordia_env/display/fonts/DejaVuSans-Bold.ttf",
                   "concordia_env/display/fonts/DejaVuSans-Oblique.ttf", "concordia_env/display/fonts/LICENSE_DEJAVU",
                   f"{dist_info}/licenses/concordia_env/display/fonts/LICENSE_DEJAVU"):
        assert needed in names, needed
    policies = {n for n in names if n.startswith("concordia_env/agents/policies/")}
    assert {f"concordia_env/agents/policies/{kind}_{m}.{ext}" for kind in ("ppo", "turn", "completion")
            for m in ("imperium", "italia") for ext in ("npz", "json")} <= policies
    assert not [n for n in names if n.endswith(".zip")], "torch policy zips belong in releases/"
    assert not [n for n in names if n.startswith(("tests/", "results/", "releases/", "examples/"))]
    assert "concordia = concordia_env.cli:main" in entry_points
    assert "License-Expression: MIT" in wheel_meta
    assert f"Version: {concordia_env.__version__}" in wheel_meta


def test_version_has_one_source():
    assert "version" in PYPROJECT["project"]["dynamic"] and "version" not in PYPROJECT["project"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "concordia_env.__version__"}
    assert metadata.version("concordia-env") == concordia_env.__version__


def test_project_metadata_is_complete():
    project = PYPROJECT["project"]
    assert project["license"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert any(c.startswith("Topic :: Games/Entertainment") for c in project["classifiers"])
    assert "Typing :: Typed" in project["classifiers"]
    assert {"Homepage", "Documentation", "Issues", "Source"} <= set(project["urls"])
    assert set(project["optional-dependencies"]) >= {"train", "dev", "notebook", "plot"}
    # playing never needs torch: it is only in the train extra; nor matplotlib (the plot extra; train, dev and
    # notebook bring it too, for the curves, the picture tests and the notebooks' plots)
    assert not [d for d in project["dependencies"]
                if d.startswith(("torch", "stable-baselines3", "sb3-contrib", "matplotlib"))]
    for extra in ("plot", "train", "dev", "notebook"):
        assert any(d.startswith("matplotlib") for d in project["optional-dependencies"][extra]), extra
