//! YCSB's core workload (research/zenfs-rocksdb.md §3.2) on the store: YCSB's property names,
//! its key naming (`user` + FNV-64 of the key number with hashed insert order), its values
//! (printable random bytes, 10 fields of 100), its distributions (scrambled zipfian with
//! θ = 0.99 over 10^10 items, uniform, latest), the RocksDB binding's record layout and
//! read-merge-write updates, and YCSB's `[OVERALL]` / `[READ]` report lines.//!
//! Its parts: [`properties`] reads YCSB's property files and checks them; [`generator`] makes
//! the keys and chooses them (YCSB's hashing, zipfian, hotspot, exponential and sequential
//! generators) and draws field lengths; [`client`] runs a load or run phase with YCSB's client
//! threads; [`measure`] keeps YCSB's measurements and prints them as YCSB's exporters and
//! status thread do.

mod client;
pub(crate) mod generator;
mod java_fmt;
mod java_props;
pub mod measure;
mod properties;

pub use client::{load, run, OpStats, YcsbReport};
pub use generator::{fnvhash64, key_name, key_name_padded};
pub use properties::{
    Distribution, FieldLengths, StatusSink, YcsbConfig, YcsbError, JAVA_INT_MAX,
    MAX_RECORD_BUFFER_BYTES, MAX_THREADS,
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
    fn property_files_read_as_javas_properties_load_reads_them() {
        let text = "! a comment\r\n  recordcount : 12\r\noperationcount 34\n\
                    requestdistribution=zip\\\n   fian\nfieldnameprefix=a\\u0062\\=\n";
        let mut c = YcsbConfig::default();
        c.load_file(text).expect("parses");
        assert_eq!((c.recordcount, c.operationcount), (12, 34));
        assert_eq!(c.distribution, Distribution::Zipfian);
        assert_eq!(c.fieldnameprefix, "ab=");
        assert!(YcsbConfig::default()
            .load_file("fieldnameprefix=\\u00zz\n")
            .is_err());
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
        let mut c = YcsbConfig::default();
        c.set("scanlengthdistribution", "zipfian").expect("zipfian");
        assert!(c.scanzipfian);
        c.set("scanlengthdistribution", "uniform").expect("uniform");
        c.set("recordcount", "2147483647").expect("YCSB's largest");
    }

    fn keys(cfg: YcsbConfig) -> super::generator::Keys {
        super::generator::Keys {
            zipf: None,
            inserted: cfg.recordcount,
            pending: Default::default(),
            sequence: 0,
            cfg,
        }
    }

    #[test]
    fn hotspot_exponential_and_sequential_choose_as_ycsb_does() {
        let mut c = YcsbConfig::default();
        for (k, v) in [
            ("recordcount", "1000"),
            ("requestdistribution", "hotspot"),
            ("hotspotdatafraction", "0.1"),
            ("hotspotopnfraction", "0.9"),
        ] {
            c.set(k, v).expect(k);
        }
        c.check(true).expect("valid");
        let mut k = keys(c.clone());
        let mut rng = Rng::new(3);
        let hot = (0..10_000).filter(|_| k.choose(&mut rng) < 100).count();
        assert!(
            (8_700..9_300).contains(&hot),
            "{hot} of 10000 in the hot 10 %"
        );
        // Exponential: counted back from the latest record; 95 % within recordcount * frac,
        // 98 % once draws past the first record are drawn again.
        c.set("requestdistribution", "exponential")
            .expect("exponential");
        let mut k = keys(c.clone());
        let near = (0..10_000)
            .filter(|_| k.choose(&mut rng) >= 1000 - 857)
            .count();
        assert!((9_700..9_950).contains(&near), "{near}");
        // Sequential: insertstart, insertstart+1, ... within insertcount, round and round.
        c.set("requestdistribution", "sequential")
            .expect("sequential");
        c.set("insertstart", "10").expect("insertstart");
        c.set("insertcount", "3").expect("insertcount");
        let mut k = keys(c.clone());
        let seq: Vec<u64> = (0..5).map(|_| k.choose(&mut rng)).collect();
        assert_eq!(seq, [10, 11, 12, 10, 11]);
        // Uniform within insertstart..insertstart+insertcount.
        c.set("requestdistribution", "uniform").expect("uniform");
        let mut k = keys(c.clone());
        assert!((0..1000).all(|_| (10..13).contains(&k.choose(&mut rng))));
        // The hot set must not be empty while operations go to it.
        c.set("requestdistribution", "hotspot").expect("hotspot");
        c.set("hotspotdatafraction", "0.1").expect("fraction");
        let e = c
            .check(true)
            .expect_err("3 * 0.1 = 0 hot records")
            .to_string();
        assert!(e.contains("hotspotdatafraction"), "{e}");
        // YCSB's check of insertstart + insertcount against recordcount.
        c.set("insertcount", "995").expect("insertcount");
        let e = c.check(false).expect_err("past recordcount").to_string();
        assert!(e.contains("Invalid combination"), "{e}");
    }

    #[test]
    fn field_lengths_and_names_follow_the_properties() {
        use super::client::record_fields;
        use super::generator::FieldLengthGen;
        let mut c = YcsbConfig::default();
        for (k, v) in [
            ("fieldlengthdistribution", "uniform"),
            ("minfieldlength", "5"),
            ("fieldlength", "20"),
            ("fieldnameprefix", "f_"),
        ] {
            c.set(k, v).expect(k);
        }
        c.check(false).expect("valid");
        let g = FieldLengthGen::new(&c);
        let mut rng = Rng::new(4);
        let lens: Vec<usize> = (0..2000).map(|_| g.next(&mut rng, 20)).collect();
        assert!(lens.iter().all(|l| (5..=20).contains(l)));
        assert!(lens.contains(&5) && lens.contains(&20));
        let r = record_fields(&mut rng, &c.fieldnameprefix, &[3], &g, 20);
        assert_eq!(&r[4..7], b"f_3");
        // Zipfian lengths favour the shortest.
        c.set("fieldlengthdistribution", "zipfian")
            .expect("zipfian");
        let g = FieldLengthGen::new(&c);
        let short = (0..2000).filter(|_| g.next(&mut rng, 20) == 5).count();
        assert!(short > 300, "{short}");
        // Histogram: YCSB's file format, read by prepare().
        let dir = std::env::temp_dir().join(format!("znslab-hist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tmp");
        let path = dir.join("hist.txt");
        std::fs::write(&path, "BlockSize\t10\n0\t0\n1\t3\n2\t1\n").expect("write");
        c.set("fieldlengthdistribution", "histogram")
            .expect("histogram");
        assert!(c.check(false).is_err(), "not read yet");
        c.set("fieldlengthhistogram", path.to_str().expect("utf-8"))
            .expect("path");
        c.prepare().expect("reads");
        c.check(false).expect("valid");
        let g = FieldLengthGen::new(&c);
        let lens: Vec<usize> = (0..1000).map(|_| g.next(&mut rng, 30)).collect();
        // HistogramGenerator's own arithmetic: a draw of 0 (one in 4) gives 10 (bucket 0's
        // weight 0 leaves it <= 0), the rest give 20 (bucket 1, or the loop ending at 2).
        let tens = lens.iter().filter(|&&l| l == 10).count();
        assert!(
            lens.iter().all(|&l| l == 10 || l == 20),
            "{:?}",
            &lens[..10]
        );
        assert!((180..320).contains(&tens), "{tens}");
        std::fs::write(&path, "BlockSize\t10\n1\t3\n").expect("write");
        c.fieldlengths = FieldLengths::Histogram {
            block: 0,
            buckets: Vec::new(),
        };
        let e = c.prepare().expect_err("out of order").to_string();
        assert!(e.contains("out of order"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
        // Zero padding of ordered keys.
        assert_eq!(key_name_padded(42, false, 6), b"user000042");
    }

    #[test]
    fn properties_ycsb_reads_are_supported_noticed_or_refused() {
        let mut c = YcsbConfig::default();
        let template = "workload=site.ycsb.workloads.CoreWorkload\nmaxscanrate=0\n\
                        measurementtype=histogram\nhistogram.buckets=1000\ntable=usertable\n";
        c.load_file(template).expect("the template's properties");
        assert_eq!(c.notices.len(), 1, "{:?}", c.notices);
        assert!(c.notices[0].contains("maxscanrate"));
        c.set("table", "other").expect("table");
        assert!(c.notices.iter().any(|n| n.contains("table=other")));
        for (k, v) in [
            ("workload", "site.ycsb.workloads.TimeSeriesWorkload"),
            ("dataintegrity", "true"),
            ("measurementtype", "raw"),
            ("measurement.interval", "intended"),
            ("hdrhistogram.fileoutput", "true"),
            ("rocksdb.optionsfile", "/x"),
            ("db", "site.ycsb.BasicDB"),
            ("exporter", "com.example.Mine"),
        ] {
            let e = YcsbConfig::default().set(k, v).expect_err(k).to_string();
            assert!(e.contains(k), "{e}");
        }
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
