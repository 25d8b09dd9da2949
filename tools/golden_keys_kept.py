#!/usr/bin/env python3
"""Check that re-blessed golden outputs only ADD keys: every key path of the old JSON is in
the new one with the same value (wall-clock keys aside), except the paths named with
--allow (a glob on the path, e.g. 'jobs/*/job options/*').

usage: golden_keys_kept.py OLD.json NEW.json [--allow GLOB]...
Prints each difference; exits 1 if any is not allowed."""
import fnmatch
import json
import sys

WALL = {"timestamp", "timestamp_ms", "time", "wall_time_s", "device_commands_per_wall_s",
        "wall_s", "emulator", "run_wall_sum_s"}


def walk(old, new, path, out):
    if isinstance(old, dict):
        if not isinstance(new, dict):
            out.append((path, "was an object, now %r" % type(new).__name__))
            return
        for k, v in old.items():
            if k in WALL:
                continue
            p = path + "/" + k if path else k
            if k not in new:
                out.append((p, "missing"))
            else:
                walk(v, new[k], p, out)
    elif isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            out.append((path, "list changed"))
            return
        for i, (a, b) in enumerate(zip(old, new)):
            walk(a, b, "%s/%d" % (path, i), out)
    elif old != new or type(old) is not type(new):
        out.append((path, "%r -> %r" % (old, new)))


def main():
    args = sys.argv[1:]
    allow = [args[i + 1] for i, a in enumerate(args) if a == "--allow"]
    files = [a for i, a in enumerate(args) if a != "--allow" and (i == 0 or args[i - 1] != "--allow")]
    old, new = (json.load(open(f)) for f in files)
    diffs = []
    walk(old, new, "", diffs)
    bad = 0
    for p, what in diffs:
        ok = any(fnmatch.fnmatch(p, g) for g in allow)
        print("%s %s: %s" % ("allowed" if ok else "CHANGED", p, what))
        bad += not ok
    print("%s: %d difference(s), %d not allowed" % (files[1], len(diffs), bad))
    sys.exit(1 if bad else 0)


main()
