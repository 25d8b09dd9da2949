//! `znslab ycsb load|run [rocksdb] -P workloads/workloada -p recordcount=N [-s] [-threads N]
//! [-target N]`: YCSB's core workload on the store on zonefs on a device, with YCSB's command
//! line (bin/ycsb's and Client's flags) and output. Without `--image`, each invocation has a
//! fresh in-memory device, so `run` loads the records first (reported in `--json` only); with
//! `--image FILE`, `load` creates the image and `run` reopens it.

use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;

use anyhow::{anyhow, bail, Context};
use device::Controller;
use host::lsm::db::DbOptions;
use lab::stack::{self, FsStart, Stack};
use serde_json::json;
use sim::Sim;
use workload::ycsb::{self, YcsbConfig};

#[derive(clap::Args)]
pub struct Args {
    /// load or run.
    phase: String,
    /// The binding, as bin/ycsb takes it: rocksdb (the store); optional.
    binding: Option<String>,
    /// A workload properties file (repeatable; later ones override).
    #[arg(short = 'P')]
    files: Vec<PathBuf>,
    /// A property, name=value (repeatable; overrides the files).
    #[arg(short = 'p')]
    props: Vec<String>,
    /// Client threads (YCSB's -threads, the threadcount property).
    #[arg(long)]
    threads: Option<usize>,
    /// Operations per second over all threads (YCSB's -target; virtual seconds).
    #[arg(long)]
    target: Option<u64>,
    /// The DB class (YCSB's -db): site.ycsb.db.rocksdb.RocksDBClient.
    #[arg(long)]
    db: Option<String>,
    /// YCSB's -load (the load phase; must agree with the phase given).
    #[arg(long)]
    load: bool,
    /// YCSB's -t (the transaction phase; must agree with the phase given).
    #[arg(short = 't')]
    transactions: bool,
    /// YCSB's -s: status lines on stderr every status.interval virtual seconds.
    #[arg(short = 's')]
    status: bool,
    /// YCSB's -l: the label of status lines.
    #[arg(short = 'l')]
    label: Option<String>,
    /// bin/ycsb's -cp (a Java class path): accepted with a notice.
    #[arg(long = "cp")]
    classpath: Option<String>,
    /// bin/ycsb's -jvm-args: accepted with a notice.
    #[arg(long = "jvm-args", allow_hyphen_values = true)]
    jvm_args: Option<String>,
    /// Device preset or TOML file.
    #[arg(long, default_value = device::presets::DEFAULT)]
    device: String,
    /// Keep the device in this image file between load and run.
    #[arg(long)]
    image: Option<PathBuf>,
    /// fdatasync the image after every command that changed it, so it survives the host
    /// machine's power loss too (a killed process loses nothing without it).
    #[arg(long)]
    image_sync: bool,
    /// `load` replaces an existing `--image` (without it, an existing image is refused: it
    /// holds a database).
    #[arg(long)]
    force: bool,
    /// none, snappy, lz4, zstd, zstdpc (zstd with 6 parallel compression threads), zlib, qat
    /// (Deflate on a QAT 8970), cc (CCZNS: the device compresses), cc-single-dr, cc-single-cw.
    #[arg(long, default_value = "snappy")]
    compression: String,
    /// real (the default) or modeled: values are runs of one byte of the dataset's sizes and
    /// every codec (the store's and the device's) gives sizes drawn from its distribution
    /// measured on the dataset's corpus, cached beside it; needs dataset=amazon or reddit, no
    /// --image.
    #[arg(long, default_value = "real", value_parser = ["real", "modeled"])]
    payload: String,
    #[arg(long, default_value_t = 8)]
    cores: usize,
    #[command(flatten)]
    mkfs: crate::MkfsArgs,
    #[arg(long)]
    json: bool,
    /// Write every loaded record to FILE (`[u32 len][key][u32 len][value]`), to replay the same
    /// data into real RocksDB with tools/rocksdb_crosscheck.py.
    #[arg(long)]
    dump_kv: Option<PathBuf>,
}

/// Refuse a phase whose records could not fit on the device even compressed 4:1 (none of
/// the datasets compresses half as well), before anything is written: it would otherwise run
/// until the device is full, holding what it wrote in memory.
fn check_fits(cfg: &YcsbConfig, dev: &device::DeviceConfig, loads: bool) -> anyhow::Result<()> {
    let layout = dev.layout().map_err(|e| anyhow!("{e}"))?;
    let capacity = layout.namespace_lbas() * layout.lba_bytes;
    let inserts = (cfg.operationcount as f64 * cfg.insert) as u64;
    let records = if loads { cfg.recordcount } else { 0 } + inserts;
    let need = records.saturating_mul(cfg.record_bytes());
    if need / 4 > capacity {
        bail!(
            "-p recordcount={}: {records} records of {} bytes take {need} bytes, more than 4 \
             times the device's {capacity}",
            cfg.recordcount,
            cfg.record_bytes()
        );
    }
    Ok(())
}

/// YCSB's single-dash long flags (`-threads 4`, `-target`, `-db`, `-load`, bin/ycsb's `-cp`
/// and `-jvm-args`) as the double-dash ones clap reads, in a `znslab ycsb` command line; values
/// of `-p`, `-P` and `-l` are left as they are.
pub fn ycsb_args(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if args.get(1).and_then(|a| a.to_str()) != Some("ycsb") {
        return args;
    }
    let mut out = Vec::with_capacity(args.len());
    let mut value_next = false;
    for a in args {
        let s = a.to_str().unwrap_or("");
        let mapped = match s {
            _ if value_next => None,
            "-threads" | "-target" | "-db" | "-load" | "-cp" | "-jvm-args" => {
                Some(std::ffi::OsString::from(format!("-{s}")))
            }
            _ => None,
        };
        value_next = !value_next && matches!(s, "-p" | "-P" | "-l");
        out.push(mapped.unwrap_or(a));
    }
    out
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let loading = match a.phase.as_str() {
        "load" => true,
        "run" => false,
        "shell" => bail!("ycsb shell: the interactive shell is not supported (use load or run)"),
        p => bail!("phase {p:?}: use load or run"),
    };
    match a.binding.as_deref() {
        None | Some("rocksdb") => {}
        Some(b @ ("basic" | "basicts")) => {
            bail!("binding {b}: BasicDB does no I/O; znslab runs the rocksdb binding on its store")
        }
        Some(b) => bail!("binding {b}: znslab runs the rocksdb binding on its store only"),
    }
    if a.load && !loading {
        bail!("-load: contradicts the phase `run` (bin/ycsb passes -t for run)");
    }
    if a.transactions && loading {
        bail!("-t: contradicts the phase `load` (bin/ycsb passes -load for load)");
    }
    let mut cfg = YcsbConfig::default();
    for f in &a.files {
        let text = std::fs::read_to_string(f).with_context(|| format!("-P {}", f.display()))?;
        cfg.load_file(&text)
            .map_err(|e| anyhow!("{}: {e}", f.display()))?;
    }
    for p in &a.props {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| anyhow!("-p {p:?}: use name=value"))?;
        cfg.set(k.trim(), v.trim())
            .map_err(|e| anyhow!("-p: {e}"))?;
    }
    if let Some(t) = a.threads {
        if t == 0 || t > ycsb::MAX_THREADS {
            bail!(
                "--threads {t}: use 1 to {} client threads",
                ycsb::MAX_THREADS
            );
        }
        cfg.threads = t;
    }
    if let Some(t) = a.target {
        cfg.set("target", &t.to_string())
            .map_err(|e| anyhow!("-target: {e}"))?;
    }
    if let Some(db) = &a.db {
        cfg.set("db", db).map_err(|e| anyhow!("-db: {e}"))?;
    }
    if a.status {
        cfg.status = true;
    }
    if let Some(l) = &a.label {
        cfg.label = l.clone();
    }
    if let Some(cp) = &a.classpath {
        cfg.notices
            .push(format!("-cp {cp}: no Java classes are loaded; ignored"));
    }
    if let Some(j) = &a.jvm_args {
        cfg.notices
            .push(format!("-jvm-args {j}: there is no JVM; ignored"));
    }
    cfg.prepare().map_err(|e| anyhow!("{e}"))?;
    cfg.check(!loading).map_err(|e| anyhow!("{e}"))?;
    cfg.measure.check().map_err(|e| anyhow!("property {e}"))?;
    // Client.initDb: no more threads than operations (the warning is YCSB's, on stdout).
    let opcount = if loading {
        cfg.insertcount.unwrap_or(cfg.recordcount)
    } else {
        cfg.operationcount
    };
    if cfg.threads as u64 > opcount && opcount > 0 && !a.json {
        cfg.threads = opcount as usize;
        println!(
            "Warning: the threadcount is bigger than recordcount, the threadcount will be \
             recordcount!"
        );
    }
    for n in &cfg.notices {
        eprintln!("znslab ycsb: {n}");
    }
    if cfg.status && cfg.measure.kind == ycsb::measure::MeasurementType::TimeSeries {
        // StatusThread's "standard status": with timeseries, status lines go to stdout too.
        cfg.status_sink = Some(ycsb::StatusSink(Rc::new(|l: &str| {
            eprintln!("{l}");
            println!("{l}");
        })));
    }
    if a.cores == 0 || a.cores > workload::dbbench::MAX_CORES {
        bail!(
            "--cores {}: use 1 to {} host cores",
            a.cores,
            workload::dbbench::MAX_CORES
        );
    }
    if a.dump_kv.is_some() {
        cfg.dump = Some(Default::default());
    }
    if !a.json {
        cfg.progress = crate::progress_bar::terminal();
    }
    let mut opts = DbOptions::default();
    crate::set_compression(&a.compression, &mut opts).map_err(|e| anyhow!("--compression {e}"))?;
    let payload = lab::spec::Payload::parse(&a.payload)?;
    if !payload.is_real() && a.image.is_some() {
        // An image does not record how its chunks were made: one loaded modeled and run real
        // would read as corrupt.
        bail!("--payload modeled: not with --image (a modeled run keeps its device in memory)");
    }
    let model = payload
        .model(cfg.dataset)
        .map_err(|e| anyhow!("--payload modeled: {e}"))?;
    opts.table.payload = model.clone();
    cfg.payload = model;

    let sim = Sim::new(cfg.seed);
    let (mut ctl, fresh) = match (&a.image, loading) {
        (Some(img), false) => {
            let c = Controller::open_image(img).map_err(|e| anyhow!("{e}"))?;
            check_fits(&cfg, c.config(), false)?;
            (c, false)
        }
        (Some(img), true) => {
            let dev = crate::load_device(&a.device)?;
            check_fits(&cfg, &dev, true)?;
            if img.exists() && !a.force {
                bail!(
                    "{} exists and may hold a database: `ycsb run --image` uses it; pass --force \
                     to load a new one over it",
                    img.display()
                );
            }
            (
                Controller::create_image(img, dev).map_err(|e| anyhow!("{e}"))?,
                true,
            )
        }
        (None, _) => {
            let dev = crate::load_device(&a.device)?;
            check_fits(&cfg, &dev, true)?;
            (
                Controller::in_memory(dev).map_err(|e| anyhow!("{e}"))?,
                true,
            )
        }
    };
    ctl.set_sync(a.image_sync);
    ctl.set_payload_model(opts.table.payload.as_ref());
    let Stack { dev, cpu, io, .. } = Stack::new(&sim, ctl, a.cores);
    // A conventional namespace (tcssd): the zones the host emulates are kept beside the image.
    let zones_file = a.image.as_ref().map(|img| {
        let mut p = img.clone().into_os_string();
        p.push(".zones");
        PathBuf::from(p)
    });
    // The file is removed once read (and any left by an older image before a load): a process
    // killed before its clean exit leaves none, and the next run finds the zones again on the
    // drive (DULBE reads, as after a power cut) instead of trusting a stale table.
    let mut recover_zones = false;
    if let (Some(path), Some(_)) = (&zones_file, io.emulated_zone_table()) {
        match (fresh, std::fs::read(path)) {
            (false, Ok(text)) => {
                let table: Vec<(u8, u64)> = serde_json::from_slice(&text)
                    .with_context(|| format!("{}: not a zone table", path.display()))?;
                io.restore_emulated_zones(&table)
                    .map_err(|e| anyhow!("{}: {e}", path.display()))?;
            }
            (false, Err(e)) if e.kind() == std::io::ErrorKind::NotFound => recover_zones = true,
            (false, Err(e)) => {
                return Err(e).with_context(|| {
                    format!(
                        "the zones znslab emulates over this conventional namespace are kept in {}",
                        path.display()
                    )
                })
            }
            (true, _) => {}
        }
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()))
            }
            _ => {}
        }
    }
    let io_kept = io.clone();
    let wall = std::time::Instant::now();
    let sim2 = sim.clone();
    let cfg2 = cfg.clone();
    let mkfs = opts.mkfs_options(a.mkfs.spec().mkfs_options()?);
    let max_active_io_zones = mkfs.max_active_io_zones;
    let image = a.image.clone();
    let reports = sim.block_on(async move {
        if recover_zones {
            io.recover_emulated_zones()
                .await
                .map_err(|e| anyhow!("finding the emulated zones again: {e}"))?;
        }
        let start = if fresh {
            FsStart::Mkfs(mkfs)
        } else {
            FsStart::Mount
        };
        let fs = stack::file_system(io, start)
            .await
            .map_err(|e| match (&e, &image) {
                (host::zonefs::FsError::NoFileSystem, Some(img)) => anyhow!(
                    "zonefs: no zonefs metadata found in {img} (no file system was made on it): \
                 make one by loading records with `znslab ycsb load -P WORKLOAD --image {img}`",
                    img = img.display()
                ),
                _ => anyhow!("zonefs: {e}"),
            })?;
        // Not kept on the device: again after a mount.
        fs.limit_active_io_zones(max_active_io_zones);
        let db = Rc::new(
            stack::store(Rc::new(fs), opts)
                .await
                .map_err(|e| anyhow!("store: {e}"))?,
        );
        let mut reports = Vec::new();
        if loading || fresh {
            let mut load_cfg = cfg2.clone();
            if !loading {
                // The records a `run` on a fresh device needs, loaded quietly (its figures
                // are in --json's phases).
                load_cfg.status = false;
            }
            reports.push(
                ycsb::load(&sim2, &db, &load_cfg)
                    .await
                    .map_err(|e| anyhow!("{e}"))?,
            );
        }
        if !loading {
            reports.push(
                ycsb::run(&sim2, &db, &cfg2)
                    .await
                    .map_err(|e| anyhow!("{e}"))?,
            );
        }
        // Make everything durable before the image is closed.
        db.flush().await.map_err(|e| anyhow!("store: {e}"))?;
        Ok::<_, anyhow::Error>((reports, db.stats(), db.fs().stats()))
    });
    // A failure of the image's own storage (a full disk) names its cause.
    let reports = reports.map_err(|e| match dev.with(|c| c.image_error()) {
        Some(cause) => e.context(cause),
        None => e,
    })?;
    let (reports, stats, zonefs) = reports;
    let now = sim.now().as_ns();
    let (host_written, flash, device_compression, device_memory) = dev.with(|c| {
        (
            c.counters().host_bytes_written,
            c.flash_counters().bytes_programmed,
            workload::fio::compression_json(c, now),
            json!({"now": c.resident_bytes(), "peak": c.peak_resident_bytes()}),
        )
    });
    let cpu_busy: u64 = cpu.busy_per_core().iter().map(|d| d.as_ns()).sum();
    if let (Some(path), Some(d)) = (&a.dump_kv, &cfg.dump) {
        std::fs::write(path, &*d.borrow())
            .with_context(|| format!("--dump-kv {}", path.display()))?;
    }
    if let (Some(path), Some(table)) = (&zones_file, io_kept.emulated_zone_table()) {
        std::fs::write(path, serde_json::to_vec(&table)?)
            .with_context(|| format!("saving the emulated zones to {}", path.display()))?;
    }
    drop(io_kept);
    if let Some(mut ctl) = dev.into_controller() {
        if let Some(cause) = ctl.image_error() {
            eprintln!("znslab ycsb: {cause}");
        }
        ctl.close().context("saving the device image")?;
    }
    if a.json {
        let v = json!({
            "phases": reports.iter().map(|r| json!({
                "phase": r.phase,
                "runtime_ms": r.seconds * 1e3,
                "throughput_ops_per_s": r.ops as f64 / r.seconds.max(1e-12),
                "operations": r.by_op.iter().map(|(op, s)| (op.to_string(), json!({
                    "count": s.latency.count(),
                    "ok": s.ok,
                    "not_found": s.not_found,
                    "mean_us": s.latency.mean() / 1e3,
                    "p50_us": s.latency.percentile(50.0) as f64 / 1e3,
                    "p95_us": s.latency.percentile(95.0) as f64 / 1e3,
                    "p99_us": s.latency.percentile(99.0) as f64 / 1e3,
                    "p99.9_us": s.latency.percentile(99.9) as f64 / 1e3,
                    "p99.99_us": s.latency.percentile(99.99) as f64 / 1e3,
                }))).collect::<serde_json::Map<_, _>>(),
            })).collect::<Vec<_>>(),
            "host_bytes_written": host_written,
            "flash_bytes_programmed": flash,
            "level_files": stats.level_files,
            "level_bytes": stats.level_bytes,
            "compactions": stats.compactions,
            "trivial_moves": stats.trivial_moves,
            "host_memory_bytes": {
                "memtables": stats.memtable_bytes,
                "block_cache": stats.block_cache_bytes,
                "index_and_filter": stats.index_filter_bytes,
                "total": stats.memtable_bytes as u64 + stats.block_cache_bytes + stats.index_filter_bytes,
            },
            "flushed_bytes": stats.flushed_bytes,
            "compaction_written_bytes": stats.compaction_written_bytes,
            "wal_bytes": stats.wal_bytes,
            "host_codec_bytes": {
                "compressed": stats.host_compressed_bytes,
                "decompressed": stats.host_decompressed_bytes,
            },
            "device_memory_bytes": device_memory,
            "host_cpu_busy_s": cpu_busy as f64 / 1e9,
            "zonefs": crate::zonefs_json(&zonefs),
            "device_compression": device_compression,
            "wall_s": wall.elapsed().as_secs_f64(),
        });
        let mut v = v;
        if !payload.is_real() {
            // Sizes were drawn, not made by a codec: the JSON says so (real runs' is unchanged).
            v["payload"] = json!("modeled");
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    // YCSB prints one phase: the one asked for. A `run` without --image loaded first; that
    // load is said on stderr (its figures are in --json's phases).
    let shown = reports.last().expect("a phase ran");
    if reports.len() > 1 {
        eprintln!(
            "znslab ycsb: no --image: loaded {} records first on a fresh device (that load \
             is not reported here; --json shows both phases)",
            reports[0].ops
        );
    }
    let out = shown.export();
    let to_stdout =
        cfg.measure.exportfile.is_none() && cfg.measure.exporter == ycsb::measure::Exporter::Text;
    match &cfg.measure.exportfile {
        Some(path) => std::fs::write(path, &out).with_context(|| format!("exportfile {path}"))?,
        None => print!("{out}"),
    }
    if !payload.is_real() {
        eprintln!(
            "znslab ycsb: --payload modeled: stored sizes were drawn from the codecs' measured \
             distributions; no codec ran"
        );
    }
    let mut extra = format!(
        "[ZNSLAB], HostBytesWritten, {host_written}\n[ZNSLAB], FlashBytesProgrammed, {flash}\n[ZNSLAB], HostCpuBusy(ms), {:.1}\n",
        cpu_busy as f64 / 1e6,
    );
    for (level, files) in stats.level_files.iter().enumerate() {
        extra += &format!("[ZNSLAB], L{level}Files, {files}\n");
    }
    extra += &format!(
        "[ZNSLAB], WallTime(s), {:.1}\n",
        wall.elapsed().as_secs_f64()
    );
    // znslab's own lines follow YCSB's text; beside a JSON exporter or an exportfile they go
    // to stderr, so that what YCSB writes stays as YCSB writes it.
    if to_stdout {
        print!("{extra}");
    } else {
        eprint!("{extra}");
    }
    Ok(ExitCode::SUCCESS)
}
