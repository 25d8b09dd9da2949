//! Engine profiles: what a (de)compression costs where it runs, apart from the codec that makes
//! the bytes. Figures come from the papers' measurements, never from the machine running the
//! simulation, so results do not depend on it.
//!
//! A profile gives, for each direction, the latency of one request at 4 KiB and at 64 KiB and the
//! throughput the engine sustains at those sizes (all in uncompressed bytes, as lzbench and the
//! DPZip paper count). Between and beyond the two sizes both are linear in the request size.
//!
//! - On the **host CPU** a request occupies one core for its latency (the 4/64 KiB latencies
//!   are per thread; the DPZip paper's throughputs are over 88 threads and are only shown).
//! - A **hardware engine** is a pipeline: requests enter one after another, each holding the
//!   entrance for `size / throughput(size)` (its service time), and each completes `latency`
//!   after it entered. At low load a request sees the measured latency; at saturation the
//!   engine delivers the measured throughput.

use serde::{Deserialize, Serialize};

/// Where an engine sits, which decides what a request pays besides the engine itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Software on the host's cores.
    HostCpu,
    /// In the SSD controller, on the I/O path (DPZip, CCZNS, CSD 2000).
    InStorage,
    /// A PCIe card: data crosses PCIe to the card and back (QAT 8970).
    Peripheral,
    /// On the CPU die (QAT 4xxx): no PCIe crossing, still a descriptor round trip.
    OnChip,
}

/// Cost of one direction.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpCost {
    pub latency_4k_ns: u64,
    pub latency_64k_ns: u64,
    /// Sustained throughput in uncompressed bytes per second with 4 KiB and 64 KiB requests.
    pub bytes_per_s_4k: f64,
    pub bytes_per_s_64k: f64,
}

const K4: f64 = 4096.0;
const K64: f64 = 65536.0;

/// The line through (4 KiB, at_4k) and (64 KiB, at_64k), evaluated at `bytes`, never below
/// `floor`.
fn line(bytes: u64, at_4k: f64, at_64k: f64, floor: f64) -> f64 {
    let slope = (at_64k - at_4k) / (K64 - K4);
    (at_4k + slope * (bytes as f64 - K4)).max(floor)
}

impl OpCost {
    /// Time from entering the engine to the result for a request of `bytes`.
    pub fn latency_ns(&self, bytes: u64) -> u64 {
        let l4 = self.latency_4k_ns as f64;
        let l64 = self.latency_64k_ns as f64;
        // A tiny request still pays at least a tenth of the 4 KiB latency (setup does not vanish).
        line(bytes, l4, l64, l4 / 10.0).round() as u64
    }

    /// How long a request of `bytes` holds the engine's entrance (1 / throughput).
    pub fn service_ns(&self, bytes: u64) -> u64 {
        let s4 = K4 / self.bytes_per_s_4k * 1e9;
        let s64 = K64 / self.bytes_per_s_64k * 1e9;
        line(bytes, s4, s64, 1.0).round() as u64
    }
}

/// One engine: where it runs, its costs, its limits and where the figures come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineProfile {
    pub name: String,
    pub placement: Placement,
    /// The codec the engine implements in hardware (or the software codec of a CPU profile).
    pub codec: String,
    pub compress: OpCost,
    pub decompress: OpCost,
    /// Requests the engine accepts at once (0 = no limit); more wait on the host.
    #[serde(default)]
    pub queue_depth: u32,
    /// Data movement between host memory and the engine per request, already inside the
    /// latencies above; shown so reports can split it out.
    #[serde(default)]
    pub round_trip_ns: u64,
    /// Paper, figure or table the figures come from, and what was assumed.
    pub source: String,
}

/// Which way a request goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Compress,
    Decompress,
}

impl EngineProfile {
    pub fn cost(&self, dir: Direction) -> &OpCost {
        match dir {
            Direction::Compress => &self.compress,
            Direction::Decompress => &self.decompress,
        }
    }
}

fn op(l4_us: f64, l64_us: f64, gbps_4k: f64, gbps_64k: f64) -> OpCost {
    OpCost {
        latency_4k_ns: (l4_us * 1000.0).round() as u64,
        latency_64k_ns: (l64_us * 1000.0).round() as u64,
        bytes_per_s_4k: gbps_4k * 1e9,
        bytes_per_s_64k: gbps_64k * 1e9,
    }
}

const DPZIP_FIG8_9: &str = "DPZip paper Fig. 8 (4 KiB) and Fig. 9 (64 KiB), values from \
     github.com/Emilio597/ASIC-CDPUs draw_figure8.py / draw_figure9.py \
     (shared/data/asic_cdpus_microbench.csv)";

/// Every built-in profile.
pub fn all() -> Vec<EngineProfile> {
    vec![
        EngineProfile {
            name: "cczns-asic".into(),
            placement: Placement::InStorage,
            codec: "zstd-1".into(),
            // CCZNS artifact nvme-io.c:366-368/529-531: 4 us per CW up to 64 KiB, 3 us per DR up
            // to 64 KiB (flat, so the 4 and 64 KiB latencies are equal); throughput from the
            // paper's §V-A: engines of up to 11 GB/s compress and 14 GB/s decompress.
            compress: op(4.0, 4.0, 11.0, 11.0),
            decompress: op(3.0, 3.0, 14.0, 14.0),
            queue_depth: 0,
            round_trip_ns: 0,
            source: "CCZNS (HPCA'25) §V-A (11/14 GB/s) and its artifact's latencies \
                     (research/seed-artifacts.md §1.5). The artifact charges DR per compressed \
                     bytes; znslab per uncompressed bytes like every other profile."
                .into(),
        },
        EngineProfile {
            name: "dpzip".into(),
            placement: Placement::InStorage,
            codec: "deflate-1".into(),
            compress: op(4.67, 11.50, 5.6, 12.11),
            decompress: op(2.15, 3.35, 9.38, 13.75),
            queue_depth: 0,
            round_trip_ns: 0,
            source: DPZIP_FIG8_9.into(),
        },
        EngineProfile {
            name: "qat-8970".into(),
            placement: Placement::Peripheral,
            codec: "deflate-1".into(),
            compress: op(27.0, 172.0, 4.86, 8.47),
            decompress: op(14.0, 63.0, 7.20, 12.92),
            // No published ring size: 32 = requests in flight at saturation with 4 KiB
            // (4.86 GB/s × 27 us / 4 KiB). Round trip: QAT 8970 16 KiB end-to-end write of
            // 14.7 us less its compute (DPZip Fig. 11), an assumption for the split only.
            queue_depth: 32,
            round_trip_ns: 9_500,
            source: format!(
                "{DPZIP_FIG8_9}; Balloon-ZNS §4.1 quotes ~25/15 us per 4 KiB page for the same card"
            ),
        },
        EngineProfile {
            name: "qat-4xxx".into(),
            placement: Placement::OnChip,
            codec: "deflate-1".into(),
            compress: op(9.0, 34.0, 2.06, 4.55),
            decompress: op(6.0, 21.0, 3.45, 9.31),
            // 2.06 GB/s × 9 us / 4 KiB ≈ 5 requests in flight at saturation (no published limit).
            queue_depth: 5,
            round_trip_ns: 400,
            source: format!(
                "{DPZIP_FIG8_9}; the paper's text quotes 4.3/7 GB/s at 4 KiB, the script \
                 2.06/3.45 (the script's values are used); round trip = LLC-hit descriptor \
                 read 0.35-0.46 us (Fig. 11)"
            ),
        },
        EngineProfile {
            name: "csd-2000".into(),
            placement: Placement::InStorage,
            codec: "deflate-1".into(),
            // DPZip Table 1: one FPGA, gzip 20/24 Gbps (C/D). No latency is published: assumed
            // size / bandwidth, i.e. no pipelining beyond the bandwidth.
            compress: op(4096.0 / 2500.0, 65536.0 / 2500.0, 2.5, 2.5),
            decompress: op(4096.0 / 3000.0, 65536.0 / 3000.0, 3.0, 3.0),
            queue_depth: 0,
            round_trip_ns: 0,
            source: "DPZip paper Table 1 (ScaleFlux CSD 2000: 1 FPGA, 20/24 Gbps); latency \
                     assumed = size / bandwidth"
                .into(),
        },
        EngineProfile {
            name: "cpu-zstd-1".into(),
            placement: Placement::HostCpu,
            codec: "zstd-1".into(),
            compress: op(20.37, 213.0, 15.55, 20.35),
            decompress: op(7.44, 66.0, 19.13, 22.26),
            queue_depth: 0,
            round_trip_ns: 0,
            source: format!(
                "{DPZIP_FIG8_9}: per-thread latency on a Xeon 8458P, throughput over 88 threads"
            ),
        },
        EngineProfile {
            name: "cpu-snappy".into(),
            placement: Placement::HostCpu,
            codec: "snappy".into(),
            compress: op(8.87, 172.17, 22.83, 23.15),
            decompress: op(3.75, 67.16, 20.33, 23.06),
            queue_depth: 0,
            round_trip_ns: 0,
            source: format!(
                "{DPZIP_FIG8_9}: per-thread latency on a Xeon 8458P, throughput over 88 threads"
            ),
        },
        EngineProfile {
            name: "cpu-deflate-1".into(),
            placement: Placement::HostCpu,
            codec: "deflate-1".into(),
            compress: op(69.58, 832.28, 4.90, 6.41),
            decompress: op(23.69, 272.91, 13.57, 16.66),
            queue_depth: 0,
            round_trip_ns: 0,
            source: format!(
                "{DPZIP_FIG8_9}: per-thread latency on a Xeon 8458P, throughput over 88 threads"
            ),
        },
        EngineProfile {
            name: "cpu-lz4".into(),
            placement: Placement::HostCpu,
            codec: "lz4".into(),
            // No paper measures LZ4: lz4_flex on text, 4 KiB 569 / 2390 MB/s and 64 KiB
            // 781 / 3359 MB/s per thread, measured once on the project's build machine.
            compress: op(7.2, 84.0, 0.569, 0.781),
            decompress: op(1.7, 19.5, 2.39, 3.36),
            queue_depth: 0,
            round_trip_ns: 0,
            source: "research/ecosystem.md §1.3 and §1.5 (one thread; no paper gives LZ4)".into(),
        },
    ]
}

/// The built-in profile called `name`.
pub fn by_name(name: &str) -> Option<EngineProfile> {
    all().into_iter().find(|p| p.name == name)
}

/// The names of the built-in profiles, for error messages.
pub fn names() -> Vec<String> {
    all().into_iter().map(|p| p.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_points_are_reproduced() {
        let p = by_name("dpzip").unwrap();
        assert_eq!(p.compress.latency_ns(4096), 4670);
        assert_eq!(p.compress.latency_ns(65536), 11500);
        // 4 KiB at 5.6 GB/s: 731 ns per request at the entrance.
        assert_eq!(p.compress.service_ns(4096), 731);
        assert_eq!(p.compress.service_ns(65536), 5412);
        // Between the points: linear.
        let mid = p.compress.latency_ns(34816);
        assert!(mid > 4670 && mid < 11500);
        // Tiny requests still cost something.
        assert!(p.compress.latency_ns(1) >= 467);
    }

    #[test]
    fn every_profile_is_sane() {
        let all = all();
        for p in &all {
            for c in [&p.compress, &p.decompress] {
                assert!(
                    c.latency_4k_ns > 0 && c.latency_64k_ns >= c.latency_4k_ns,
                    "{}",
                    p.name
                );
                assert!(
                    c.bytes_per_s_4k > 0.0 && c.bytes_per_s_64k > 0.0,
                    "{}",
                    p.name
                );
            }
            assert!(p.codec.parse::<crate::Codec>().is_ok(), "{}", p.name);
            assert!(!p.source.is_empty());
        }
        let mut names = names();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len(), "profile names are unique");
    }
}
