//! Bytes the background jobs moved, per second of virtual time (ZenFS+ Fig. 2 and 9 plot
//! flush and compaction bandwidth per second beside the put rate).

/// One bucket per second since the store opened. A job's bytes are spread evenly over the
/// seconds it ran, as a bandwidth meter sampling once a second would see them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobSeries {
    /// When the store opened (virtual ns): second 0 starts here.
    pub origin_ns: u64,
    pub flush_written: Vec<u64>,
    pub compaction_read: Vec<u64>,
    pub compaction_written: Vec<u64>,
}

/// Bucket width.
pub const SERIES_BUCKET_NS: u64 = 1_000_000_000;

impl JobSeries {
    pub fn new(origin_ns: u64) -> JobSeries {
        JobSeries {
            origin_ns,
            ..JobSeries::default()
        }
    }

    /// A flush that wrote `bytes` between `from_ns` and `to_ns`.
    pub fn flush(&mut self, from_ns: u64, to_ns: u64, bytes: u64) {
        spread(
            &mut self.flush_written,
            self.origin_ns,
            from_ns,
            to_ns,
            bytes,
        );
    }

    /// A compaction that read and wrote these bytes between `from_ns` and `to_ns`.
    pub fn compaction(&mut self, from_ns: u64, to_ns: u64, read: u64, written: u64) {
        spread(
            &mut self.compaction_read,
            self.origin_ns,
            from_ns,
            to_ns,
            read,
        );
        spread(
            &mut self.compaction_written,
            self.origin_ns,
            from_ns,
            to_ns,
            written,
        );
    }
}

/// Add `bytes` to the buckets of [from, to), each in proportion to its overlap; an empty span
/// puts them all in its one bucket. Shares are whole bytes and add up to `bytes`.
fn spread(series: &mut Vec<u64>, origin: u64, from: u64, to: u64, bytes: u64) {
    let from = from.saturating_sub(origin);
    let to = to.saturating_sub(origin).max(from);
    let last = if to > from {
        (to - 1) / SERIES_BUCKET_NS
    } else {
        from / SERIES_BUCKET_NS
    } as usize;
    if series.len() <= last {
        series.resize(last + 1, 0);
    }
    if to == from {
        series[last] += bytes;
        return;
    }
    let span = (to - from) as u128;
    let mut given = 0u64;
    let first = (from / SERIES_BUCKET_NS) as usize;
    for (b, slot) in series.iter_mut().enumerate().take(last + 1).skip(first) {
        let hi = ((b as u64 + 1) * SERIES_BUCKET_NS).min(to);
        // Cumulative share up to `hi`, so rounding never loses or adds a byte.
        let upto = (bytes as u128 * (hi - from) as u128 / span) as u64;
        *slot += upto - given;
        given = upto;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = SERIES_BUCKET_NS;

    #[test]
    fn a_job_over_two_and_a_half_seconds_spreads_by_overlap() {
        let mut s = JobSeries::new(10 * S);
        s.flush(10 * S + S / 2, 13 * S, 500);
        assert_eq!(s.flush_written, vec![100, 200, 200]);
        s.compaction(12 * S, 12 * S, 7, 9);
        assert_eq!(s.compaction_read, vec![0, 0, 7]);
        assert_eq!(s.compaction_written, vec![0, 0, 9]);
    }

    #[test]
    fn shares_add_up_to_the_bytes() {
        let mut v = Vec::new();
        spread(&mut v, 0, 333, 7 * S + 11, 1_000_003);
        assert_eq!(v.iter().sum::<u64>(), 1_000_003);
        assert_eq!(v.len(), 8);
    }

    #[test]
    fn before_the_origin_counts_in_second_zero() {
        let mut v = Vec::new();
        spread(&mut v, 5 * S, S, 2 * S, 10);
        assert_eq!(v, vec![10]);
    }
}
