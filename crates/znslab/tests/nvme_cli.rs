//! `znslab nvme` against nvme-cli's own definitions: every JSON key nvme-cli's printers print
//! (the key lists in testdata/nvme-cli/json-keys/), report-zones' normal lines, `list`, and
//! docs/compat/nvme-cli.md row by row (every flag of testdata/nvme-cli/flags.tsv has a row;
//! each row's example runs and is accepted or refused as the row says).

mod common;

use std::io::Write as _;
use std::process::{Output, Stdio};

use common::{command, text, znslab, TempDir};
use serde_json::Value;

const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/nvme-cli");
const COMPAT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/compat/nvme-cli.md");

/// `znslab` with `stdin` on its standard input.
fn znslab_in(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    // A command that does not read its input closes the pipe early; that is fine.
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    child.wait_with_output().expect("runs")
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    text(&o.stdout)
}

fn json(o: &Output) -> Value {
    serde_json::from_str(&ok(o)).expect("json")
}

fn image(dir: &TempDir, name: &str, preset: &str) -> String {
    let img = dir.path(name);
    ok(&znslab(&["nvme", "create", &img, "--preset", preset]));
    img
}

/// The key paths of a JSON object in order: `key`, and for an array of objects `key[].sub`
/// from its first element.
fn key_paths(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in v.as_object().expect("an object") {
        out.push(k.clone());
        if let Some(Value::Object(first)) = v.as_array().and_then(|a| a.first()) {
            out.extend(first.keys().map(|s| format!("{k}[].{s}")));
        }
    }
    out
}

fn expected_keys(page: &str) -> Vec<String> {
    std::fs::read_to_string(format!("{TESTDATA}/json-keys/{page}.txt"))
        .expect("key list")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

#[test]
fn json_pages_carry_every_key_nvme_cli_prints_in_its_order() {
    let dir = TempDir::new("nvmekeys");
    let img = image(&dir, "k.img", "test-min");
    let cases: &[(&str, &[&str])] = &[
        ("id-ns", &["id-ns"]),
        ("id-ctrl", &["id-ctrl"]),
        ("zns-id-ns", &["zns", "id-ns"]),
        ("zns-id-ctrl", &["zns", "id-ctrl"]),
        ("report-zones", &["zns", "report-zones"]),
        ("list", &["list"]),
    ];
    for (page, sub) in cases {
        let args = [&["nvme"][..], sub, &[&img, "-o", "json"]].concat();
        let v = json(&znslab(&args));
        assert_eq!(key_paths(&v), expected_keys(page), "{page}");
    }
    // Values that say what the device is.
    let ns = json(&znslab(&["nvme", "id-ns", &img, "-o", "json"]));
    assert_eq!(ns["lbafs"][0]["ds"], 12);
    assert_eq!(ns["lbafs"][0]["in_use"], 1);
    assert_eq!(ns["nvmcap"], ns["nsze"].as_u64().unwrap() * 4096);
    let ctrl = json(&znslab(&["nvme", "id-ctrl", &img, "-o", "json"]));
    assert_eq!(ctrl["mdts"], 9); // 2 MiB in 4 KiB pages: 2^9
    assert_eq!(ctrl["nn"], 1);
    assert_eq!(ctrl["vwc"], 0);
    let z = json(&znslab(&["nvme", "zns", "id-ns", &img, "-o", "json"]));
    assert_eq!(z["lbafe"][0]["zsze"], 64);
    let r = json(&znslab(&[
        "nvme",
        "zns",
        "report-zones",
        &img,
        "-o",
        "json",
    ]));
    assert_eq!(r["zone_list"][0]["attrs_info"], 0);
}

#[test]
fn report_zones_prints_nvme_cli_lines() {
    let dir = TempDir::new("nvmelines");
    let img = image(&dir, "l.img", "test-min");
    ok(&znslab_in(
        &["nvme", "write", &img, "-s", "0x40", "-c", "2"],
        &[7u8; 3 * 4096],
    ));
    ok(&znslab(&["nvme", "zns", "finish-zone", &img, "-s", "0x80"]));
    let out = ok(&znslab(&["nvme", "zns", "report-zones", &img, "-d", "3"]));
    let want = "nr_zones: 16\n\
        SLBA: 0          WP: 0          Cap: 0x40       State: 0x10 Type: 0x2  Attrs: 0    AttrsInfo: 0   \n\
        SLBA: 0x40       WP: 0x43       Cap: 0x40       State: 0x20 Type: 0x2  Attrs: 0    AttrsInfo: 0   \n\
        SLBA: 0x80       WP: 0xc0       Cap: 0x40       State: 0xe0 Type: 0x2  Attrs: 0    AttrsInfo: 0   \n";
    assert_eq!(out, want);
    // -v (or the plugin's -V): names, and the attributes spelt out.
    for flag in ["-v", "-V"] {
        let out = ok(&znslab(&[
            "nvme",
            "zns",
            "report-zones",
            &img,
            "-s",
            "0x40",
            "-d",
            "1",
            flag,
        ]));
        assert_eq!(
            out,
            "nr_zones: 16\n\
             SLBA: 0x40       WP: 0x43       Cap: 0x40       State: IMP_OPENED   Type: SEQWRITE_REQ  \n\
             Attrs: Zone Descriptor Extension is Not Vaild\n"
        );
    }
}

#[test]
fn list_prints_nvme_cli_columns_for_images() {
    let dir = TempDir::new("nvmelist");
    let zoned = image(&dir, "a.img", "test-min");
    let conv = image(&dir, "b.img", "test-tcssd");
    std::fs::write(dir.path("notes.txt"), "not an image").expect("write");
    let out = ok(&znslab(&["nvme", "list", &zoned]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "Node                  Generic               SN                   Model                                    Namespace  Usage                      Format           FW Rev  "
    );
    assert!(lines[1].starts_with("--------------------- ---------------------"));
    assert!(lines[2].starts_with(&format!("{zoned:<21} -")), "{out}");
    assert!(
        lines[2].contains("0x1          0.00   B /   4.19  MB      4 KiB + 16 B"),
        "{out}"
    );
    // --dir: the images in a folder, not other files; zns list only the zoned ones.
    let v = json(&znslab(&[
        "nvme",
        "list",
        "--dir",
        &dir.path(""),
        "-o",
        "json",
    ]));
    let paths: Vec<&str> = v["Devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["DevicePath"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 2, "{v}");
    let out = ok(&znslab(&["nvme", "zns", "list", &zoned, &conv]));
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(out.contains(&zoned) && !out.contains(&conv), "{out}");
    // A file named that is not an image is an error naming it.
    let o = znslab(&["nvme", "list", &dir.path("notes.txt")]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("notes.txt"));
}

/// A compatibility-table row.
struct Row {
    sub: String,
    flag: String,
    status: String,
    example: String,
}

fn compat_rows() -> Vec<Row> {
    let doc = std::fs::read_to_string(COMPAT).expect("compat table");
    doc.lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(" | ").map(|c| c.trim_matches(['|', ' '])).collect();
            (cells.len() == 5 && cells[1].starts_with("`-")).then(|| Row {
                sub: cells[0].trim_matches('`').into(),
                flag: cells[1].trim_matches('`').into(),
                status: cells[3].into(),
                example: cells[4].trim_matches('`').into(),
            })
        })
        .collect()
}

#[test]
fn the_compat_table_has_a_row_for_every_nvme_cli_flag() {
    let flags: Vec<(String, String)> = std::fs::read_to_string(format!("{TESTDATA}/flags.tsv"))
        .expect("flags")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[1].to_string())
        })
        .collect();
    let rows: Vec<(String, String)> = compat_rows().into_iter().map(|r| (r.sub, r.flag)).collect();
    assert_eq!(rows, flags);
    for r in compat_rows() {
        assert!(
            r.status.starts_with("supported") || r.status.starts_with("refused: "),
            "{} {}: {}",
            r.sub,
            r.flag,
            r.status
        );
    }
}

#[test]
fn every_compat_row_does_what_it_says() {
    let dir = TempDir::new("nvmecompat");
    let img = image(&dir, "c.img", "test-min");
    let tc = image(&dir, "t.img", "test-tcssd");
    let data = dir.path("data.bin");
    let md = dir.path("md.bin");
    std::fs::write(&data, vec![5u8; 4096]).expect("write");
    std::fs::write(&md, vec![0u8; 16]).expect("write");
    let block = vec![9u8; 4096];
    let mut failures = Vec::new();
    let zp = image(&dir, "z.img", "znsplus-mlc");
    let four = dir.path("four.bin");
    std::fs::write(&four, vec![7u8; 4 * 4096]).expect("write");
    for r in compat_rows() {
        let target = match r.sub.as_str() {
            "dsm" => &tc,
            "copy" => &zp,
            _ => &img,
        };
        if r.sub == "copy" {
            // Blocks 0-3 written, zone 1 empty: each row copies them to its start.
            ok(&znslab(&["nvme", "zns", "reset-zone", &zp, "-a"]));
            ok(&znslab(&[
                "nvme", "write", &zp, "-s", "0", "-c", "3", "-z", "16384", "-d", &four,
            ]));
        } else if r.sub != "dsm" {
            ok(&znslab(&["nvme", "zns", "reset-zone", &img, "-a"]));
        }
        if r.sub == "zns close-zone" {
            ok(&znslab(&["nvme", "zns", "open-zone", &img, "-s", "0"]));
        }
        let mut args: Vec<&str> = vec!["nvme"];
        args.extend(r.sub.split(' '));
        args.push(target);
        if r.sub == "zns offline-zone" && !r.example.split(' ').any(|t| t == "-a") {
            args.push("-a"); // only a read-only zone can go offline; -a picks those (none)
        }
        for t in r.example.split(' ') {
            args.push(match t {
                "DATAFILE" => &data,
                "MD" => &md,
                t => t,
            });
        }
        let o = znslab_in(&args, &block);
        let e = text(&o.stderr);
        let refused = r.status.starts_with("refused");
        let good = if refused {
            !o.status.success() && e.contains(&r.flag.replace("--zrwaa", "zrwaa"))
        } else {
            // A flag accepted and ignored says so on stderr.
            o.status.success()
                && !e.contains("panicked")
                && (!r.status.contains("with a notice") || e.contains("znslab nvme: "))
        };
        if !good {
            failures.push(format!(
                "{} {} ({}): {args:?}: exit {:?}: {e}",
                r.sub,
                r.flag,
                if refused { "refused" } else { "supported" },
                o.status.code()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn dry_run_and_show_command_and_namespace_ids_behave_as_nvme_cli() {
    let dir = TempDir::new("nvmedry");
    let img = image(&dir, "d.img", "test-min");
    let block = vec![3u8; 4096];
    // --dry-run shows the command and sends nothing: the zone stays empty.
    let out = ok(&znslab_in(&["nvme", "write", &img, "--dry-run"], &block));
    assert!(
        out.starts_with("opcode       : 01\nnsid         : 01\n"),
        "{out}"
    );
    let r = json(&znslab(&[
        "nvme",
        "zns",
        "report-zones",
        &img,
        "-o",
        "json",
    ]));
    assert_eq!(r["zone_list"][0]["state"], "EMPTY");
    // -V (show-command) shows it and sends it.
    let out = ok(&znslab_in(
        &["nvme", "write", &img, "-V", "-c", "0"],
        &block,
    ));
    assert!(out.contains("nblocks      : 0000\n"), "{out}");
    let r = json(&znslab(&[
        "nvme",
        "zns",
        "report-zones",
        &img,
        "-o",
        "json",
    ]));
    assert_eq!(r["zone_list"][0]["wp"], 1);
    // -z alone sets the block count; a size under a block is rounded up, as nvme-cli does.
    let o = znslab_in(&["nvme", "write", &img, "-s", "1", "-z", "100"], &block);
    ok(&o);
    assert!(text(&o.stderr).contains("Rounding data size to fit block count (4096 bytes)"));
    // One namespace: NSID 1.
    let o = znslab(&["nvme", "id-ns", &img, "-n", "2"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("--namespace-id 2"));
    // Success messages with -v only.
    let quiet = ok(&znslab(&["nvme", "zns", "reset-zone", &img, "-s", "0"]));
    assert_eq!(quiet, "");
    let loud = ok(&znslab(&[
        "nvme",
        "zns",
        "reset-zone",
        &img,
        "-s",
        "0",
        "-v",
    ]));
    assert_eq!(
        loud,
        "zns-reset-zone: Success, action:4 zone:0 all:0 zcapc:0 nsid:1\n"
    );
    // --zrwaa needs a device with a ZRWA (here: a CCZNS padding zone).
    let o = znslab(&["nvme", "zns", "open-zone", &img, "-s", "0", "--zrwaa"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("--zrwaa: refused"));
    let c = image(&dir, "c.img", "test-cczns");
    ok(&znslab(&[
        "nvme",
        "zns",
        "open-zone",
        &c,
        "-s",
        "0",
        "--zrwaa",
    ]));
}

#[test]
fn znsplus_zone_compaction_and_identify_mapping_from_the_command_line() {
    let dir = TempDir::new("nvme-znsplus");
    let img = image(&dir, "z.img", "znsplus-mlc");
    let data: Vec<u8> = (0..16 * 4096u32).map(|i| (i * 7 % 251) as u8).collect();
    let o = znslab_in(
        &["nvme", "write", &img, "-s", "0", "-c", "15", "-z", "65536"],
        &data,
    );
    ok(&o);
    // Blocks 0-7 to the start of zone 1 (LBA 8192): two chunks on their own chips.
    let out = ok(&znslab(&[
        "nvme",
        "zns",
        "zone-compaction",
        &img,
        "-s",
        "8192",
        "--sources",
        "0-7",
        "--destinations",
        "0x2000-0x2007",
        "-v",
    ]));
    assert!(out.contains("Success zone slba:2000 pairs:8"), "{out}");
    assert!(out.contains("2 chunk copybacks"), "{out}");
    let back = dir.path("back");
    ok(&znslab(&[
        "nvme", "read", &img, "-s", "8192", "-c", "7", "-z", "32768", "-d", &back,
    ]));
    assert_eq!(std::fs::read(&back).expect("read back"), data[..32768]);
    // The same through io-passthru with the wire payload.
    let payload = dir.path("pairs");
    let pairs: Vec<(u64, u64)> = (8..12).map(|i| (i, 8192 + i)).collect();
    std::fs::write(&payload, device::compaction_payload(&pairs)).expect("payload");
    ok(&znslab(&[
        "nvme",
        "io-passthru",
        &img,
        "--opcode=0x81",
        "--cdw10=8192",
        "--cdw12=3",
        "--data-len=8192",
        &format!("--input-file={payload}"),
        "--write",
    ]));
    let z = json(&znslab(&[
        "nvme",
        "zns",
        "report-zones",
        &img,
        "-d",
        "2",
        "-o",
        "json",
    ]));
    assert_eq!(z["zone_list"][1]["wp"], 8204, "{z}");
    let m = json(&znslab(&[
        "nvme",
        "zns",
        "identify-mapping",
        &img,
        "-o",
        "json",
    ]));
    assert_eq!(
        (m["chunk_lbas"].as_u64(), m["chip_id_bits"].as_u64()),
        (Some(4), Some(4))
    );
    // A plain ZNS device has neither opcode.
    let plain = image(&dir, "p.img", "test-min");
    let o = znslab(&["nvme", "zns", "identify-mapping", &plain]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("INVALID_OPCODE"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn znsplus_tl_open_from_the_command_line_one_process_per_command() {
    let dir = TempDir::new("nvme-tl");
    let img = image(&dir, "z.img", "znsplus-mlc");
    let data: Vec<u8> = (0..16 * 4096u32).map(|i| (i * 7 % 251) as u8).collect();
    ok(&znslab_in(
        &["nvme", "write", &img, "-s", "0", "-c", "15", "-z", "65536"],
        &data,
    ));
    ok(&znslab(&["nvme", "zns", "finish-zone", &img, "-s", "0"]));
    // Blocks 0-3 and 8-11 valid: the zone is TL-open, its write pointer at its start.
    let out = ok(&znslab(&[
        "nvme", "zns", "tl-open", &img, "-s", "0", "--valid", "0-3,8-11", "-v",
    ]));
    assert!(out.contains("zns-tl-open: Success zone slba:0"), "{out}");
    let z = json(&znslab(&[
        "nvme",
        "zns",
        "report-zones",
        &img,
        "-d",
        "1",
        "-o",
        "json",
    ]));
    assert_eq!(z["zone_list"][0]["wp"], 0, "{z}");
    // A write over a valid block is refused; over invalid ones past the pointer it works,
    // in a later process.
    let o = znslab_in(
        &["nvme", "write", &img, "-s", "8", "-c", "0", "-z", "4096"],
        &data[..4096],
    );
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("ZONE_INVALID_WRITE"),
        "{}",
        text(&o.stderr)
    );
    let new = vec![0xabu8; 4 * 4096];
    ok(&znslab_in(
        &["nvme", "write", &img, "-s", "4", "-c", "3", "-z", "16384"],
        &new,
    ));
    // Close only (the same through io-passthru: CDW12 bit 0): the zone is Full.
    let hdr = dir.path("hdr");
    std::fs::write(&hdr, [0u8; 16]).expect("header");
    ok(&znslab(&[
        "nvme",
        "io-passthru",
        &img,
        "--opcode=0x85",
        "--cdw10=0",
        "--cdw12=1",
        "--data-len=4096",
        &format!("--input-file={hdr}"),
        "--write",
    ]));
    let z = json(&znslab(&[
        "nvme",
        "zns",
        "report-zones",
        &img,
        "-d",
        "1",
        "-o",
        "json",
    ]));
    assert_eq!(z["zone_list"][0]["wp"], 8192, "{z}");
    let back = dir.path("back");
    ok(&znslab(&[
        "nvme", "read", &img, "-s", "0", "-c", "15", "-z", "65536", "-d", &back,
    ]));
    let got = std::fs::read(&back).expect("read back");
    let want = [
        &data[..4 * 4096],
        &new[..],
        &data[8 * 4096..12 * 4096],
        &[0u8; 4 * 4096][..],
    ]
    .concat();
    assert!(got == want, "zone 0 after threaded logging");
}
