//! fio: job files, options, the runner and fio-style output.

mod jobfile;
mod options;
mod output;
mod runner;

pub use jobfile::{parse_args, parse_jobfile, select_sections, Section};
pub use options::{
    build_jobs, build_jobs_with_notices, engine_refusal, parse_size, status, Direction, JobSpec,
    Mix, Pattern, Size, Status, ZoneMode, COMMAND_LINE_ONLY, DIFFERS, FIO_ALIASES, FIO_OPTIONS,
};
pub use output::{
    compression_json, json_output, json_output_with, normal_output, render, split_output_options,
    Formats, JobOutput, OutputSpec,
};
pub use runner::{run, run_with, DirStats, JobResult, RunLimits, RunResult};

use std::fmt;

/// A job file or option that cannot be used, naming the job and option at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FioError {
    pub job: Option<String>,
    pub option: Option<String>,
    pub message: String,
}

impl FioError {
    pub fn new(message: impl Into<String>) -> Self {
        FioError {
            job: None,
            option: None,
            message: message.into(),
        }
    }
    pub fn option(job: &str, option: &str, message: impl Into<String>) -> Self {
        FioError {
            job: Some(job.into()),
            option: Some(option.into()),
            message: message.into(),
        }
    }
}

impl fmt::Display for FioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.job, &self.option) {
            (Some(j), Some(o)) => write!(f, "job '{j}', option '{o}': {}", self.message),
            (Some(j), None) => write!(f, "job '{j}': {}", self.message),
            (None, Some(o)) => write!(f, "option '{o}': {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for FioError {}
