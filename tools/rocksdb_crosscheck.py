#!/usr/bin/env python3
"""Load the records znslab wrote (`znslab ycsb load ... --dump-kv FILE`) into real RocksDB
(rocksdict, from PyPI) with the options znslab's store uses, and print what RocksDB reports:
bytes flushed and compacted, WAL bytes, SST bytes per level. Compare with znslab's JSON
(`flushed_bytes`, `compaction_written_bytes`, `wal_bytes`, `level_bytes`).

    python3 -m pip install rocksdict        # once
    znslab ycsb load -P workloads/workloada -p dataset=amazon -p recordcount=200000 \
        --compression zstd --dump-kv /tmp/kv.bin --json > /tmp/znslab.json
    python3 tools/rocksdb_crosscheck.py /tmp/kv.bin --compression zstd --znslab /tmp/znslab.json
"""
import argparse
import json
import shutil
import struct
import sys
import tempfile
import time

try:
    import rocksdict
except ImportError:
    sys.exit("rocksdict is missing: python3 -m pip install rocksdict")


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at < len(data):
        (kl,) = struct.unpack_from("<I", data, at)
        k = data[at + 4 : at + 4 + kl]
        at += 4 + kl
        (vl,) = struct.unpack_from("<I", data, at)
        v = data[at + 4 : at + 4 + vl]
        at += 4 + vl
        yield k, v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kv")
    ap.add_argument("--compression", default="snappy", choices=["none", "snappy", "lz4", "zstd"])
    ap.add_argument("--znslab", help="znslab's --json output of the same load, to compare")
    ap.add_argument("--static-levels", action="store_true", help="level_compaction_dynamic_level_bytes=false (db_bench's default)")
    a = ap.parse_args()

    comp = {
        "none": rocksdict.DBCompressionType.none(),
        "snappy": rocksdict.DBCompressionType.snappy(),
        "lz4": rocksdict.DBCompressionType.lz4(),
        "zstd": rocksdict.DBCompressionType.zstd(),
    }[a.compression]
    opts = rocksdict.Options(raw_mode=True)
    opts.create_if_missing(True)
    opts.enable_statistics()
    # The options znslab's store uses (RocksDB 8.11 defaults; level sizes dynamic unless
    # --static-levels, as `znslab dbbench` without --level_compaction_dynamic_level_bytes).
    opts.set_write_buffer_size(64 << 20)
    opts.set_max_write_buffer_number(2)
    opts.set_level_zero_file_num_compaction_trigger(4)
    opts.set_max_bytes_for_level_base(256 << 20)
    opts.set_max_bytes_for_level_multiplier(10)
    opts.set_target_file_size_base(64 << 20)
    opts.set_level_compaction_dynamic_level_bytes(not a.static_levels)
    opts.set_compression_type(comp)
    opts.set_bottommost_compression_type(comp)
    bbo = rocksdict.BlockBasedOptions()
    bbo.set_block_size(4096)
    opts.set_block_based_table_factory(bbo)
    d = tempfile.mkdtemp(prefix="znslab-rocksdb-")
    db = rocksdict.Rdict(d, options=opts)
    user = 0
    n = 0
    t0 = time.time()
    for k, v in records(a.kv):
        db[k] = v
        user += len(k) + len(v)
        n += 1
    db.flush(True)
    # Let background compactions finish, as znslab waits for its worker.
    while (db.property_int_value("rocksdb.num-running-compactions") or 0) > 0 or (
        db.property_int_value("rocksdb.compaction-pending") or 0
    ) > 0:
        time.sleep(0.1)
    stats = opts.get_statistics() or ""
    def tick(name):
        for line in stats.splitlines():
            if line.startswith(name + " COUNT"):
                return int(line.split(":")[-1])
        return 0
    levels = []
    for lvl in range(7):
        size = sum(f["size"] for f in db.live_files() if f["level"] == lvl)
        levels.append(size)
    out = {
        "records": n,
        "user_bytes": user,
        "wal_bytes": tick("rocksdb.wal.bytes"),
        "flushed_bytes": tick("rocksdb.flush.write.bytes"),
        "compaction_written_bytes": tick("rocksdb.compact.write.bytes"),
        "level_bytes": levels,
        "sst_bytes": sum(levels),
        "wall_s": round(time.time() - t0, 1),
    }
    out["write_amplification_sst"] = round(
        (out["flushed_bytes"] + out["compaction_written_bytes"]) / max(user, 1), 3
    )
    print(json.dumps({"rocksdb": out}, indent=1))
    # RocksDB's own per-level compaction table (files, compactions, bytes written per level).
    stats_text = db.property_value("rocksdb.stats") or ""
    for line in stats_text.splitlines():
        if line.strip().startswith(("Level", "  L", " Sum", "-----")) and "Files" in line or line.strip().startswith(("L0", "L1", "L2", "L3", "Sum")):
            print(line)
    if a.znslab:
        z = json.load(open(a.znslab))
        zs = {
            "wal_bytes": z["wal_bytes"],
            "flushed_bytes": z["flushed_bytes"],
            "compaction_written_bytes": z["compaction_written_bytes"],
            "level_bytes": z["level_bytes"],
            "sst_bytes": sum(z["level_bytes"]),
        }
        zs["write_amplification_sst"] = round(
            (zs["flushed_bytes"] + zs["compaction_written_bytes"]) / max(user, 1), 3
        )
        print(json.dumps({"znslab": zs}, indent=1))
        print("ratio znslab/rocksdb: sst bytes %.3f, flush bytes %.3f, compaction bytes %.3f"
              % (zs["sst_bytes"] / max(out["sst_bytes"], 1),
                 zs["flushed_bytes"] / max(out["flushed_bytes"], 1),
                 zs["compaction_written_bytes"] / max(out["compaction_written_bytes"], 1)))
    del db
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
