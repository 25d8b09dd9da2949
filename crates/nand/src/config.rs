//! Raw flash configuration (TOML-facing) and the validated [`Geometry`] derived from it.

use serde::{Deserialize, Serialize};
use sim::SimDuration;

/// A configuration field that is missing, malformed or inconsistent with another.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// Path of the offending field, for example `device.nand.channels`.
    pub field: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Flash geometry and timing, as written in a device TOML file under `[nand]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    /// Independent flash channels (buses) from the controller.
    pub channels: u32,
    /// Dies (LUNs, "ways") on each channel.
    pub dies_per_channel: u32,
    /// Planes per die.
    pub planes_per_die: u32,
    /// Erase blocks in each plane.
    pub blocks_per_plane: u32,
    /// Pages in each erase block.
    pub pages_per_block: u32,
    /// Data bytes in one flash page.
    pub page_bytes: u32,
    /// Spare (OOB) bytes per page, where designs keep per-page metadata.
    pub oob_bytes_per_page: u32,
    /// Program (and read and erase) all planes of a die at once.
    #[serde(default)]
    pub multi_plane: bool,
    /// Pages programmed together in one program operation (TLC one-shot programming: 3).
    #[serde(default = "one")]
    pub pages_per_program: u32,
    /// Array read time of one page (tR).
    pub read_latency_ns: u64,
    /// Program time of one program operation (tPROG).
    pub program_latency_ns: u64,
    /// Erase time of one block (tBERS).
    pub erase_latency_ns: u64,
    /// Bytes per second on one channel's bus.
    pub channel_bytes_per_s: u64,
}

fn one() -> u32 {
    1
}

/// The longest one flash operation (array read, program, erase, or moving a program unit over
/// a channel) may take: real ones take microseconds to milliseconds, and bounding them keeps
/// the virtual clock (u64 nanoseconds, 584 years) far from overflowing in any run.
pub const MAX_OPERATION_NS: u64 = 10_000_000_000;

/// Validated geometry with the derived sizes every layer above needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub channels: u32,
    pub dies_per_channel: u32,
    pub dies: u32,
    pub page_bytes: u32,
    pub oob_bytes_per_page: u32,
    /// Bytes written by one program operation on one die (pages × planes if multi-plane).
    pub unit_bytes: u64,
    /// Program units in one erase unit (a block, or one block per plane if multi-plane).
    pub units_per_erase_unit: u64,
    /// Erase units on each die.
    pub erase_units_per_die: u64,
    /// Bytes in one erase unit.
    pub erase_unit_bytes: u64,
    /// Flash pages (across planes) covered by one program unit.
    pub pages_per_unit: u64,
    /// Bytes one array read senses: a page, or one page on every plane of a multi-plane die
    /// (a multi-plane read senses them together and moves them out one after another).
    pub read_bytes: u64,
    pub read_latency: SimDuration,
    pub program_latency: SimDuration,
    pub erase_latency: SimDuration,
    pub channel_bytes_per_s: u64,
}

impl Geometry {
    pub fn die_bytes(&self) -> u64 {
        self.erase_unit_bytes * self.erase_units_per_die
    }
    pub fn total_bytes(&self) -> u64 {
        self.die_bytes() * self.dies as u64
    }
    /// Time one channel takes to move `bytes`.
    pub fn transfer_time(&self, bytes: u64) -> SimDuration {
        SimDuration::for_bytes(bytes, self.channel_bytes_per_s)
    }
}

impl NandConfig {
    /// The same flash with erase blocks shrunk to fraction `s` of their pages (a scaled run's
    /// smaller zones), at least one program unit. The erase time shrinks with the block, so an
    /// erase costs the same per page as in the full-size block: erases stay the small share of
    /// chip time the full geometry gives them (ZNS+ MLC: 3 ms per 128 pages programmed in
    /// 50 ms, 6 %), where an unscaled 3 ms per 8 pages would take half of it.
    pub fn with_blocks_scaled(&self, s: f64) -> NandConfig {
        let pages = ((self.pages_per_block as f64 * s).round() as u32).max(self.pages_per_program);
        let erase =
            self.erase_latency_ns as u128 * pages as u128 / self.pages_per_block.max(1) as u128;
        NandConfig {
            pages_per_block: pages,
            erase_latency_ns: (erase as u64).max(1),
            ..self.clone()
        }
    }

    /// Check every field and the relations between them; `prefix` names the table (`device.nand`).
    pub fn validate(&self, prefix: &str) -> Result<Geometry, ConfigError> {
        let f = |name: &str| format!("{prefix}.{name}");
        let positive = [
            ("channels", self.channels as u64),
            ("dies_per_channel", self.dies_per_channel as u64),
            ("planes_per_die", self.planes_per_die as u64),
            ("blocks_per_plane", self.blocks_per_plane as u64),
            ("pages_per_block", self.pages_per_block as u64),
            ("page_bytes", self.page_bytes as u64),
            ("pages_per_program", self.pages_per_program as u64),
            ("read_latency_ns", self.read_latency_ns),
            ("program_latency_ns", self.program_latency_ns),
            ("channel_bytes_per_s", self.channel_bytes_per_s),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(ConfigError::new(f(name), "must be greater than zero"));
            }
        }
        for (name, v) in [
            ("read_latency_ns", self.read_latency_ns),
            ("program_latency_ns", self.program_latency_ns),
            ("erase_latency_ns", self.erase_latency_ns),
        ] {
            if v > MAX_OPERATION_NS {
                return Err(ConfigError::new(
                    f(name),
                    format!(
                        "{v} is more than {MAX_OPERATION_NS} ns (10 s) for one flash operation"
                    ),
                ));
            }
        }
        if self.oob_bytes_per_page > self.page_bytes {
            return Err(ConfigError::new(
                f("oob_bytes_per_page"),
                format!(
                    "{} is more than the page itself ({} bytes); spare areas are a small \
                     fraction of a page",
                    self.oob_bytes_per_page, self.page_bytes
                ),
            ));
        }
        if !self.page_bytes.is_multiple_of(512) {
            return Err(ConfigError::new(
                f("page_bytes"),
                format!("{} is not a multiple of 512", self.page_bytes),
            ));
        }
        if !self.pages_per_block.is_multiple_of(self.pages_per_program) {
            return Err(ConfigError::new(
                f("pages_per_program"),
                format!(
                    "{} does not divide pages_per_block ({})",
                    self.pages_per_program, self.pages_per_block
                ),
            ));
        }
        let dies = self
            .channels
            .checked_mul(self.dies_per_channel)
            .filter(|d| *d <= 1 << 16)
            .ok_or_else(|| {
                ConfigError::new(f("dies_per_channel"), "more than 65536 dies in total")
            })?;
        let planes_together = if self.multi_plane {
            self.planes_per_die as u64
        } else {
            1
        };
        let too_big = |name: &str, what: &str| {
            ConfigError::new(f(name), format!("{what} does not fit in 64 bits"))
        };
        let unit_bytes = (self.page_bytes as u64)
            .checked_mul(self.pages_per_program as u64)
            .and_then(|b| b.checked_mul(planes_together))
            .ok_or_else(|| too_big("planes_per_die", "the program unit"))?;
        let units_per_erase_unit = (self.pages_per_block / self.pages_per_program) as u64;
        let erase_units_per_die = if self.multi_plane {
            self.blocks_per_plane as u64
        } else {
            self.blocks_per_plane as u64 * self.planes_per_die as u64
        };
        let erase_unit_bytes = unit_bytes
            .checked_mul(units_per_erase_unit)
            .ok_or_else(|| too_big("pages_per_block", "an erase unit's size"))?;
        // die_bytes() and total_bytes() multiply on: refuse here what would overflow there.
        erase_unit_bytes
            .checked_mul(erase_units_per_die)
            .and_then(|b| b.checked_mul(dies as u64))
            .ok_or_else(|| too_big("blocks_per_plane", "the flash's size in bytes"))?;
        let unit_transfer_ns =
            (unit_bytes as u128 * 1_000_000_000).div_ceil(self.channel_bytes_per_s as u128);
        if unit_transfer_ns > MAX_OPERATION_NS as u128 {
            return Err(ConfigError::new(
                f("channel_bytes_per_s"),
                format!(
                    "{} bytes per second takes {unit_transfer_ns} ns to move one {unit_bytes}-byte \
                     program unit, more than {MAX_OPERATION_NS} ns (10 s)",
                    self.channel_bytes_per_s
                ),
            ));
        }
        Ok(Geometry {
            channels: self.channels,
            dies_per_channel: self.dies_per_channel,
            dies,
            page_bytes: self.page_bytes,
            oob_bytes_per_page: self.oob_bytes_per_page,
            unit_bytes,
            units_per_erase_unit,
            erase_units_per_die,
            erase_unit_bytes,
            pages_per_unit: self.pages_per_program as u64 * planes_together,
            read_bytes: self.page_bytes as u64 * planes_together,
            read_latency: SimDuration::from_ns(self.read_latency_ns),
            program_latency: SimDuration::from_ns(self.program_latency_ns),
            erase_latency: SimDuration::from_ns(self.erase_latency_ns),
            channel_bytes_per_s: self.channel_bytes_per_s,
        })
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn scaled_blocks_keep_the_erase_time_per_page() {
        let n = crate::presets::znsplus_mlc();
        let s = n.with_blocks_scaled(0.0625);
        assert_eq!(s.pages_per_block, n.pages_per_block / 16);
        assert_eq!(
            s.erase_latency_ns * n.pages_per_block as u64,
            n.erase_latency_ns * s.pages_per_block as u64
        );
        assert_eq!(n.with_blocks_scaled(1.0), n);
        // Never below one program unit, never a zero erase.
        let t = crate::presets::znsplus_tlc();
        let tiny = super::NandConfig {
            pages_per_program: 3,
            pages_per_block: 6,
            ..t
        };
        let u = tiny.with_blocks_scaled(0.01);
        assert_eq!(u.pages_per_block, 3);
        assert!(u.erase_latency_ns > 0);
        assert!(u.validate("n").is_ok());
    }
    use crate::presets;

    #[test]
    fn presets_validate_and_cczns_has_its_paper_size() {
        for (name, cfg) in presets::all() {
            cfg.validate("nand")
                .unwrap_or_else(|e| panic!("preset {name}: {e}"));
        }
        let g = presets::cczns_hpca25().validate("nand").expect("valid");
        assert_eq!(g.dies, 64);
        assert_eq!(g.total_bytes(), 128 << 30);
        assert_eq!(g.erase_unit_bytes, 32 << 20);
    }

    #[test]
    fn multi_plane_programs_all_planes_at_once() {
        let mut c = presets::test_min();
        c.planes_per_die = 2;
        let single = c.validate("nand").expect("valid");
        assert_eq!((single.unit_bytes, single.erase_units_per_die), (4096, 32));
        c.multi_plane = true;
        let multi = c.validate("nand").expect("valid");
        assert_eq!(
            (
                multi.unit_bytes,
                multi.erase_units_per_die,
                multi.pages_per_unit
            ),
            (8192, 16, 2)
        );
        assert_eq!(multi.die_bytes(), single.die_bytes());
        c.pages_per_program = 3;
        assert_eq!(
            c.validate("nand").expect_err("16 % 3").field,
            "nand.pages_per_program"
        );
    }

    #[test]
    fn overflowing_sizes_and_endless_operations_are_refused() {
        let mut c = presets::test_min();
        c.page_bytes = 1 << 31;
        c.oob_bytes_per_page = 0;
        c.pages_per_block = 4;
        c.planes_per_die = 1 << 31;
        c.multi_plane = true;
        assert_eq!(
            c.validate("nand").expect_err("2^62 × 4").field,
            "nand.pages_per_block"
        );
        let mut c = presets::test_min();
        c.oob_bytes_per_page = c.page_bytes + 1;
        assert_eq!(
            c.validate("nand").expect_err("spare above page").field,
            "nand.oob_bytes_per_page"
        );
        let mut c = presets::test_min();
        c.erase_latency_ns = super::MAX_OPERATION_NS + 1;
        assert_eq!(
            c.validate("nand").expect_err("erase").field,
            "nand.erase_latency_ns"
        );
        c.erase_latency_ns = super::MAX_OPERATION_NS;
        c.validate("nand").expect("10 s is allowed");
    }

    #[test]
    fn zero_dies_is_refused_with_the_field_name() {
        let mut c = presets::test_min();
        c.dies_per_channel = 0;
        let e = c.validate("device.nand").expect_err("zero dies");
        assert_eq!(e.field, "device.nand.dies_per_channel");
    }
}
