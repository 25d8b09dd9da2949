#!/usr/bin/env python3
"""Regenerate crates/workload/src/dbbench/flag_table.rs from RocksDB's tools/db_bench_tool.cc.

Usage: python3 tools/dbbench_flags.py /path/to/tools/db_bench_tool.cc /path/to/monitoring/statistics.cc crates/workload/src/dbbench

writes flag_table.rs (the flags) and rocksdb_names.rs (db_bench's benchmark names, RocksDB's
ticker and histogram names) in that folder.

Every DEFINE_* flag of db_bench becomes one row: its name, gflags type, default (the source's
literal, or the value RocksDB's Options() gives where the source names it), and what znslab does
with it (STATUS below; anything not listed is refused with the reason of its group).
"""
import os
import re
import sys

_flags_out = open(os.path.join(sys.argv[3], "flag_table.rs"), "w")
_names_out = open(os.path.join(sys.argv[3], "rocksdb_names.rs"), "w")


def out_flags(*a):
    print(*a, file=_flags_out)


def out_names(*a):
    print(*a, file=_names_out)

SRC = open(sys.argv[1]).read()
PAT = re.compile(
    r'^(?:static\s+)?DEFINE_(\w+)\(\s*(\w+)\s*,\s*((?:[^,"()]|\((?:[^()]|\([^()]*\))*\)|"(?:[^"\\]|\\.)*")+?)\s*,',
    re.M,
)

# Defaults the source takes from RocksDB's option structs (RocksDB's options.h values).
RESOLVED = {
    "max_write_buffer_number": "2",
    "max_background_jobs": "2",
    "max_background_compactions": "-1",
    "max_background_flushes": "-1",
    "target_file_size_base": "67108864",
    "max_bytes_for_level_base": "268435456",
    "level0_stop_writes_trigger": "36",
    "level0_slowdown_writes_trigger": "20",
    "level0_file_num_compaction_trigger": "4",
    "block_size": "4096",
    "block_restart_interval": "16",
    "compression_level": "32767",
    "use_direct_reads": "false",
    "use_direct_io_for_flush_and_compaction": "false",
    "use_direct_io_for_compaction_reads": "false",
    "delayed_write_rate": "8388608",
    "compaction_readahead_size": "2097152",
    "initial_auto_readahead_size": "8192",
    "max_auto_readahead_size": "262144",
    "num_file_reads_for_auto_readahead": "2",
    "compression_parallel_threads": "1",
    "level_compaction_dynamic_level_bytes": "false",
    "write_buffer_size": "67108864",
    "db_write_buffer_size": "0",
    "arena_block_size": "0",
    "min_write_buffer_number_to_merge": "1",
    "max_write_buffer_size_to_maintain": "0",
    "compaction_style": "0",
    "compaction_pri": "3",
    "compressed_secondary_cache_compression_level": "32767",
    "metadata_block_size": "4096",
    "index_block_restart_interval": "1",
    "read_amp_bytes_per_bit": "0",
    "enable_index_compression": "true",
    "block_align": "false",
    "whole_key_filtering": "true",
    "open_files": "-1",
    "file_opening_threads": "16",
    "target_file_size_multiplier": "1",
    "optimize_filters_for_hits": "false",
    "paranoid_checks": "true",
    "force_consistency_checks": "true",
    "perf_level": "1",
    "inplace_update_support": "false",
    "inplace_update_num_locks": "10000",
    "max_compaction_bytes": "0",
    "mmap_read": "false",
    "mmap_write": "false",
    "advise_random_on_open": "true",
    "use_adaptive_mutex": "false",
    "bytes_per_sync": "0",
    "wal_bytes_per_sync": "0",
    "stats_dump_period_sec": "600",
    "stats_persist_period_sec": "600",
    "persist_stats_to_disk": "false",
    "stats_history_buffer_size": "1048576",
    "avoid_flush_during_recovery": "false",
    "avoid_flush_during_shutdown": "false",
    "allow_data_in_errors": "false",
    "compression_max_dict_bytes": "0",
    "compression_zstd_max_train_bytes": "0",
    "compression_max_dict_buffer_bytes": "0",
    "enable_blob_files": "false",
    "min_blob_size": "0",
    "enable_blob_garbage_collection": "false",
    "stats_level": "3",
}

S, D, I = "Supported", "Differs", "Ignored"
STATUS = {
    # What runs.
    "benchmarks": (D, "default here fillrandom,readrandom (db_bench runs its whole list); the benchmarks in docs/commands/dbbench.md run, any other name is refused naming it"),
    "num": (S, "keys; each thread does num operations, as db_bench"),
    "reads": (S, "-1 = num"),
    "deletes": (S, "-1 = num (deleterandom)"),
    "seed": (D, "0 (the default) is seed 1, not the clock: the same command prints the same figures"),
    "threads": (S, "each thread does num (or reads) operations"),
    "duration": (S, "simulated seconds a benchmark runs for (num/reads no longer bound it)"),
    "value_size": (S, ""),
    "key_size": (S, "the key number big-endian, padded with '0' to key_size"),
    "compression_ratio": (S, "values are db_bench's compressible strings"),
    "histogram": (S, "prints 'Microseconds per <op>:' blocks in RocksDB's HistogramImpl format"),
    "statistics": (S, "prints the STATISTICS: block with RocksDB's ticker and histogram names; tickers the store has no counterpart for print 0"),
    "batch_size": (S, "entries per write batch"),
    "readwritepercent": (S, "readrandomwriterandom's share of reads"),
    "use_existing_db": (D, "needs --image FILE (znslab's): reopens the database a run left in that image; the fresh-database benchmarks (fillrandom, fillseq, ...) are skipped with db_bench's line; without --image refused (every run starts on a fresh device)"),
    "write_buffer_size": (S, "clipped to RocksDB's 64 KiB..64 GiB"),
    "max_write_buffer_number": (S, "writes stop once this many memtables are full (one active, the rest waiting for a flush); above 3 they slow down one earlier; less than 2 is 2, as RocksDB sanitizes it"),
    "max_background_jobs": (S, "RocksDB's GetBGJobLimits: a quarter flush (at least 1), the rest compact; compactions beyond one run only under RocksDB's compaction pressure (L0 files at the speedup count, estimated compaction debt, write slowdowns or stops)"),
    "max_background_compactions": (S, "-1: from max_background_jobs; else the compaction limit (at least 1), as RocksDB"),
    "max_background_flushes": (S, "-1: from max_background_jobs; else the flush limit (at least 1), as RocksDB; flushes run side by side and install in memtable order"),
    "cache_size": (S, "block cache bytes (one LRU cache)"),
    "block_size": (S, ""),
    "block_restart_interval": (S, ""),
    "bloom_bits": (S, "<= 0: no filter"),
    "sync": (S, "sync the WAL on every write"),
    "disable_wal": (S, "writes skip the WAL"),
    "num_levels": (S, ""),
    "target_file_size_base": (S, "compaction output files are cut at this size"),
    "target_file_size_multiplier": (D, "only 1: every level's files are cut at target_file_size_base"),
    "max_bytes_for_level_base": (S, ""),
    "max_bytes_for_level_multiplier": (D, "whole numbers only"),
    "level_compaction_dynamic_level_bytes": (S, ""),
    "level0_stop_writes_trigger": (S, ""),
    "level0_slowdown_writes_trigger": (S, ""),
    "level0_file_num_compaction_trigger": (S, ""),
    "delayed_write_rate": (D, "when not given the store keeps RocksDB's Options() 16 MiB/s, not db_bench's 8 MiB/s"),
    "compaction_readahead_size": (S, ""),
    "initial_auto_readahead_size": (S, ""),
    "max_auto_readahead_size": (S, ""),
    "num_file_reads_for_auto_readahead": (S, ""),
    "compression_type": (D, "none, snappy, lz4, zstd, zlib, plus znslab's zstdpc, qat, cc, cc-single-dr, cc-single-cw; bzip2, lz4hc and xpress are refused"),
    "compression_level": (D, "sets zstd's and zlib's level (bytes stored); CPU time is the codec profile's whatever the level"),
    "compression_parallel_threads": (S, ""),
    "mix_get_ratio": (S, "mixgraph"),
    "mix_put_ratio": (S, "mixgraph"),
    "mix_seek_ratio": (S, "mixgraph"),
    "mix_max_scan_len": (S, "mixgraph"),
    "mix_max_value_size": (S, "mixgraph"),
    "key_dist_a": (S, "mixgraph: keys by the power function's inverse when a and b are set"),
    "key_dist_b": (S, "mixgraph"),
    "value_theta": (S, "mixgraph: value sizes by the generalized Pareto distribution"),
    "value_k": (S, "mixgraph"),
    "value_sigma": (S, "mixgraph"),
    "iter_theta": (S, "mixgraph: scan lengths by the generalized Pareto distribution"),
    "iter_k": (S, "mixgraph"),
    "iter_sigma": (S, "mixgraph"),
    "keyrange_dist_a": (S, "mixgraph: key ranges' hotness a*exp(b*x)+c*exp(d*x) (db_bench's GenerateTwoTermExpKeys; the ranges are shuffled by znslab's seeded generator, not std::mt19937_64)"),
    "keyrange_dist_b": (S, "mixgraph"),
    "keyrange_dist_c": (S, "mixgraph"),
    "keyrange_dist_d": (S, "mixgraph"),
    "keyrange_num": (S, "mixgraph"),
    "writes": (S, "writes of the fill benchmarks; -1 = num"),
    "benchmark_write_rate_limit": (D, "bytes per second of the fill benchmarks' and readwhilewriting's writer, as a smooth rate (RocksDB's limiter refills every 100 ms)"),
    "seek_nexts": (S, "entries seekrandom reads after each seek"),
    "ops_between_duration_checks": (S, "operations between looks at the clock under --duration"),
    "sine_a": (I, "used only with --sine_mix_rate or --sine_write_rate, which are refused"),
    "sine_b": (I, "used only with --sine_mix_rate or --sine_write_rate, which are refused"),
    "sine_c": (I, "used only with --sine_mix_rate or --sine_write_rate, which are refused"),
    "sine_d": (I, "used only with --sine_mix_rate or --sine_write_rate, which are refused"),
    "sine_mix_rate_interval_milliseconds": (I, "used only with --sine_mix_rate, which is refused"),
    "sine_mix_rate_noise": (I, "used only with --sine_mix_rate, which is refused"),
    "sine_write_rate_interval_milliseconds": (I, "used only with --sine_write_rate, which is refused"),
    # Accepted; what they change is the real host's, which no figure here depends on.
    "db": (I, "the store lives on the emulated device (--device), not in a directory"),
    "wal_dir": (I, "the WAL lives on the emulated device with the store"),
    "fs_uri": (I, "zenfs://dev:NAME is accepted and the device is --device (the store runs on zonefs, ZenFS's counterpart); other schemes are refused"),
    "use_direct_reads": (I, "no page cache is modelled: every read goes to the device already"),
    "use_direct_io_for_flush_and_compaction": (I, "no page cache is modelled: every write goes to the device already"),
    "use_direct_io_for_compaction_reads": (I, "no page cache is modelled"),
    "mmap_read": (I, "no page cache is modelled"),
    "mmap_write": (I, "no page cache is modelled"),
    "advise_random_on_open": (I, "no page cache is modelled"),
    "bytes_per_sync": (I, "no page cache is modelled: nothing waits in one to be synced"),
    "wal_bytes_per_sync": (I, "no page cache is modelled"),
    "report_interval_seconds": (S, "writes --report_file as db_bench's ReporterAgent: secs_elapsed,interval_qps, the operations finished in each whole interval of simulated time (also in --json)"),
    "report_file": (S, "the last benchmark's report, as db_bench rewrites it per benchmark"),
    "stats_interval": (I, "no interval reports are printed"),
    "stats_interval_seconds": (I, "no interval reports are printed"),
    "stats_per_interval": (I, "no interval reports are printed"),
    "thread_status_per_interval": (I, "no interval reports are printed"),
    "stats_dump_period_sec": (I, "the store writes no info log"),
    "stats_persist_period_sec": (I, "the store writes no info log"),
    "persist_stats_to_disk": (I, "the store writes no info log"),
    "stats_history_buffer_size": (I, "the store writes no info log"),
    "stats_level": (I, "every counter is kept"),
    "perf_level": (I, "no perf context is kept"),
    "progress_reports": (I, "a progress bar is drawn on stderr when it is a terminal"),
    "enable_numa": (I, "the simulated host has no NUMA nodes"),
    "enable_io_prio": (I, "no OS I/O priorities are modelled"),
    "enable_cpu_prio": (I, "no OS CPU priorities are modelled"),
    "dump_malloc_stats": (I, "no allocator statistics"),
    "print_malloc_stats": (I, "no allocator statistics"),
    "use_stderr_info_logger": (I, "the store writes no info log"),
    "verify_checksum": (I, "checksums cost no simulated time here"),
    "paranoid_checks": (I, "checks cost no simulated time here"),
    "force_consistency_checks": (I, "checks cost no simulated time here"),
    "cache_numshardbits": (I, "lock contention is not modelled"),
    "table_cache_numshardbits": (I, "lock contention is not modelled"),
    "open_files": (I, "every table stays open"),
    "file_opening_threads": (I, "every table stays open"),
    "use_adaptive_mutex": (I, "lock contention is not modelled"),
    "enable_write_thread_adaptive_yield": (I, "lock contention is not modelled"),
    "write_thread_max_yield_usec": (I, "lock contention is not modelled"),
    "write_thread_slow_yield_usec": (I, "lock contention is not modelled"),
    "allow_concurrent_memtable_write": (I, "writers apply their batches in turn either way"),
    "use_cache_jemalloc_no_dump_allocator": (I, "allocator choice changes no figure here"),
    "use_cache_memkind_kmem_allocator": (I, "allocator choice changes no figure here"),
    "memtable_use_huge_page": (I, "allocator choice changes no figure here"),
    "arena_block_size": (I, "allocator choice changes no figure here"),
    "build_info": (I, "not printed"),
    "allow_data_in_errors": (I, "errors print no data"),
    "delete_obsolete_files_period_micros": (I, "obsolete files are deleted at once"),
    "max_manifest_file_size": (I, "the MANIFEST's size is not a figure"),
    "fatal_shutdown_watchdog_seconds": (I, "runs never hang: each is bounded before it starts"),
    "skip_stats_update_on_db_open": (I, "the store opens empty"),
    "open_files_async": (I, "the store opens empty"),
    "avoid_flush_during_recovery": (I, "the store opens empty"),
    "avoid_flush_during_shutdown": (I, "the run ends after waiting for background work"),
    "confidence_interval_only": (I, "each benchmark runs once"),
    "tolerate_io_errors_for_remote_dbs": (I, "the emulated device is local"),
    "env_uri": (I, "the environment is the simulator's"),
    "show_table_properties": (I, "not printed"),
    "slow_usecs": (I, "no slow-operation log lines"),
    "pin_l0_filter_and_index_blocks_in_cache": (I, "index and filter blocks are held outside the block cache (cache_index_and_filter_blocks=false), where pinning changes nothing, as in RocksDB"),
    "pin_top_level_index_and_filter": (I, "index and filter blocks are held outside the block cache (cache_index_and_filter_blocks=false), where pinning changes nothing, as in RocksDB"),
}

def group_reason(n):
    g = [
        (("num_column_families", "num_hot_column_families", "column_family_distribution", "num_multi_db"), "the store has one column family and one database"),
        (("universal_", "fifo_", "compaction_style", "compaction_pri"), "the store does leveled compaction only, picking by score"),
        (("blob", "use_blob_db", "min_blob_size", "embedded_blob"), "the store has no blob files"),
        (("transaction", "optimistic_transaction_db"), "the store has no transactions"),
        (("backup", "restore"), "the store has no backup engine"),
        (("ingest_external",), "the store does not ingest external files"),
        (("trace", "block_cache_trace"), "no tracing or trace replay"),
        (("secondary", "follower", "leader_path", "readonly"), "the store opens read-write, alone"),
        (("merge",), "the store has no merge operator"),
        (("range_tombstone", "delete_range"), "the store has no range deletes"),
        (("timestamp",), "the store has no user-defined timestamps"),
        (("wide_column",), "the store has no wide columns"),
        (("prefix", "keys_per_prefix", "total_order_seek", "auto_prefix_mode"), "the store has no prefix extractor"),
        (("rate_limit", "sine_", "benchmark_write_rate_limit", "benchmark_read_rate_limit"), "the store has no rate limiter"),
        (("keyrange_",), "mixgraph's key ranges (keyrange_num > 1) are not modelled"),
        (("cache", "row_cache", "simcache", "tiered"), "the store has one LRU block cache (--cache_size)"),
        (("filter", "ribbon", "whole_key"), "the store's filter is one full Bloom filter per table (--bloom_bits)"),
        (("partition", "index", "metadata_block_size", "block_align", "super_block", "data_block", "format_version", "checksum_type", "read_amp", "separate_key_value"), "the store's table format is fixed (RocksDB's block-based table, format 5, binary-search index)"),
        (("memtable", "hash_bucket", "skip_list", "inplace_update", "use_plain_table", "use_cuckoo", "cuckoo", "use_hash_search", "identity_as_first_hash"), "the store's memtable and table are a skip list and a block-based table"),
        (("compression", "sample_for_compression", "min_level_to_compress", "wal_compression", "verify_compression"), "the store compresses every level's blocks with --compression_type, without dictionaries"),
        (("multiscan", "multiread", "coro", "async_io", "io_dispatcher", "io_uring", "optimize_multiget"), "the store reads keys one at a time"),
        (("wal", "manual_wal_flush", "use_fsync", "max_total_wal_size"), "the store keeps one WAL per memtable, synced by --sync"),
        (("compaction", "subcompactions", "max_compaction_bytes", "pending_compaction_bytes", "ttl", "periodic", "preclude", "preserve_internal_time", "disable_auto_compactions", "disable_seek_compaction", "max_bytes_for_level_multiplier_additional", "optimize_filters_for_hits", "num_bottom_pri", "num_high_pri", "num_low_pri"), "the store's compaction is leveled, by score, with RocksDB's defaults"),
        (("write_buffer", "min_write_buffer", "db_write_buffer_size", "experimental_mempurge", "unordered_write", "enable_pipelined_write"), "the store's write path is RocksDB's default one"),
        (("charge_",), "memory charging to the block cache is not modelled"),
        (("protection_bytes", "paranoid_memory", "verify_per_key", "file_checksum"), "integrity checks are not modelled"),
        (("readahead", "adaptive_readahead", "auto_readahead_size"), "the store's readahead is RocksDB's default"),
        (("simulate_", "fault_injection"), "the device is the emulator's (--device)"),
    ]
    for keys, why in g:
        if any(k in n for k in keys):
            return why
    return "not modelled by the store; it would change figures"

def esc(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')

def default_of(name, raw):
    if name in RESOLVED:
        return RESOLVED[name]
    raw = " ".join(raw.split())
    if raw.startswith('"'):
        parts = re.findall(r'"((?:[^"\\]|\\.)*)"', raw)
        return "".join(parts)
    m = re.fullmatch(r'(-?\d+)\s*<<\s*(\d+)', raw)
    if m:
        return str(int(m.group(1)) << int(m.group(2)))
    return raw

rows = []
seen = set()
for ty, name, raw in PAT.findall(SRC):
    if name in seen:
        continue
    seen.add(name)
    kind, note = STATUS.get(name, ("Refused", None))
    if note is None:
        note = group_reason(name)
    rows.append((name, ty, default_of(name, raw), kind, note))
missing = set(STATUS) - seen
assert not missing, missing

out_flags("//! Generated by tools/dbbench_flags.py from RocksDB's tools/db_bench_tool.cc: every db_bench")
out_flags("//! flag, its gflags type and default, and what znslab does with it. Do not edit by hand.")
out_flags()
out_flags("use super::flags::{Flag, Status::*};")
out_flags()
out_flags("pub const DB_BENCH_FLAGS: &[Flag] = &[")
for name, ty, dflt, kind, note in rows:
    out_flags(f'    Flag {{ name: "{name}", ty: "{ty}", default: "{esc(dflt)}", status: {kind}("{esc(note)}") }},')
out_flags("];")

out_names("//! Generated by tools/dbbench_flags.py from RocksDB's tools/db_bench_tool.cc and")
out_names("//! monitoring/statistics.cc: db_bench's benchmark names, RocksDB's ticker and histogram")
out_names("//! names. Do not edit by hand.")
# The benchmark names db_bench's Benchmark::Run dispatches on.
_i = SRC.index('name == "fillseq"')
_names = []
for _m in re.finditer(r'name == "([A-Za-z0-9_]+)"', SRC[_i - 2000:_i + 30000]):
    if _m.group(1) not in _names:
        _names.append(_m.group(1))
out_names()
out_names("/// The benchmarks db_bench's `Benchmark::Run` knows, in its order.")
out_names("pub const DB_BENCH_BENCHMARKS: &[&str] = &[")
for _n in _names:
    out_names(f'    "{_n}",')
out_names("];")

# RocksDB's ticker and histogram names, in the order Statistics::ToString prints them.
if len(sys.argv) > 2:
    s = open(sys.argv[2]).read()
    t = s[s.index("TickersNameMap = {"):s.index("HistogramsNameMap = {")]
    h = s[s.index("HistogramsNameMap = {"):]
    h = h[:h.index("};")]
    out_names()
    out_names("/// RocksDB's tickers (monitoring/statistics.cc's TickersNameMap), in its order.")
    out_names("pub const TICKERS: &[&str] = &[")
    for _, n in re.findall(r'\{(\w+),\s*"([^"]+)"\}', t):
        out_names(f'    "{n}",')
    out_names("];")
    out_names()
    out_names("/// RocksDB's histograms (HistogramsNameMap), in its order.")
    out_names("pub const HISTOGRAMS: &[&str] = &[")
    for _, n in re.findall(r'\{(\w+),\s*"([^"]+)"\}', h):
        out_names(f'    "{n}",')
    out_names("];")
