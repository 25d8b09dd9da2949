//! The CCZNS design's configuration checks.

use nand::{ConfigError, Geometry};

use crate::config::{err, DeviceConfig};

/// Check the CCZNS design's constraints on the configuration.
pub(crate) fn check(cfg: &DeviceConfig, g: &Geometry) -> Result<(), ConfigError> {
    cczns_check(g)?;
    if cfg.lba.metadata_bytes < 16 {
        return Err(err(
            "lba.metadata_bytes",
            format!(
                "{} is too small for the cczns design, whose commands carry chunk sizes in \
                 the metadata buffer (use 64, as CCZNS does)",
                cfg.lba.metadata_bytes
            ),
        ));
    }
    Ok(())
}

/// Check the CCZNS design's constraints: each flash page's OOB holds its page header and at
/// least one chunk record (a chunk takes at least a page per record the OOB holds), and no
/// more records than the header's 16-bit count can number.
fn cczns_check(g: &Geometry) -> Result<(), ConfigError> {
    use super::chunks::{OOB_HEADER_BYTES, OOB_RECORD_BYTES};
    let oob = g.oob_bytes_per_page as u64;
    let (h, r) = (OOB_HEADER_BYTES as u64, OOB_RECORD_BYTES as u64);
    if oob < h + r {
        return Err(err(
            "nand.oob_bytes_per_page",
            format!(
                "{oob} is too small for the cczns design: it needs at least {} bytes (a page \
                 header of {h} and one chunk record of {r})",
                h + r
            ),
        ));
    }
    let most = h + r * u16::MAX as u64;
    if super::chunks::records_per_page(g.oob_bytes_per_page) > u16::MAX as usize {
        return Err(err(
            "nand.oob_bytes_per_page",
            format!(
                "{oob} is too large for the cczns design: a page header counts at most {} chunk \
                 records (at most {most} bytes)",
                u16::MAX
            ),
        ));
    }
    Ok(())
}
