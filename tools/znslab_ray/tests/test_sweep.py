"""The Ray executor against the local one: `reproduce cczns --scale 0.002` run by both gives the
same report and the same runs (wall-clock fields aside), through a Ray head this test starts on
this machine; --resume runs only what is missing. About 7 minutes on 2 cores."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from znslab_ray.__main__ import main
from znslab_ray.sweep import find_znslab

SCALE = ["--scale", "0.002"]


def strip(v):
    """A run's JSON without its wall-clock fields and the emulator's own costs (its `emulator`
    block: wall time, memo hits, the process's peak RSS, which with --jobs 2 is every run's in
    one process and with Ray one run's), as the golden outputs leave them out."""
    if isinstance(v, dict):
        return {
            k: strip(x) for k, x in v.items() if not k.startswith("wall") and k != "emulator"
        }
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def report(folder: Path) -> str:
    """The report without its sentence of wall times."""
    text = (folder / "report.md").read_text()
    return re.sub(r"Their own wall times.*?(?=Version)", "", text, flags=re.S)


@pytest.fixture(scope="module")
def ray_head():
    ray_cli = Path(sys.executable).parent / "ray"
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    subprocess.run(
        [str(ray_cli), "start", "--head", "--num-cpus", "2", "--include-dashboard=false"],
        check=True,
        env=env,
    )
    yield "auto"
    subprocess.run([str(ray_cli), "stop", "--force"], check=False, env=env)


def test_a_ray_sweep_gives_the_local_executors_report(tmp_path: Path, ray_head: str):
    znslab = find_znslab()
    local, remote = tmp_path / "local", tmp_path / "ray"
    subprocess.run(
        [znslab, "reproduce", "cczns", "--output", str(local), "--jobs", "2"] + SCALE,
        check=True,
        capture_output=True,
    )
    assert main(["--address", ray_head, "reproduce", "cczns", "--output", str(remote)] + SCALE) == 0
    runs = sorted(p.name for p in local.glob("*.json") if p.name != "summary.json")
    assert len(runs) == 50
    assert runs == sorted(p.name for p in remote.glob("*.json") if p.name != "summary.json")
    for name in runs:
        a = strip(json.loads((local / name).read_text()))
        b = strip(json.loads((remote / name).read_text()))
        assert a == b, name
    assert report(local) == report(remote)

    # An interrupted sweep: two runs lost; --resume runs those two only, and the report is
    # the same again.
    for name in runs[:2]:
        (remote / name).unlink()
    out = subprocess.run(
        [sys.executable, "-m", "znslab_ray", "--address", ray_head, "reproduce", "cczns",
         "--output", str(remote), "--resume"] + SCALE,
        check=True,
        capture_output=True,
        text=True,
    )
    assert "2 runs as Ray tasks" in out.stderr, out.stderr
    assert report(local) == report(remote)


def test_a_run_that_fails_is_named(tmp_path: Path, ray_head: str):
    # A run list whose one run names a device that does not exist: the sweep says which.
    runs = tmp_path / "bad.toml"
    runs.write_text(
        '[[run]]\nname = "bad.json"\ntitle = "bad"\nseed = 1\ndevice = "no-such-device"\n'
        '[run.work]\nkind = "fio"\njob = "jobs/default.fio"\n'
    )
    code = main(["--address", ray_head, "run", str(runs), "--output", str(tmp_path / "o")])
    assert code == 1
    assert not (tmp_path / "o" / "bad.json").exists()
