//! A job as fio's options describe it, once parsed: what it does, where, how much, how fast.

use super::features::{LatencyTarget, SpRandom, SteadyState};
use super::values::{Direction, Distribution, Mix, Pattern, Size};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneMode {
    /// fio's default: no zone awareness, I/O goes where the offsets say, errors and all.
    None,
    /// fio's zonemode=zbd: writes at write pointers, reads below them, trims reset zones.
    Zbd,
    /// fio's zonemode=strided: `zonesize` bytes in each window of `zonerange`, then the
    /// next window `zoneskip` further on (offsets as in zonemode none).
    Strided,
}

/// The block sizes of one direction: `bs`/`bsrange` give a range (I/O sizes are drawn
/// between its ends, multiples of the smaller); `bssplit` sizes with their percentages of the
/// I/Os, which win over the range when given (fio's get_next_buflen).
#[derive(Clone, Debug, PartialEq)]
pub struct BlockSizes {
    pub min: u64,
    pub max: u64,
    pub split: Vec<(u64, u32)>,
}

impl Default for BlockSizes {
    fn default() -> Self {
        BlockSizes {
            min: 4096,
            max: 4096,
            split: Vec::new(),
        }
    }
}

impl BlockSizes {
    /// Every size an I/O of this direction can have (the split's, or the range's ends).
    pub fn sizes(&self) -> Vec<u64> {
        if self.split.is_empty() {
            vec![self.min, self.max]
        } else {
            self.split.iter().map(|(s, _)| *s).collect()
        }
    }
    pub fn smallest(&self) -> u64 {
        self.sizes().into_iter().min().unwrap_or(4096)
    }
    pub fn largest(&self) -> u64 {
        self.sizes().into_iter().max().unwrap_or(4096)
    }
    /// One size for every I/O.
    pub fn fixed(&self) -> bool {
        self.smallest() == self.largest()
    }
}

/// fio's error types (td_error.h): the bits of `continue_on_error`.
pub const ERROR_READ: u32 = 1;
pub const ERROR_WRITE: u32 = 2;
pub const ERROR_VERIFY: u32 = 4;

/// `continue_on_error` (which error types a job goes on after) and `ignore_error` (per type,
/// the errnos that count as non-fatal; fio's default EIO and EILSEQ when not given).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErrorPolicy {
    pub continue_on: u32,
    pub ignore: [Option<Vec<i32>>; 3],
}

/// `dedupe_percentage` and its mode: that share of the writes repeat an earlier buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct Dedupe {
    pub percentage: u32,
    /// dedupe_mode=working_set: duplicates are drawn from the first unique buffers,
    /// `working_set_percentage` of the job's size; repeat (false) repeats the last unique
    /// buffer.
    pub working_set: bool,
    pub working_set_percentage: u32,
    /// dedupe_global: jobs with it share one set of buffers.
    pub global: bool,
}

impl Default for Dedupe {
    fn default() -> Self {
        Dedupe {
            percentage: 0,
            working_set: false,
            working_set_percentage: 5, // fio's default
            global: false,
        }
    }
}

/// One job (one clone, after numjobs is expanded).
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    pub name: String,
    /// Which clone of a numjobs job this is (0-based).
    pub clone: u32,
    /// The job's direction; with `mix` the first of its directions (reads for rw/randrw,
    /// writes for trimwrite).
    pub direction: Direction,
    pub pattern: Pattern,
    pub mix: Mix,
    /// rw/randrw: percent of I/Os that are reads.
    pub rwmixread: u32,
    /// `rw=...:N`: sequential jobs add N bytes after each I/O (negative: backwards); random
    /// ones take a new random offset every N I/Os.
    pub rw_modifier: Option<i64>,
    /// The largest block size of any direction (buffers are sized for it); set from
    /// `block_sizes` by [`JobSpec::settle_block_sizes`].
    pub bs: u64,
    /// The smallest block size of any direction.
    pub bs_min: u64,
    /// Per direction (read, write, trim): `bs`/`bsrange` and `bssplit`.
    pub block_sizes: [BlockSizes; 3],
    pub size: Option<Size>,
    pub io_size: Option<Size>,
    pub number_ios: Option<u64>,
    pub offset: Size,
    pub offset_increment: u64,
    pub loops: u32,
    pub iodepth: u32,
    /// Wait for earlier jobs to finish before starting (starts a new reporting group).
    pub stonewall: bool,
    /// Start after the named job has finished.
    pub wait_for: Option<String>,
    pub zonemode: ZoneMode,
    /// `zonesize`: must match the device's zone size in zonemode=zbd, as in fio.
    pub zone_size: Option<u64>,
    /// zonemode was given (fio: without it, a zonesize means strided).
    pub zonemode_given: bool,
    pub zone_range: Option<u64>,
    pub zone_skip: u64,
    pub max_open_zones: u32,
    pub job_max_open_zones: u32,
    pub ignore_zone_limits: bool,
    pub zone_reset_threshold: f64,
    pub zone_reset_frequency: f64,
    pub buffer_compress_percentage: u32,
    pub buffer_compress_chunk: u64,
    /// znslab extension: each 4 KiB page of the buffers draws its percentage uniformly from
    /// buffer_compress_percentage ± this, so page compression ratios vary as real data's do.
    pub buffer_compress_spread: u32,
    /// `buffer_pattern`: bytes the buffers repeat (or fill their compressible part with).
    pub buffer_pattern: Vec<u8>,
    /// `zero_buffers`: buffers of zeros instead of random bytes.
    pub zero_buffers: bool,
    pub runtime_ns: Option<u64>,
    /// Wait this long after the group starts before the first I/O (not counted in runtime).
    pub startdelay_ns: u64,
    /// I/Os completed in the first ramp_time after the job starts are not counted.
    pub ramp_time_ns: u64,
    pub time_based: bool,
    pub group_reporting: bool,
    pub randseed: Option<u64>,
    pub random_distribution: Distribution,
    /// Bytes per second the job may issue (0 = no limit); `rate_iops` is turned into this.
    pub rate_bytes: u64,
    /// rate_process=poisson: exponential gaps between I/Os instead of even ones.
    pub rate_poisson: bool,
    /// Idle time after every `thinktime_blocks` I/Os.
    pub thinktime_ns: u64,
    pub thinktime_blocks: u64,
    /// `lat_percentiles`/`clat_percentiles`, and `percentile_list` (passed to the results).
    pub lat_percentiles: bool,
    pub clat_percentiles: bool,
    pub percentile_list: Option<Vec<f64>>,
    pub filename: Option<String>,
    pub ioengine: String,
    pub read_beyond_wp: bool,
    /// `verify=`: written blocks are read back and compared with the bytes written.
    pub verify: bool,
    /// The verify method named (md5, crc32c, ...), for messages.
    pub verify_method: String,
    pub do_verify: bool,
    pub verify_backlog: u64,
    pub numjobs: u32,
    /// `write_mode=zone_append` (io_uring_cmd): writes are Zone Append commands.
    pub zone_append: bool,
    /// `flow`: the job's weight among the jobs of its `flow_id`; `flow_sleep` their stall.
    pub flow: u32,
    pub flow_id: u32,
    pub flow_sleep_ns: u64,
    /// `exitall`: when this job finishes, the other jobs of its group stop.
    pub exitall: bool,
    pub errors: ErrorPolicy,
    pub dedupe: Dedupe,
    /// `num_range`: ranges per trim (one Dataset Management command of that many ranges).
    pub num_range: u32,
    /// `atomic`: writes must be atomic (RWF_ATOMIC): no larger than the atomic write unit.
    pub atomic: bool,
    /// `fsync`/`fdatasync`: a sync after every that many writes (0: none).
    pub fsync_every: u64,
    /// `max_latency` per direction (ns; 0: none): a slower completion fails the job (ETIMEDOUT).
    pub max_latency_ns: [u64; 3],
    /// `percentage_random` per direction: of a random job's new offsets, this percentage are
    /// random and the rest continue sequentially (100: all random).
    pub percentage_random: [u32; 3],
    /// `rw_sequencer=identical`: with `rw=rand...:N`, the same offset N times.
    pub rw_identical: bool,
    /// `offset_align`: a percentage offset is aligned up to this (0: to the smallest bs).
    pub offset_align: u64,
    /// `thinktime_blocks_type=issue`: count thinktime_blocks as I/Os are issued (fio's
    /// default, complete, counts them as they complete).
    pub thinktime_on_issue: bool,
    /// `bs_is_seq_rand`: the read and write block sizes are the sequential and random ones.
    pub bs_is_seq_rand: bool,
    /// `bs_unaligned`: sizes in a bsrange are any whole number of blocks.
    pub bs_unaligned: bool,
    pub fdatasync_every: u64,
    /// `verify_write_sequence=0`: a block read back may hold another writer's data.
    pub verify_write_sequence: bool,
    /// CCZNS: writes become compressed writes (CW) and reads decompressed reads (DR).
    pub compressed_io: bool,
    /// Chunk size of CW/DR in bytes; 0 = bs (single-chunk commands). bs / chunk chunks per I/O.
    pub compressed_chunk: u64,
    /// Steady-state detection, the latency target and sprandom (options/features.rs).
    pub steady: SteadyState,
    pub latency: LatencyTarget,
    pub sprandom: SpRandom,
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            name: String::new(),
            clone: 0,
            direction: Direction::Read,
            pattern: Pattern::Sequential,
            mix: Mix::Single,
            rwmixread: 50,
            rw_modifier: None,
            bs: 4096,
            bs_min: 4096,
            block_sizes: Default::default(),
            size: None,
            io_size: None,
            number_ios: None,
            offset: Size::Bytes(0),
            offset_increment: 0,
            loops: 1,
            iodepth: 1,
            stonewall: false,
            wait_for: None,
            zonemode: ZoneMode::None,
            zone_size: None,
            zonemode_given: false,
            zone_range: None,
            zone_skip: 0,
            max_open_zones: 0,
            job_max_open_zones: 0,
            ignore_zone_limits: false,
            zone_reset_threshold: 1.0,
            zone_reset_frequency: 0.0,
            buffer_compress_percentage: 0,
            buffer_compress_chunk: 512,
            buffer_compress_spread: 0,
            buffer_pattern: Vec::new(),
            zero_buffers: false,
            runtime_ns: None,
            startdelay_ns: 0,
            ramp_time_ns: 0,
            time_based: false,
            group_reporting: false,
            randseed: None,
            random_distribution: Distribution::Random,
            rate_bytes: 0,
            rate_poisson: false,
            thinktime_ns: 0,
            thinktime_blocks: 1,
            lat_percentiles: false,
            clat_percentiles: true,
            percentile_list: None,
            filename: None,
            // fio's default on Linux (os/os.h FIO_PREFERRED_ENGINE): synchronous, one I/O in flight.
            ioengine: "psync".into(),
            read_beyond_wp: false,
            verify: false,
            verify_method: String::new(),
            do_verify: true,
            verify_backlog: 0,
            compressed_io: false,
            compressed_chunk: 0,
            numjobs: 1,
            zone_append: false,
            flow: 0,
            flow_id: 0,
            flow_sleep_ns: 0,
            exitall: false,
            errors: ErrorPolicy::default(),
            dedupe: Dedupe::default(),
            num_range: 1,
            atomic: false,
            fsync_every: 0,
            max_latency_ns: [0; 3],
            percentage_random: [100; 3],
            rw_identical: false,
            offset_align: 0,
            thinktime_on_issue: false,
            bs_is_seq_rand: false,
            bs_unaligned: false,
            fdatasync_every: 0,
            verify_write_sequence: true,
            steady: SteadyState::default(),
            latency: LatencyTarget::default(),
            sprandom: SpRandom::default(),
        }
    }
}

impl JobSpec {
    /// `bs` and `bs_min` from the directions' block sizes.
    pub fn settle_block_sizes(&mut self) {
        let b = &self.block_sizes;
        self.bs = b.iter().map(BlockSizes::largest).max().unwrap_or(4096);
        self.bs_min = b.iter().map(BlockSizes::smallest).min().unwrap_or(4096);
    }
    /// The block sizes of a direction.
    pub fn sizes_of(&self, dir: Direction) -> &BlockSizes {
        &self.block_sizes[dir as usize]
    }
    /// Every direction has one fixed block size, the same for all.
    pub fn one_block_size(&self) -> bool {
        self.block_sizes
            .iter()
            .all(|b| b.fixed() && b.min == self.bs)
    }
    /// The job reads (alone or mixed).
    pub fn reads(&self) -> bool {
        self.direction == Direction::Read
    }
    /// The job writes (alone or mixed).
    pub fn writes(&self) -> bool {
        self.direction == Direction::Write || self.mix == Mix::ReadWrite
    }
    /// The job trims (alone or in trimwrite).
    pub fn trims(&self) -> bool {
        self.direction == Direction::Trim || self.mix == Mix::TrimWrite
    }
}
