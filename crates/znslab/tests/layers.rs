//! The house rules that keep the layers honest (STYLE.md §1-2):
//! each crate depends only on the layers below it, and nothing below the CLI reads the wall
//! clock, sleeps for real, uses an unseeded RNG or iterates a default-hashed map.

use std::path::Path;

/// Each layer and the workspace crates it may use.
const ALLOWED: &[(&str, &[&str])] = &[
    ("sim", &[]),
    ("nand", &["sim"]),
    ("codec", &[]),
    ("device", &["sim", "nand", "codec"]),
    ("report", &[]),
    ("host", &["sim", "nand", "codec", "device"]),
    (
        "workload",
        &["sim", "nand", "codec", "device", "host", "report"],
    ),
    (
        "znslab",
        &[
            "sim", "nand", "codec", "device", "host", "report", "workload",
        ],
    ),
];

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("workspace root")
}

#[test]
fn crates_depend_only_on_lower_layers() {
    let layers: Vec<&str> = ALLOWED.iter().map(|(c, _)| *c).collect();
    for (krate, allowed) in ALLOWED {
        let manifest =
            std::fs::read_to_string(workspace().join("crates").join(krate).join("Cargo.toml"))
                .expect("manifest");
        for line in manifest.lines() {
            let name = line.split(['.', '=', ' ']).next().unwrap_or("");
            if layers.contains(&name) && name != *krate {
                assert!(
                    allowed.contains(&name),
                    "crate {krate} depends on {name}, which is not below it"
                );
            }
        }
    }
}

#[test]
fn no_wall_clock_or_unseeded_randomness_below_the_cli() {
    let banned = [
        ("std::time::Instant", "virtual time: sim::SimInstant"),
        ("SystemTime", "virtual time: sim::SimInstant"),
        ("thread::sleep", "Sim::sleep_until"),
        ("thread_rng", "Sim::rng(label)"),
        ("rand::random", "Sim::rng(label)"),
        ("HashMap", "BTreeMap (ordered, deterministic iteration)"),
        ("HashSet", "BTreeSet (ordered, deterministic iteration)"),
    ];
    for krate in [
        "sim", "nand", "codec", "device", "host", "report", "workload",
    ] {
        let mut stack = vec![workspace().join("crates").join(krate).join("src")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("dir") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("source");
                for (bad, instead) in banned {
                    assert!(
                        !text.contains(bad),
                        "{} uses {bad}; use {instead}",
                        path.display()
                    );
                }
            }
        }
    }
}
