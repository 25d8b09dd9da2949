//! What db_bench prints, in its formats: the report line of each benchmark
//! (`Stats::Report`), RocksDB's histograms (`HistogramStat`, monitoring/histogram.cc: the
//! buckets, percentiles and `ToString` of `--histogram`'s "Microseconds per write:" blocks)
//! and the `--statistics` block (`StatisticsImpl::ToString`, monitoring/statistics.cc).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::flags::{HISTOGRAMS, TICKERS};

/// RocksDB's histogram bucket limits (`HistogramBucketMapper`): 1, 2, then ×1.5 kept to two
/// significant digits.
fn buckets() -> &'static [u64] {
    static B: OnceLock<Vec<u64>> = OnceLock::new();
    B.get_or_init(|| {
        let mut v: Vec<u64> = vec![1, 2];
        let mut val = 2.0f64;
        loop {
            val *= 1.5;
            if val > u64::MAX as f64 {
                break;
            }
            let mut b = val as u64;
            let mut pow = 1u64;
            while b / 10 > 10 {
                b /= 10;
                pow *= 10;
            }
            v.push(b * pow);
        }
        v
    })
}

/// RocksDB's `HistogramStat` over microseconds.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    min: u64,
    max: u64,
    num: u64,
    sum: u64,
    sum_squares: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; buckets().len()],
            min: *buckets().last().expect("buckets"),
            max: 0,
            num: 0,
            sum: 0,
            sum_squares: 0.0,
        }
    }
}

impl Histogram {
    pub fn add(&mut self, value: u64) {
        let b = buckets();
        let i = if value >= *b.last().expect("buckets") {
            b.len() - 1
        } else {
            b.partition_point(|&x| x < value)
        };
        self.counts[i] += 1;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.num += 1;
        self.sum = self.sum.saturating_add(value);
        self.sum_squares += value as f64 * value as f64;
    }

    pub fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.num += o.num;
        self.sum = self.sum.saturating_add(o.sum);
        self.sum_squares += o.sum_squares;
    }

    pub fn count(&self) -> u64 {
        self.num
    }

    pub fn sum(&self) -> u64 {
        self.sum
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn average(&self) -> f64 {
        if self.num == 0 {
            0.0
        } else {
            self.sum as f64 / self.num as f64
        }
    }

    pub fn stddev(&self) -> f64 {
        let n = self.num as f64;
        if n == 0.0 {
            return 0.0;
        }
        let s = self.sum as f64;
        ((self.sum_squares * n - s * s) / (n * n)).max(0.0).sqrt()
    }

    pub fn percentile(&self, p: f64) -> f64 {
        let b = buckets();
        let threshold = self.num as f64 * (p / 100.0);
        let mut cum = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            cum += c;
            if cum as f64 >= threshold {
                let left = if i == 0 { 0 } else { b[i - 1] };
                let right = b[i];
                let left_sum = cum - c;
                let pos = if c != 0 {
                    (threshold - left_sum as f64) / c as f64
                } else {
                    0.0
                };
                let r = left as f64 + (right - left) as f64 * pos;
                return r.clamp(self.min.min(self.max) as f64, self.max as f64);
            }
        }
        self.max as f64
    }

    /// `HistogramStat::ToString`.
    pub fn to_rocksdb_string(&self) -> String {
        let b = buckets();
        let mut r = format!(
            "Count: {} Average: {:.4}  StdDev: {:.2}\n",
            self.num,
            self.average(),
            self.stddev()
        );
        let (min, max) = if self.num == 0 {
            (0, 0)
        } else {
            (self.min, self.max)
        };
        r += &format!(
            "Min: {}  Median: {:.4}  Max: {}\n",
            min,
            self.percentile(50.0),
            max
        );
        r += &format!(
            "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}\n",
            self.percentile(50.0),
            self.percentile(75.0),
            self.percentile(99.0),
            self.percentile(99.9),
            self.percentile(99.99)
        );
        r += "------------------------------------------------------\n";
        if self.num == 0 {
            return r;
        }
        let mult = 100.0 / self.num as f64;
        let mut cum = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            cum += c;
            r += &format!(
                "{} {:>7}, {:>7} ] {:>8} {:>7.3}% {:>7.3}% ",
                if i == 0 { '[' } else { '(' },
                if i == 0 { 0 } else { b[i - 1] },
                b[i],
                c,
                mult * c as f64,
                mult * cum as f64
            );
            let marks = (mult * c as f64 / 5.0 + 0.5) as usize;
            r.extend(std::iter::repeat_n('#', marks));
            r.push('\n');
        }
        r
    }
}

/// db_bench's operation types (`OperationTypeString`), in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpType {
    Read,
    Write,
    Delete,
    Seek,
    Merge,
    Update,
}

impl OpType {
    pub fn name(self) -> &'static str {
        match self {
            OpType::Read => "read",
            OpType::Write => "write",
            OpType::Delete => "delete",
            OpType::Seek => "seek",
            OpType::Merge => "merge",
            OpType::Update => "update",
        }
    }
}

/// db_bench's `Stats::Report` line: `name : X micros/op Y ops/sec Z seconds N operations;`
/// then ` W MB/s` when bytes were counted, then the benchmark's message.
/// `thread_seconds` is the sum of the threads' own times (db_bench's `seconds_`), `elapsed`
/// the benchmark's.
pub fn report_line(
    name: &str,
    ops: u64,
    thread_seconds: f64,
    elapsed: f64,
    bytes: u64,
    message: &str,
) -> String {
    let done = ops.max(1);
    let elapsed_div = if elapsed > 0.0 { elapsed } else { 1e-12 };
    let mut extra = String::new();
    if bytes > 0 {
        extra = format!("{:6.1} MB/s", bytes as f64 / 1048576.0 / elapsed_div);
    }
    if !message.is_empty() {
        if !extra.is_empty() {
            extra.push(' ');
        }
        extra.push_str(message);
    }
    format!(
        "{:<12} : {:11.3} micros/op {} ops/sec {:.3} seconds {} operations;{}{}",
        name,
        thread_seconds * 1e6 / done as f64,
        (done as f64 / elapsed_div) as i64,
        elapsed,
        done,
        if extra.is_empty() { "" } else { " " },
        extra
    )
}

/// The `--statistics` block's body (`StatisticsImpl::ToString`): every ticker of RocksDB, in
/// its order, with the count the run has for it (0 where the store keeps no counterpart),
/// then every histogram.
pub fn statistics(tickers: &BTreeMap<&str, u64>, hists: &BTreeMap<&str, Histogram>) -> String {
    let mut s = String::new();
    for &t in TICKERS {
        s += &format!("{t} COUNT : {}\n", tickers.get(t).copied().unwrap_or(0));
    }
    let empty = Histogram::default();
    for &h in HISTOGRAMS {
        let d = hists.get(h).unwrap_or(&empty);
        s += &format!(
            "{h} P50 : {:.6} P95 : {:.6} P99 : {:.6} P100 : {:.6} COUNT : {} SUM : {}\n",
            d.percentile(50.0),
            d.percentile(95.0),
            d.percentile(99.0),
            d.max() as f64,
            d.count(),
            d.sum()
        );
    }
    s
}

/// `levelstats`: the `rocksdb.levelstats` property (db/internal_stats.cc), as db_bench
/// prints it (`"\n%s\n"`).
pub fn levelstats(db: &host::lsm::db::DbStats) -> String {
    let mut s = String::from("\nLevel Files Size(MB)\n--------------------\n");
    for (level, (files, bytes)) in db.level_files.iter().zip(&db.level_bytes).enumerate() {
        s += &format!(
            "{:3} {:8} {:8.0}\n",
            level,
            files,
            *bytes as f64 / 1048576.0
        );
    }
    s
}

/// `stats`: the store's side of RocksDB's `rocksdb.stats` property: files and size per level,
/// then the cumulative flush, compaction, WAL and stall figures (RocksDB's sections' names;
/// not its every column).
pub fn stats_text(db: &host::lsm::db::DbStats) -> String {
    let gb = |b: u64| b as f64 / (1u64 << 30) as f64;
    let mut s = String::from("\n\n** Compaction Stats [default] **\nLevel    Files   Size(MB)\n");
    for (level, (files, bytes)) in db.level_files.iter().zip(&db.level_bytes).enumerate() {
        s += &format!("  L{level} {files:8} {:10.2}\n", *bytes as f64 / 1048576.0);
    }
    s += &format!(
        " Sum {:8} {:10.2}\n",
        db.level_files.iter().sum::<usize>(),
        db.level_bytes.iter().sum::<u64>() as f64 / 1048576.0
    );
    s += &format!(
        "Flush(GB): cumulative {:.3}, flushes {}\n",
        gb(db.flushed_bytes),
        db.flushes
    );
    s += &format!(
        "Cumulative compaction: {:.2} GB write, {:.2} GB read, {} compactions, {} trivial moves\n",
        gb(db.compaction_written_bytes),
        gb(db.compaction_read_bytes),
        db.compactions,
        db.trivial_moves
    );
    s += &format!(
        "Stalls(micros): memtable {}, level0 stop {}, slowdown {}\n",
        db.stall_memtable_ns / 1000,
        db.stall_l0_ns / 1000,
        db.slowdown_ns / 1000
    );
    s += &format!(
        "\n** DB Stats **\nCumulative writes: {} writes, {} keys, WAL {:.2} GB\n",
        db.writes,
        db.last_sequence,
        gb(db.wal_bytes)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_rocksdbs() {
        // HistogramBucketMapper's first limits.
        assert_eq!(
            &buckets()[..16],
            &[1, 2, 3, 4, 6, 10, 15, 22, 34, 51, 76, 110, 170, 250, 380, 580]
        );
        // HistogramStat keeps buckets_[109] (monitoring/histogram.h).
        assert_eq!(buckets().len(), 109);
    }

    #[test]
    fn histogram_prints_as_rocksdb() {
        let mut h = Histogram::default();
        for v in [1, 2, 2, 10] {
            h.add(v);
        }
        let s = h.to_rocksdb_string();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "Count: 4 Average: 3.7500  StdDev: 3.63");
        assert_eq!(lines[1], "Min: 1  Median: 1.5000  Max: 10");
        assert!(lines[2].starts_with("Percentiles: P50: 1.50 P75: "), "{s}");
        assert_eq!(
            lines[3],
            "------------------------------------------------------"
        );
        assert_eq!(
            lines[4],
            "[       0,       1 ]        1  25.000%  25.000% #####"
        );
        assert_eq!(
            lines[5],
            "(       1,       2 ]        2  50.000%  75.000% ##########"
        );
        assert_eq!(
            lines[6],
            "(       6,      10 ]        1  25.000% 100.000% #####"
        );
    }

    #[test]
    fn report_line_is_db_bench_format() {
        assert_eq!(
            report_line("fillrandom", 1000, 0.5, 0.5, 1048576, ""),
            "fillrandom   :     500.000 micros/op 2000 ops/sec 0.500 seconds 1000 operations;    2.0 MB/s"
        );
        assert_eq!(
            report_line("readrandom", 10, 0.25, 0.25, 0, "(5 of 10 found)"),
            "readrandom   :   25000.000 micros/op 40 ops/sec 0.250 seconds 10 operations; (5 of 10 found)"
        );
    }

    #[test]
    fn statistics_lists_every_ticker_and_histogram() {
        let mut t = BTreeMap::new();
        t.insert("rocksdb.block.cache.hit", 7);
        let s = statistics(&t, &BTreeMap::new());
        assert!(
            s.starts_with(
                "rocksdb.block.cache.miss COUNT : 0\nrocksdb.block.cache.hit COUNT : 7\n"
            ),
            "{s}"
        );
        assert!(s.contains("\nrocksdb.db.get.micros P50 : 0.000000 P95 : 0.000000 P99 : 0.000000 P100 : 0.000000 COUNT : 0 SUM : 0\n"));
        assert_eq!(s.lines().count(), TICKERS.len() + HISTOGRAMS.len());
    }
}
