#!/usr/bin/env python3
"""Check that a re-blessed golden file only ADDED keys: every key of OLD keeps its value in NEW.

Usage: golden_keys_kept.py OLD.json NEW.json  (exit 1 and the differing paths otherwise)."""
import json
import sys


def walk(old, new, path, bad):
    if isinstance(old, dict):
        if not isinstance(new, dict):
            bad.append(path)
            return
        for k, v in old.items():
            if k not in new:
                bad.append(f"{path}/{k} (gone)")
            else:
                walk(v, new[k], f"{path}/{k}", bad)
    elif isinstance(old, list):
        if not isinstance(new, list) or len(old) != len(new):
            bad.append(path)
            return
        for i, (a, b) in enumerate(zip(old, new)):
            walk(a, b, f"{path}[{i}]", bad)
    elif old != new:
        bad.append(f"{path}: {old!r} -> {new!r}")


old, new = (json.load(open(p)) for p in sys.argv[1:3])
bad = []
walk(old, new, "", bad)
print("\n".join(bad) if bad else f"{sys.argv[2]}: every old key keeps its value")
sys.exit(1 if bad else 0)
