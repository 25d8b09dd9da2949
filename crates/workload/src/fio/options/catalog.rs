//! Every option of fio's `fio_options[]` table (options.c) and what znslab does with it:
//! supported (parsed by [`super::apply`]), accepted and ignored with a notice (it changes no
//! figure of an emulated run), or refused with a one-line reason. Also the fio command-line
//! options that are not job options, and the I/O engines.

pub use super::fio_names::{FIO_ALIASES, FIO_OPTIONS};

/// What znslab does with an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Supported,
    /// Accepted and ignored; the text says why that changes no figure.
    Notice(&'static str),
    Refused(&'static str),
}

/// Options [`super::apply`] parses and acts on (aliases included).
pub const SUPPORTED: &[&str] = &[
    "continue_on_error",
    "ignore_error",
    "num_range",
    "atomic",
    "zero_buffers",
    "buffer_pattern",
    "fsync",
    "fdatasync",
    "max_latency",
    "percentage_random",
    "percentage_sequential",
    "rw_sequencer",
    "offset_align",
    "thinktime_blocks_type",
    "bs_is_seq_rand",
    "bs_unaligned",
    "blocksize_unaligned",
    "verify_write_sequence",
    "dedupe_percentage",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "dedupe_global",
    "write_mode",
    "bssplit",
    "flow",
    "flow_id",
    "flow_sleep",
    "flow_watermark",
    "exitall",
    "exit_what",
    "name",
    "description",
    "wait_for",
    "filename",
    "rw",
    "readwrite",
    "ioengine",
    "iodepth",
    "size",
    "io_size",
    "io_limit",
    "filesize",
    "offset",
    "fileoffset",
    "offset_increment",
    "number_ios",
    "bs",
    "blocksize",
    "bsrange",
    "blocksize_range",
    "randrepeat",
    "allrandrepeat",
    "randseed",
    "norandommap",
    "random_distribution",
    "rwmixread",
    "rwmixwrite",
    "numjobs",
    "startdelay",
    "runtime",
    "timeout",
    "time_based",
    "ramp_time",
    "zonemode",
    "zonesize",
    "zonecapacity",
    "zonerange",
    "zoneskip",
    "read_beyond_wp",
    "max_open_zones",
    "job_max_open_zones",
    "ignore_zone_limits",
    "zone_reset_threshold",
    "zone_reset_frequency",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "group_reporting",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "loops",
    "rate",
    "rate_iops",
    "rate_process",
    "thinktime",
    "thinktime_blocks",
    "lat_percentiles",
    "clat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "create_serialize",
    "write_zone_remainder",
    "verify",
    "do_verify",
    "verify_fatal",
    "verify_backlog",
    "verify_pattern",
    "verify_interval",
    "verify_offset",
    "verify_pattern_interval",
    "fill_device",
    "fill_fs",
    "steadystate",
    "ss",
    "steadystate_duration",
    "ss_dur",
    "steadystate_ramp_time",
    "ss_ramp",
    "steadystate_check_interval",
    "ss_interval",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "sprandom",
    "spr_num_regions",
    "spr_op",
    "spr_cs",
];

/// How supported options differ from fio, for the compatibility table.
pub const DIFFERS: &[(&str, &str)] = &[
    ("ioengine", "engines needing a kernel, a network or other hardware are refused; the others are the same NVMe device (sync engines run at iodepth 1); the default is psync, as fio's on Linux"),
    ("filename", "one device image per run; --filename on the command line replaces the job file's filename= (device nodes like /dev/sdb)"),
    ("filesize", "the same as size (one file: the device)"),
    ("verify", "every method (md5, crc32c, sha256, pattern, meta, ...) checks the block read against the bytes written, byte for byte; no header is written into the data, so blocks no job of the run wrote are not checked"),
    ("verify_pattern", "accepted; the data written stays the buffer_compress content, checked byte for byte"),
    ("verify_interval", "accepted; blocks are checked whole"),
    ("verify_offset", "accepted; blocks are checked whole"),
    ("verify_pattern_interval", "accepted; blocks are checked whole"),
    ("verify_fatal", "a verify failure always ends the job with its error"),
    ("norandommap", "random offsets are always drawn with replacement (as norandommap=1); without it fio covers each block once per pass"),
    ("randrepeat", "runs are always repeatable: the seed is --seed (or randseed)"),
    ("allrandrepeat", "runs are always repeatable: the seed is --seed (or randseed)"),
    ("wait_for", "the job starts with a new group after the named job's group (a reporting group too)"),
    ("new_group", "groups follow stonewall and wait_for"),
    ("zonecapacity", "accepted with a notice: zonemode=zbd takes the device's zones"),
    ("zonerange", "used by zonemode=strided; zonemode=zbd takes the device's zones"),
    ("zoneskip", "in bytes, for zonemode=strided; refused with zonemode=zbd"),
    ("write_zone_remainder", "only 0"),
    ("create_serialize", "accepted (files are not created)"),
    ("rate", "one rate for reads, writes and trims (separate values refused); the job issues no faster than rate from its start"),
    ("rate_iops", "one rate for reads, writes and trims (separate values refused)"),
    ("bs", "random offsets of every direction are aligned to the smallest block size of any"),
    ("bsrange", "sizes are multiples of the range's smallest"),
    ("bssplit", "random offsets of every direction are aligned to the smallest block size of any"),
    ("atomic", "writes of one logical block only: the devices' atomic write unit (id-ctrl awupf 0) is one block"),
    ("verify_write_sequence", "blocks are compared whole with what was written; with 0 a block passes if it holds what any of the last 8 writes to it wrote (fio: a self-consistent checksum without the sequence)"),
    ("fsync", "the device has no volatile write cache (id-ctrl vwc 0), so, as in Linux, a sync sends no command and completes at once: it is counted (sync total_ios) at 1 ns"),
    ("fdatasync", "as fsync: no command to a device without a volatile write cache, counted at 1 ns"),
    ("buffer_pattern", "the pattern restarts at every 4 KiB page of the job's data pool, where its buffers start (fio restarts it at every buffer); files give at most their first MiB"),
    ("bs_is_seq_rand", "by the job's pattern (rw=rand... uses the write sizes); percentage_random's sequential I/Os keep them"),
    ("bs_unaligned", "sizes are whole blocks of the device's LBA, as O_DIRECT needs"),
    ("blocksize_unaligned", "sizes are whole blocks of the device's LBA, as O_DIRECT needs"),
    ("num_range", "the ranges go to the device as Deallocate commands sent together; the I/O completes with the last; with zonemode=zbd a trim is a zone reset of one zone"),
    ("dedupe_percentage", "duplicates repeat buffers of the job's 4 MiB data pool, and unique buffers repeat once the job has written the pool through"),
    ("dedupe_mode", "working_set draws from the pool's first buffers, at most the pool"),
    ("dedupe_global", "jobs with it fill their pools from one seed, so their buffers are the same set"),
    ("random_distribution", "no ':center'; applies to the random offsets of zonemode=none and strided jobs (zonemode=zbd picks zones uniformly)"),
    ("thinktime", "the job waits before its next I/O after every thinktime_blocks I/Os"),
    ("flow", "a stalled job waits flow_sleep (or 10 µs of virtual time) before looking again"),
    ("exit_what", "group and stonewall end the job's group, all too (groups run one after another)"),
    ("exitall", "ends the jobs of the job's group"),
    ("lat_percentiles", "parsed and passed to the results"),
    ("clat_percentiles", "parsed and passed to the results"),
    ("slat_percentiles", "parsed; there is no submission latency apart from completion latency"),
    ("percentile_list", "parsed and passed to the results"),
    ("ramp_time", "I/Os completing within ramp_time of the job's start are not counted; runtime follows the ramp"),
    ("fill_device", "the same as size=100%"),
    ("fill_fs", "the same as size=100%"),
    ("max_open_zones", "as fio: the device's limit when not given; more than the device's is refused unless ignore_zone_limits"),
    ("loops", "the job's I/O size is loops times its size"),
    ("sprandom", "fresh offsets walk every block once in a seeded order of the simulator's generator, not fio's LFSR sequence; randwrite (or randrw) with zonemode=none only"),
    ("write_mode", "io_uring_cmd's option: write and zone_append (zonemode=zbd) are supported; uncor, zeroes and verify are refused"),
];

const NO_FIGURE: &str = "host-side setting; the emulated device's figures do not depend on it";
const NO_LOGS: &str = "znslab writes no per-I/O log files; the results carry the figures";
const NO_CPU: &str = "CPU and NUMA placement of the host does not exist on the virtual clock";
const NO_FILES: &str = "the device is one image, not files in a file system";

/// Options of [`NOTICE`] that are harmless to ignore only at fio's default values (the
/// first is taken when no value is given): another value would change the sizes a job reads
/// or the shape of fio's output, so it is refused.
pub const DEFAULT_ONLY: &[(&str, &[&str], &str)] = &[
    (
        "kb_base",
        &["1024"],
        "sizes here are read with kb_base=1024",
    ),
    (
        "unified_rw_reporting",
        &["0", "none"],
        "read and write are reported apart (fio's default)",
    ),
    (
        "rate_ignore_thinktime",
        &["0", "false"],
        "after a thinktime the job catches up to its rate, fio's default",
    ),
    (
        "cmd_type",
        &["nvme"],
        "cmd_type=bsg sends SCSI commands; the emulated device speaks NVMe",
    ),
];

/// Options accepted and ignored with a notice.
const NOTICE: &[(&str, &str)] = &[
    (
        "rate_min",
        "a job below its minimum rate is not stopped (the figures show its rate)",
    ),
    (
        "ratemin",
        "a job below its minimum rate is not stopped (the figures show its rate)",
    ),
    (
        "rate_iops_min",
        "a job below its minimum rate is not stopped (the figures show its rate)",
    ),
    (
        "rate_cycle",
        "a job below its minimum rate is not stopped (the figures show its rate)",
    ),
    (
        "ratecycle",
        "a job below its minimum rate is not stopped (the figures show its rate)",
    ),
    (
        "random_generator",
        "random offsets come from the simulator's seeded generator",
    ),
    (
        "blockalign",
        "random offsets are aligned to the block size (fio's default)",
    ),
    (
        "ba",
        "random offsets are aligned to the block size (fio's default)",
    ),
    (
        "cmdprio_percentage",
        "the emulated device has one priority class",
    ),
    (
        "cmdprio_class",
        "the emulated device has one priority class",
    ),
    ("cmdprio", "the emulated device has one priority class"),
    ("cmdprio_hint", "the emulated device has one priority class"),
    (
        "cmdprio_bssplit",
        "the emulated device has one priority class",
    ),
    (
        "direct",
        "every I/O goes straight to the emulated device (there is no page cache)",
    ),
    (
        "buffered",
        "every I/O goes straight to the emulated device (there is no page cache)",
    ),
    ("thread", NO_FIGURE),
    ("invalidate", "there is no page cache to invalidate"),
    ("gtod_reduce", "the virtual clock costs nothing to read"),
    ("clocksource", "the virtual clock is the only clock"),
    ("gtod_cpu", NO_CPU),
    ("job_start_clock_id", NO_FIGURE),
    ("disable_lat", NO_FIGURE),
    ("disable_clat", NO_FIGURE),
    ("disable_slat", NO_FIGURE),
    ("disable_bw_measurement", NO_FIGURE),
    ("disable_bw", NO_FIGURE),
    ("significant_figures", NO_FIGURE),
    (
        "unified_rw_reporting",
        "fio's default (0, none) only: read and write are reported apart; other values are refused",
    ),
    (
        "kb_base",
        "fio's default (1024) only: sizes are read with kb_base=1024; other values are refused",
    ),
    ("unit_base", NO_FIGURE),
    ("bwavgtime", NO_FIGURE),
    ("iopsavgtime", NO_FIGURE),
    ("stats", NO_FIGURE),
    ("fadvise_hint", "there is no page cache"),
    ("pre_read", "there is no page cache"),
    (
        "end_fsync",
        "writes are durable at completion in the emulator",
    ),
    (
        "fsync_on_close",
        "writes are durable at completion in the emulator",
    ),
    ("end_syncfs", NO_FILES),
    ("create_fsync", NO_FILES),
    ("create_on_open", NO_FILES),
    ("create_only", NO_FILES),
    ("allow_file_create", NO_FILES),
    ("allow_mounted_write", NO_FILES),
    ("unlink", NO_FILES),
    ("unlink_each_loop", NO_FILES),
    ("filename_format", NO_FILES),
    ("unique_filename", NO_FILES),
    ("lockfile", NO_FILES),
    ("opendir", NO_FILES),
    ("directory", NO_FILES),
    ("filetype", NO_FILES),
    ("nrfiles", NO_FILES),
    ("nr_files", NO_FILES),
    ("openfiles", NO_FILES),
    ("file_service_type", NO_FILES),
    ("fallocate", NO_FILES),
    ("mem", "I/O buffers are host memory of the emulator"),
    ("iomem", "I/O buffers are host memory of the emulator"),
    ("iomem_align", "I/O buffers are host memory of the emulator"),
    ("mem_align", "I/O buffers are host memory of the emulator"),
    (
        "hugepage-size",
        "I/O buffers are host memory of the emulator",
    ),
    ("lockmem", "I/O buffers are host memory of the emulator"),
    ("cpumask", NO_CPU),
    ("cpus_allowed", NO_CPU),
    ("cpus_allowed_policy", NO_CPU),
    ("numa_cpu_nodes", NO_CPU),
    ("numa_mem_policy", NO_CPU),
    ("nice", NO_CPU),
    ("prio", "the emulated device has one priority class"),
    ("prioclass", "the emulated device has one priority class"),
    ("priohint", "the emulated device has one priority class"),
    ("ioscheduler", "there is no kernel I/O scheduler"),
    ("disk_util", "there is no kernel disk statistics file"),
    ("comm", NO_FIGURE),
    ("uid", NO_FIGURE),
    ("gid", NO_FIGURE),
    ("cgroup", NO_CPU),
    ("cgroup_nodelete", NO_CPU),
    ("cgroup_weight", NO_CPU),
    ("per_job_logs", NO_LOGS),
    ("write_bw_log", NO_LOGS),
    ("write_lat_log", NO_LOGS),
    ("write_iops_log", NO_LOGS),
    ("write_hist_log", NO_LOGS),
    ("log_entries", NO_LOGS),
    ("log_avg_msec", NO_LOGS),
    ("log_hist_msec", NO_LOGS),
    ("log_hist_coarseness", NO_LOGS),
    ("log_window_value", NO_LOGS),
    ("log_max_value", NO_LOGS),
    ("log_offset", NO_LOGS),
    ("log_prio", NO_LOGS),
    ("log_issue_time", NO_LOGS),
    ("log_compression", NO_LOGS),
    ("log_compression_cpus", NO_LOGS),
    ("log_store_compressed", NO_LOGS),
    ("log_alternate_epoch", NO_LOGS),
    ("log_unix_epoch", NO_LOGS),
    ("log_alternate_epoch_clock_id", NO_LOGS),
    ("block_error_percentiles", NO_LOGS),
    (
        "iodepth_batch",
        "submission batching is a host-CPU matter; I/Os are submitted one by one",
    ),
    (
        "iodepth_batch_submit",
        "submission batching is a host-CPU matter; I/Os are submitted one by one",
    ),
    (
        "iodepth_batch_complete_min",
        "completion reaping is a host-CPU matter",
    ),
    (
        "iodepth_batch_complete",
        "completion reaping is a host-CPU matter",
    ),
    (
        "iodepth_batch_complete_max",
        "completion reaping is a host-CPU matter",
    ),
    (
        "iodepth_low",
        "I/Os are topped up to iodepth as each completes",
    ),
    ("io_submit_mode", "submission is a host-CPU matter"),
    (
        "serialize_overlap",
        "the emulated device runs commands in submission order",
    ),
    (
        "write_hint",
        "the emulated device takes no write-lifetime hints",
    ),
    (
        "refill_buffers",
        "buffers are filled once per job, as fio does for buffer_compress_percentage",
    ),
    (
        "scramble_buffers",
        "buffers are filled once per job, as fio does for buffer_compress_percentage",
    ),
    ("error_dump", NO_FIGURE),
    (
        "verify_dump",
        "a block that fails verification is named in the job's error",
    ),
    ("verify_async", "verification is a host-CPU matter"),
    ("verify_async_cpus", NO_CPU),
    ("verify_backlog_batch", "the backlog is verified whole"),
    (
        "verifysort",
        "written blocks are verified in the order written",
    ),
    (
        "verifysort_nr",
        "written blocks are verified in the order written",
    ),
    (
        "verify_header_seed",
        "blocks are compared whole, so no header seed is needed",
    ),
    ("experimental_verify", "blocks are compared whole"),
    (
        "exitall_on_error",
        "a job's error already ends the run's figures for that job",
    ),
    // Engine options of io_uring, libaio and the sync engines.
    ("hipri", "polled completion is a host-CPU matter"),
    ("hipri_percentage", "polled completion is a host-CPU matter"),
    ("fixedbufs", "a host-CPU matter of io_uring"),
    ("registerfiles", "a host-CPU matter of io_uring"),
    ("sqthread_poll", "a host-CPU matter of io_uring"),
    ("sqthread_poll_cpu", "a host-CPU matter of io_uring"),
    ("nonvectored", "a host-CPU matter of io_uring"),
    ("force_async", "a host-CPU matter of io_uring"),
    ("uncached", "there is no page cache"),
    ("nowait", "a host-CPU matter"),
    ("userspace_reap", "a host-CPU matter of libaio"),
    ("libaio_vectored", "a host-CPU matter of libaio"),
    ("cmd_type", "NVMe commands are the emulator's only kind"),
    ("overwrite", NO_FILES),
    (
        "softrandommap",
        "random offsets are drawn without a random map anyway (as norandommap=1)",
    ),
    (
        "rate_ignore_thinktime",
        "after a thinktime the job catches up to its rate, fio's default",
    ),
    (
        "file_append",
        "the device is a block device, on which fio ignores it too",
    ),
    (
        "thinktime_spin",
        "spinning is host CPU; the job still idles for the whole thinktime",
    ),
    (
        "sync",
        "the device has no volatile write cache (id-ctrl vwc 0): O_SYNC/O_DSYNC writes are the same writes",
    ),
    (
        "readfua",
        "the device has no volatile write cache (id-ctrl vwc 0), so FUA changes nothing",
    ),
    (
        "writefua",
        "the device has no volatile write cache (id-ctrl vwc 0), so FUA changes nothing",
    ),
];

/// fio options refused with a reason (anything of fio's table not listed is refused as not
/// supported yet).
const REFUSED: &[(&str, &str)] = &[
    (
        "exec_prerun",
        "runs a shell command; znslab runs no commands from job files",
    ),
    (
        "exec_postrun",
        "runs a shell command; znslab runs no commands from job files",
    ),
    ("read_iolog", "I/O log replay is not supported"),
    ("write_iolog", "I/O logs are not written"),
    ("read_iolog_chunked", "I/O log replay is not supported"),
    ("merge_blktrace_file", "blktrace replay is not supported"),
    (
        "fdp",
        "the emulated devices have no flexible data placement",
    ),
    (
        "dataplacement",
        "the emulated devices have no flexible data placement",
    ),
    (
        "data_placement",
        "the emulated devices have no flexible data placement",
    ),
    (
        "profile",
        "fio's built-in profiles (tiobench, act) are not supported",
    ),
    ("cpuload", "the cpuio engine is not supported"),
    (
        "write_barrier",
        "barrier writes are gone from Linux (since 2.6.37); use fsync",
    ),
    ("gpu_dev_id", "needs a GPU (libcufile)"),
    (
        "fdp_pli",
        "the emulated devices have no flexible data placement",
    ),
    (
        "fdp_pli_select",
        "the emulated devices have no flexible data placement",
    ),
    (
        "plids",
        "the emulated devices have no flexible data placement",
    ),
    (
        "plid_select",
        "the emulated devices have no flexible data placement",
    ),
    (
        "dp_scheme",
        "the emulated devices have no flexible data placement",
    ),
    (
        "verify_mode",
        "io_uring_cmd compare commands are not modelled",
    ),
    (
        "read_mode",
        "io_uring_cmd compare commands are not modelled",
    ),
    ("verify_bytchk", "SCSI commands are not modelled"),
    ("cdb_len", "SCSI commands are not modelled"),
    ("md_per_io_size", "protection information is not modelled"),
    ("pi_act", "protection information is not modelled"),
    ("pi_chk", "protection information is not modelled"),
    ("apptag", "protection information is not modelled"),
    ("apptag_mask", "protection information is not modelled"),
    ("deac", "write zeroes commands are not modelled"),
];

/// fio's command-line options that are not job options: accepted (the output ones are
/// znslab's own `--output-format`/`--output`).
pub const COMMAND_LINE_ONLY: &[&str] = &[
    "eta",
    "eta-newline",
    "eta-interval",
    "status-interval",
    "minimal",
    "terse-version",
    "section",
    "output-format",
    "output",
    "bandwidth-log",
    "append-terse",
    "debug",
    "parse-only",
    "showcmd",
    "readonly",
    "warnings-fatal",
    "max-jobs",
    "inflate-log",
    "trigger-file",
    "trigger-timeout",
    "trigger",
    "trigger-remote",
    "aux-path",
    "idle-prof",
    "alloc-size",
    "latency-log",
    "crctest",
    "cpuclock-test",
    "server",
    "client",
    "remote-config",
    "daemonize",
    "staggered-start",
];

/// What znslab does with option `name`; `None` when fio has no such option.
pub fn status(name: &str) -> Option<Status> {
    if SUPPORTED.contains(&name) {
        return Some(Status::Supported);
    }
    if let Some((_, why)) = NOTICE.iter().find(|(n, _)| *n == name) {
        return Some(Status::Notice(why));
    }
    if let Some((_, why)) = REFUSED.iter().find(|(n, _)| *n == name) {
        return Some(Status::Refused(why));
    }
    if name.starts_with("verify")
        || name.starts_with("trim_")
        || name == "do_verify"
        || name == "experimental_verify"
    {
        return Some(Status::Refused("data verification is not supported yet"));
    }
    if name.starts_with("replay_") || name.starts_with("merge_blktrace") {
        return Some(Status::Refused("I/O log replay is not supported"));
    }
    if FIO_OPTIONS.contains(&name) || FIO_ALIASES.contains(&name) {
        return Some(Status::Refused("not supported yet"));
    }
    None
}

/// Why an I/O engine is refused; `None` for the engines znslab models.
pub fn engine_refusal(engine: &str) -> Option<String> {
    const MODELLED: &[&str] = &[
        "libaio",
        "io_uring",
        "io_uring_cmd",
        "psync",
        "sync",
        "pvsync",
        "pvsync2",
        "vsync",
        "posixaio",
        "mmap",
        "libzbc",
        "xnvme",
    ];
    if MODELLED.contains(&engine) {
        return None;
    }
    let why = match engine {
        "rbd" | "rados" => "talks to a Ceph cluster over the network",
        "http" => "talks to an HTTP/S3/Swift server over the network",
        "net" | "netsplice" => "sends over network sockets",
        "rdma" => "needs RDMA hardware and a peer",
        "nfs" => "talks to an NFS server over the network",
        "libhdfs" => "talks to an HDFS cluster over the network",
        "gfapi" | "gfapi_async" => "talks to a GlusterFS cluster over the network",
        "dfs" => "talks to a DAOS cluster over the network",
        "libiscsi" => "talks to an iSCSI target over the network",
        "nbd" => "talks to an NBD server over the network",
        "ime_psync" | "ime_psyncv" | "ime_aio" => "needs a DDN IME file system",
        "dev-dax" | "libpmem" | "pmemblk" => "needs persistent memory (DAX) from the kernel",
        "mtd" => "needs a kernel MTD flash device",
        "libblkio" => "drives virtio/vhost devices through libblkio, not an NVMe device",
        "spdk" | "spdk_bdev" => "is SPDK's external engine, loaded from a shared library",
        "page_fault" => "touches host memory pages; there is no device I/O",
        "windowsaio" => "needs Windows",
        "sg" => "sends SCSI commands through the kernel's sg driver",
        "e4defrag" => "runs ext4 defragmentation in the kernel",
        "falloc" | "ftruncate" => "works on files of a kernel file system",
        "filecreate" | "filestat" | "filedelete" | "dircreate" | "dirstat" | "dirdelete" => {
            "works on files of a kernel file system"
        }
        "splice" | "solarisaio" => "needs a kernel interface the emulator lacks",
        "libcufile" | "libhipfile" => "needs a GPU and its direct-storage driver",
        "exec" => "runs programs; znslab runs no commands from job files",
        "cpuio" => "burns host CPU; the emulator has no host CPU to model",
        "null" | "cpp_null" => "does no I/O; there is no device work to emulate",
        "external" => "loads an engine from a shared library",
        _ if engine.starts_with("external:") => "loads an engine from a shared library",
        _ => "is not an engine znslab knows",
    };
    Some(format!("ioengine {engine} {why}"))
}
