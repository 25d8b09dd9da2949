"""The Ray executor: each run of a run list is one Ray task that runs `znslab run LIST --only
NAME` on its worker and returns the run's JSON; the driver writes each result into the output
folder as it arrives (so an interrupted sweep resumes with `--resume`, like the local one)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import ray


def find_znslab(given: str | None = None) -> str:
    """The znslab binary: `given`, else $ZNSLAB, else `znslab` on PATH, else this checkout's
    release build. Workers run the same path, so on a cluster it must exist on every node."""
    for candidate in (given, os.environ.get("ZNSLAB"), shutil.which("znslab")):
        if candidate:
            return os.path.abspath(candidate) if os.path.exists(candidate) else candidate
    here = Path(__file__).resolve().parents[3] / "target" / "release" / "znslab"
    if here.exists():
        return str(here)
    raise SystemExit(
        "znslab-ray: no znslab binary (give --znslab PATH, set ZNSLAB, or run "
        "`cargo build --release` in the checkout)"
    )


@ray.remote(num_cpus=1)
def _run_one(list_text: str, name: str, znslab: str) -> tuple[str, str | None, str]:
    """One run of the list on this worker: (name, its JSON text or None, the log)."""
    with tempfile.TemporaryDirectory(prefix="znslab-ray-") as tmp:
        runs = Path(tmp) / "runs.toml"
        runs.write_text(list_text)
        out = Path(tmp) / "out"
        p = subprocess.run(
            [znslab, "run", str(runs), "--only", name, "--output", str(out), "--jobs", "1"],
            capture_output=True,
            text=True,
        )
        result = out / name
        text = result.read_text() if p.returncode == 0 and result.exists() else None
        return name, text, p.stdout + p.stderr


def _write(out: Path, name: str, text: str) -> None:
    """Write a result whole or not at all (a killed driver leaves no half file)."""
    tmp = out / f".{name}.part"
    tmp.write_text(text)
    os.replace(tmp, out / name)


def run_list(
    list_text: str, out: Path, znslab: str, progress=lambda line: print(line, file=sys.stderr)
) -> tuple[int, list[tuple[str, str]]]:
    """Run every run of a run list (TOML text) as Ray tasks; each result's JSON is written
    into `out` under the run's name as it ends. Returns (runs done, [(name, log) failed])."""
    names = [r["name"] for r in tomllib.loads(list_text).get("run", [])]
    out.mkdir(parents=True, exist_ok=True)
    if not names:
        return 0, []
    t0 = time.monotonic()
    progress(f"znslab-ray: {len(names)} runs as Ray tasks, results in {out}")
    pending = [_run_one.remote(list_text, n, znslab) for n in names]
    done, failed = 0, []
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        name, text, log = ray.get(ready[0])
        if text is None:
            failed.append((name, log.strip()))
            progress(f"  {name} failed")
            continue
        _write(out, name, text)
        done += 1
        progress(f"  {name} done ({time.monotonic() - t0:.0f} s)")
    return done, failed


def reproduce(
    paper: str,
    out: Path,
    extra: list[str],
    znslab: str,
    resume: bool = False,
    progress=lambda line: print(line, file=sys.stderr),
) -> str:
    """`znslab reproduce PAPER` with its runs on Ray: the binary writes the run list (only the
    runs still to do with --resume), Ray runs them, the binary makes the report from the
    folder (`--report-only`). Returns the report."""
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="znslab-ray-") as tmp:
        runs = Path(tmp) / "runs.toml"
        cmd = [znslab, "reproduce", paper, "--output", str(out), "--write-runs", str(runs)]
        subprocess.run(cmd + (["--resume"] if resume else []) + extra, check=True)
        done, failed = run_list(runs.read_text(), out, znslab, progress)
    for name, log in failed:
        progress(f"znslab-ray: {name} failed:\n{log}")
    # The report keeps the sweep's wall time (read from summary.json by --report-only, which
    # writes the whole file again), as the local executor's does.
    _write(out, "summary.json", json.dumps({"wall_s": time.monotonic() - t0}))
    report = subprocess.run(
        [znslab, "reproduce", paper, "--output", str(out), "--report-only"] + extra,
        check=True,
        capture_output=True,
        text=True,
    )
    if failed:
        raise SystemExit(f"znslab-ray: {len(failed)} runs failed (their logs above)")
    return report.stdout
