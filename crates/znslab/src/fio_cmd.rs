//! `znslab fio`: fio job files and options against the emulated device.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context};
use device::{Controller, DeviceHandle};
use sim::Sim;
use workload::fio;

const DEFAULT_JOB: &str = include_str!("../../../jobs/default.fio");

/// Options znslab itself takes; everything else is a fio option.
struct Own {
    device: Option<String>,
    seed: u64,
    /// `--output-format` (several, comma-separated), `--minimal`, `--terse-version`.
    formats: fio::Formats,
    terse_version: u32,
    output: Option<String>,
    /// fdatasync the image after every command that changed it (survives the host's own
    /// power loss).
    image_sync: bool,
    /// Host memory the run may take (`--mem-budget`); default half the machine's memory.
    mem_budget: u64,
}

pub fn run(args: &[String]) -> anyhow::Result<ExitCode> {
    let mut own = Own {
        device: None,
        seed: 1,
        formats: fio::Formats {
            normal: true,
            ..Default::default()
        },
        terse_version: 3,
        output: None,
        image_sync: false,
        mem_budget: device::default_memory_budget(),
    };
    let mut jobfile: Option<String> = None;
    let mut fio_args = Vec::new();
    let mut sections_wanted: Vec<String> = Vec::new();
    for a in args {
        let (k, v) = a
            .split_once('=')
            .map(|(k, v)| (k, Some(v)))
            .unwrap_or((a.as_str(), None));
        match (k, v) {
            ("--device", Some(v)) => own.device = Some(v.to_string()),
            ("--seed", Some(v)) => {
                own.seed = v
                    .parse()
                    .with_context(|| format!("--seed: '{v}' is not a number"))?
            }
            ("--output-format", Some(v)) => {
                own.formats =
                    fio::Formats::parse(v).map_err(|e| anyhow!("--output-format: {}", e.message))?
            }
            ("--minimal", None) => {
                own.formats = fio::Formats {
                    terse: true,
                    ..Default::default()
                }
            }
            ("--terse-version", Some(v)) => {
                own.terse_version = match v {
                    "2" | "3" | "4" | "5" => v.parse().unwrap_or(3),
                    _ => bail!("--terse-version: '{v}' is not 2, 3, 4 or 5"),
                }
            }
            ("--output", Some(v)) => own.output = Some(v.to_string()),
            ("--image-sync", None) => own.image_sync = true,
            ("--mem-budget", Some(v)) => {
                own.mem_budget = match fio::parse_size(v) {
                    Some(fio::Size::Bytes(b)) if b > 0 => b,
                    _ => bail!("--mem-budget: '{v}' is not a size (e.g. 512m, 8g)"),
                }
            }
            (
                "--device" | "--seed" | "--output-format" | "--output" | "--mem-budget"
                | "--terse-version",
                None,
            ) => {
                bail!("{k} needs a value ({k}=...)")
            }
            ("--section", Some(v)) => sections_wanted.push(v.to_string()),
            // fio's command-line options that are not job options.
            _ if k
                .strip_prefix("--")
                .is_some_and(|n| fio::COMMAND_LINE_ONLY.contains(&n)) =>
            {
                eprintln!(
                    "znslab fio: {k} accepted and ignored: znslab prints no progress lines \
                     and writes the normal or json output only"
                );
            }
            _ if !a.starts_with("--") => {
                if jobfile.replace(a.clone()).is_some() {
                    bail!("more than one job file given ('{a}')");
                }
            }
            _ => fio_args.push(a.clone()),
        }
    }
    let sections = match &jobfile {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("job file {path}"))?;
            fio::parse_jobfile(&text).map_err(|e| anyhow!("job file {path}: {e}"))?
        }
        None if fio_args.iter().any(|a| a.starts_with("--name=")) => Vec::new(),
        None => {
            eprintln!("znslab fio: no job file or --name given; running the embedded default job (jobs/default.fio)");
            fio::parse_jobfile(DEFAULT_JOB).map_err(|e| anyhow!("default job: {e}"))?
        }
    };
    let mut sections = fio::select_sections(sections, &sections_wanted);
    // Command-line options: before any --name they override the job file's globals.
    let cli = fio::parse_args(&fio_args).map_err(|e| anyhow!("{e}"))?;
    let mut named_on_cli = vec![false; sections.len()];
    // --filename on the command line names the device image for every job, in place of
    // the job file's device nodes (one run drives one image).
    if cli
        .first()
        .is_some_and(|g| g.options.iter().any(|(k, _)| k == "filename"))
    {
        for s in sections.iter_mut() {
            s.options.retain(|(k, _)| k != "filename");
        }
    }
    for s in cli {
        if s.name == "global" {
            match sections.iter_mut().find(|x| x.name == "global") {
                Some(g) => g.options.extend(s.options),
                None => {
                    sections.insert(0, s);
                    named_on_cli.insert(0, false);
                }
            }
        } else {
            sections.push(s);
            named_on_cli.push(true);
        }
    }
    // Output options (percentiles) are the output's; the rest build the jobs.
    let (sections, mut out_spec) =
        fio::split_output_options(&sections, &named_on_cli).map_err(|e| anyhow!("{e}"))?;
    out_spec.formats = own.formats;
    out_spec.terse_version = own.terse_version;
    let (jobs, notices) = fio::build_jobs_with_notices(&sections).map_err(|e| anyhow!("{e}"))?;
    for n in notices {
        eprintln!("znslab fio: {n}");
    }

    let filenames: std::collections::BTreeSet<&String> =
        jobs.iter().filter_map(|j| j.filename.as_ref()).collect();
    if filenames.len() > 1 {
        bail!("jobs name different filename= images; one run drives one device");
    }
    let filenames_empty = filenames.is_empty();
    let controller = match filenames.into_iter().next() {
        Some(image) => {
            if own.device.is_some() {
                bail!("--device and filename= both given: an image carries its own device configuration");
            }
            let mut c = Controller::open_image(Path::new(image)).map_err(|e| anyhow!("{e}"))?;
            c.set_sync(own.image_sync);
            c
        }
        None => {
            let cfg =
                crate::load_device(own.device.as_deref().unwrap_or(device::presets::DEFAULT))?;
            cfg.layout_within(own.mem_budget)
                .map_err(|e| anyhow!("invalid device configuration: {e}"))?;
            let mut c = Controller::in_memory(cfg).map_err(|e| anyhow!("{e}"))?;
            c.set_memory_budget(own.mem_budget);
            c
        }
    };
    let limits = fio::RunLimits {
        memory_budget: own.mem_budget,
        // Without an image the device keeps every byte written in memory.
        data_in_memory: filenames_empty,
    };

    let sim = Sim::new(own.seed);
    let dev = DeviceHandle::new(&sim, controller);
    let wall = Instant::now();
    let result = fio::run_with(&sim, &dev, &jobs, &limits).map_err(|e| anyhow!("{e}"))?;
    let wall_s = wall.elapsed().as_secs_f64();
    let failed = result.jobs.iter().any(|j| j.error.is_some());
    let mut controller = dev
        .into_controller()
        .ok_or_else(|| anyhow!("internal: device still shared after the run"))?;
    if let Some(cause) = controller.image_error() {
        eprintln!("znslab fio: {cause}");
    }
    out_spec.unix_time_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let text = fio::render(&result, &controller, own.seed, wall_s, &out_spec);
    let closed = controller.close().context("saving the device image");
    match own.output {
        Some(path) => std::fs::write(&path, text).with_context(|| format!("--output {path}"))?,
        None => print!("{text}"),
    }
    closed?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
