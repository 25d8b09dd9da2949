//! Opening an image file shorter than its layout needs says so, with the path and the
//! expected and found lengths, instead of a bare short read.

use device::{presets, Controller};

fn open_err(path: &std::path::Path) -> String {
    match Controller::open_image(path) {
        Ok(_) => panic!("a truncated image opened"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_truncated_image_names_expected_and_found_lengths() {
    let dir = std::env::temp_dir().join(format!("znslab-trunc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("t.img");
    Controller::create_image(&path, presets::by_name("test-min").expect("preset"))
        .expect("creates")
        .close()
        .expect("saves");
    let full = std::fs::metadata(&path).expect("stat").len();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("opens");
    file.set_len(100_000).expect("truncates");
    let e = open_err(&path);
    assert!(
        e.contains(&path.display().to_string())
            && e.contains(&format!("expected at least {full} bytes"))
            && e.contains("found 100000"),
        "{e}"
    );
    // Too short even for the header.
    file.set_len(5).expect("truncates");
    let e = open_err(&path);
    assert!(
        e.contains("expected at least 65536 bytes") && e.contains("found 5"),
        "{e}"
    );
    assert!(!e.contains("failed to fill whole buffer"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
