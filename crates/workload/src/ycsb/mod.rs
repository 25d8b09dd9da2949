//! YCSB's core workload (research/zenfs-rocksdb.md §3.2) on the store: YCSB's property names,
//! its key naming (`user` + FNV-64 of the key number with hashed insert order), its values
//! (printable random bytes, 10 fields of 100), its distributions (scrambled zipfian with
//! θ = 0.99 over 10^10 items, uniform, latest), the RocksDB binding's record layout and
//! read-merge-write updates, and YCSB's `[OVERALL]` / `[READ]` report lines.//!
//! Its parts: [`properties`] reads YCSB's property files and checks them; [`generator`] makes
//! the keys and chooses them (YCSB's hashing and zipfian generators); [`client`] runs a load or
//! run phase with YCSB's client threads and makes its report.

mod client;
mod generator;
mod properties;

pub use client::{load, run, OpStats, YcsbReport};
pub use generator::{fnvhash64, key_name};
pub use properties::{
    Distribution, YcsbConfig, YcsbError, JAVA_INT_MAX, MAX_RECORD_BUFFER_BYTES, MAX_THREADS,
};

#[cfg(test)]
mod tests {
    use super::client::{merge, record};
    use super::generator::Zipfian;
    use super::*;
    use sim::Rng;

    #[test]
    fn keys_hash_like_ycsb_and_zipfian_is_skewed() {
        assert_eq!(key_name(0, false), b"user0");
        assert_ne!(key_name(1, true), key_name(2, true));
        let z = Zipfian::new(1000);
        let mut rng = Rng::new(1);
        let mut hist = vec![0u32; 1000];
        for _ in 0..100_000 {
            hist[z.next(&mut rng).min(999) as usize] += 1;
        }
        // Item 0 is the most popular, far above the uniform 100.
        assert!(
            hist[0] > 5_000 && hist[0] > hist[10] && hist[10] > hist[500],
            "{:?}",
            &hist[..12]
        );
    }

    #[test]
    fn records_are_printable_and_merge_by_field() {
        let mut rng = Rng::new(2);
        let r = record(&mut rng, &[0, 1, 2], 100);
        assert_eq!(r.len(), 3 * (4 + 6 + 4 + 100));
        let u = record(&mut rng, &[1], 100);
        let m = merge(&r, &u);
        assert_eq!(m.len(), r.len());
        assert!(m.windows(u.len()).any(|w| w == u.as_slice()));
    }

    #[test]
    fn properties_are_checked() {
        let mut c = YcsbConfig::default();
        c.load_file(
            "# workload a\nrecordcount=10\nreadproportion=0.5\nrequestdistribution=zipfian\n",
        )
        .expect("parses");
        assert_eq!(
            (c.recordcount, c.read, c.distribution),
            (10, 0.5, Distribution::Zipfian)
        );
        assert!(c.set("readproportion", "1.5").is_err());
        assert!(c
            .set("recordcunt", "5")
            .unwrap_err()
            .to_string()
            .contains("recordcunt"));
    }

    #[test]
    fn counts_are_checked_as_ycsb_does() {
        let err = |name: &str, value: &str| {
            YcsbConfig::default()
                .set(name, value)
                .expect_err(value)
                .to_string()
        };
        let max = u64::MAX.to_string();
        for name in [
            "recordcount",
            "operationcount",
            "fieldlength",
            "maxscanlength",
            "threadcount",
        ] {
            let e = err(name, &max);
            assert!(e.contains(name) && e.contains("Java int"), "{e}");
        }
        for name in [
            "fieldcount",
            "maxscanlength",
            "minscanlength",
            "threadcount",
        ] {
            let e = err(name, "0");
            assert!(e.contains(name) && e.contains("at least 1"), "{e}");
        }
        let e = err("scanlengthdistribution", "bogus");
        assert!(
            e.contains("Distribution \"bogus\" not allowed for scan length"),
            "{e}"
        );
        assert!(err("scanlengthdistribution", "zipfian").contains("uniform"));
        let mut c = YcsbConfig::default();
        c.set("scanlengthdistribution", "uniform").expect("uniform");
        c.set("recordcount", "2147483647").expect("YCSB's largest");
    }

    #[test]
    fn a_run_without_operations_or_with_huge_records_is_refused() {
        let mut c = YcsbConfig::default();
        for p in [
            "readproportion",
            "updateproportion",
            "insertproportion",
            "scanproportion",
            "readmodifywriteproportion",
        ] {
            c.set(p, "0").expect("a proportion");
        }
        assert!(c.check(false).is_ok(), "a load chooses no operations");
        let e = c.check(true).expect_err("nothing to run").to_string();
        assert!(e.contains("are all 0"), "{e}");
        let c = YcsbConfig {
            minscanlength: 10,
            maxscanlength: 5,
            ..YcsbConfig::default()
        };
        assert!(c
            .check(true)
            .unwrap_err()
            .to_string()
            .contains("minscanlength"));
        let c = YcsbConfig {
            threads: 2000,
            ..YcsbConfig::default()
        };
        assert!(c
            .check(true)
            .unwrap_err()
            .to_string()
            .contains("threadcount"));
        let c = YcsbConfig {
            fieldlength: i32::MAX as usize,
            ..YcsbConfig::default()
        };
        assert!(c
            .check(false)
            .unwrap_err()
            .to_string()
            .contains("fieldlength"));
        assert!(YcsbConfig::default().check(true).is_ok());
    }
}
