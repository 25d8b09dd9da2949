"""`python -m znslab_ray` (or `znslab-ray`): znslab's sweeps on a Ray cluster.

    znslab-ray reproduce cczns --scale 0.002 --output DIR [--resume] [--address ADDR]
    znslab-ray run RUNS.toml --output DIR [--address ADDR]

Flags after the paper that znslab-ray does not know (--scale, --seed, --seeds, --threads, ...)
go to `znslab reproduce` as they are. --address is Ray's: `auto` joins the cluster this
machine belongs to (`ray start --head` here, or `ray start --address HEAD:6379` on a worker);
without it a Ray instance is started for this sweep on this machine."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import ray

from .sweep import find_znslab, reproduce, run_list


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="znslab-ray", description=__doc__.splitlines()[0])
    p.add_argument("--address", help="Ray cluster address (auto, or HOST:PORT)")
    p.add_argument("--znslab", help="the znslab binary (the same path on every node)")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("reproduce", help="a paper's evaluation, its runs as Ray tasks")
    r.add_argument("paper", help="cczns or znsplus")
    r.add_argument("--output", required=True, type=Path, help="folder for the runs and report")
    r.add_argument("--resume", action="store_true", help="keep the good runs already in --output")
    l = sub.add_parser("run", help="a run list (TOML), its runs as Ray tasks")
    l.add_argument("file", type=Path)
    l.add_argument("--output", required=True, type=Path)
    args, extra = p.parse_known_args(argv)
    if args.cmd == "run" and extra:
        p.error(f"unknown arguments: {' '.join(extra)}")
    znslab = find_znslab(args.znslab)
    ray.init(address=args.address, log_to_driver=False)
    try:
        if args.cmd == "reproduce":
            print(reproduce(args.paper, args.output, extra, znslab, args.resume), end="")
            return 0
        done, failed = run_list(args.file.read_text(), args.output, znslab)
        print(f"{done} runs done, {len(failed)} failed; results in {args.output}")
        for name, log in failed:
            print(f"  {name}:\n{log}")
        return 1 if failed else 0
    finally:
        ray.shutdown()


if __name__ == "__main__":
    sys.exit(main())
