//! The in-device compression engine: real codec for the bytes, engine profile for the time.
//!
//! Each direction is a pipeline (codec::profile): a request holds the entrance for its service
//! time (1 / throughput) and completes its latency after entering. Compression and
//! decompression have separate pipelines, as hardware engines have separate encoders and
//! decoders (an assumption; the papers do not say).

use codec::{Codec, Coder, Direction, EngineProfile};
use nand::Timeline;

pub(crate) struct Engine {
    pub codec: Codec,
    pub profile: EngineProfile,
    pub coder: Coder,
    pipes: [Timeline; 2],
    /// Busy (service) time and requests per direction.
    pub busy_ns: [u64; 2],
    pub requests: [u64; 2],
}

/// What the engine has done, by direction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineCounters {
    pub compress_requests: u64,
    pub decompress_requests: u64,
    /// Time the entrance of each pipeline was occupied: over the run time, its utilisation.
    pub compress_busy_ns: u64,
    pub decompress_busy_ns: u64,
}

fn index(dir: Direction) -> usize {
    match dir {
        Direction::Compress => 0,
        Direction::Decompress => 1,
    }
}

impl Engine {
    pub fn new(codec: Codec, profile: EngineProfile) -> Engine {
        Engine {
            codec,
            profile,
            coder: Coder::new(),
            pipes: [Timeline::new(), Timeline::new()],
            busy_ns: [0; 2],
            requests: [0; 2],
        }
    }

    /// Compress each `unit`-byte piece of `data` into `staging`, back to back; a piece that
    /// does not shrink is stored raw. `sizes` gets each piece's compressed size, 0 for raw.
    /// (Transparent designs, Balloon and TCSSD, compress every page this way.)
    pub fn compress_units(
        &mut self,
        data: &[u8],
        unit: usize,
        staging: &mut Vec<u8>,
        sizes: &mut Vec<u32>,
    ) {
        staging.clear();
        sizes.clear();
        for piece in data.chunks_exact(unit) {
            let at = staging.len();
            let n = self.coder.compress(self.codec, piece, staging);
            if n >= unit {
                staging.truncate(at);
                staging.extend_from_slice(piece);
                sizes.push(0);
            } else {
                sizes.push(n as u32);
            }
        }
    }

    /// One request of `bytes` (uncompressed) arriving at `t`; returns when its result is ready.
    pub fn run(&mut self, dir: Direction, t: u64, bytes: u64) -> u64 {
        // No codec: nothing runs (a conventional SSD built on a compressing design).
        if self.codec == codec::Codec::None {
            return t;
        }
        let cost = self.profile.cost(dir);
        let service = cost.service_ns(bytes);
        let i = index(dir);
        let start = self.pipes[i].take(t, service);
        self.busy_ns[i] += service;
        self.requests[i] += 1;
        start + cost.latency_ns(bytes).max(service)
    }

    pub fn prune(&mut self, t: u64) {
        for p in &mut self.pipes {
            p.prune(t);
        }
    }

    pub fn counters(&self) -> EngineCounters {
        EngineCounters {
            compress_requests: self.requests[0],
            decompress_requests: self.requests[1],
            compress_busy_ns: self.busy_ns[0],
            decompress_busy_ns: self.busy_ns[1],
        }
    }
}
