//! Corrupt input never panics: device TOML files mutated from every preset, NVMe command
//! dwords and buffers at random, and report-zones buffers at random give a value or an error.
//! A short corpus-driven run of what the torture issue asks of cargo-fuzz targets, by seed.

use device::cmd::wire::{self, IoDwords};
use device::{parse_report, presets, DeviceConfig};
use sim::Rng;

#[test]
fn mutated_device_files_parse_and_validate_or_say_what_is_wrong() {
    let mut rng = Rng::new(0xdef1);
    let (mut valid, mut refused) = (0, 0);
    for p in presets::all() {
        let text = (p.config)().to_toml();
        for i in 0..400 {
            let bytes = rng.mutate(text.as_bytes());
            let input = String::from_utf8_lossy(&bytes).into_owned();
            let r = std::panic::catch_unwind(|| {
                DeviceConfig::from_toml(&input).and_then(|c| c.layout().map(|_| ()))
            });
            match r {
                Ok(Ok(())) => valid += 1,
                Ok(Err(e)) => {
                    assert!(!e.to_string().is_empty());
                    refused += 1;
                }
                Err(_) => panic!("preset {}, mutation {i}: panicked on\n{input}", p.name),
            }
        }
    }
    // Both outcomes are exercised (the counts move with the presets' text).
    assert!(
        valid > 50 && refused > 100,
        "{valid} valid, {refused} refused"
    );
}

#[test]
fn random_command_dwords_decode_or_are_refused() {
    let mut rng = Rng::new(0xc0de);
    for i in 0..20_000 {
        let dw = IoDwords {
            cdw10: rng.next_u64() as u32,
            cdw11: rng.below(4) as u32,
            cdw12: rng.next_u64() as u32,
            cdw13: rng.next_u64() as u32,
            cdw14: rng.next_u64() as u32,
            cdw15: rng.next_u64() as u32,
        };
        let mut data = vec![0u8; 4096 * rng.below(4) as usize];
        let mut md = vec![0u8; 64 * rng.below(4) as usize];
        rng.fill(&mut md);
        let r = std::panic::catch_unwind(move || {
            let _ = wire::decode_write(wire::OPC_WRITE, dw, &data, &mut md).is_ok();
            let _ = wire::decode_write(wire::OPC_ZONE_APPEND, dw, &data, &mut md).is_ok();
            let _ = wire::decode_read(dw, &mut data, &mut md).is_ok();
            let _ = wire::decode_zone_send(dw.slba(), dw.cdw13).is_ok();
            let _ = wire::cw_feedback(&md, 4096);
        });
        assert!(r.is_ok(), "dwords {i} panicked");
    }
}

#[test]
fn random_report_buffers_parse_or_are_refused() {
    let mut rng = Rng::new(0x2e9);
    for i in 0..20_000 {
        let mut b = vec![0u8; rng.below(300) as usize];
        rng.fill(&mut b);
        if b.len() >= 8 && rng.below(2) == 0 {
            // A plausible count, so descriptors are parsed.
            b[..8].copy_from_slice(&rng.below(8).to_le_bytes());
        }
        let r = std::panic::catch_unwind(|| parse_report(&b).map(|(_, z)| z.len()));
        assert!(r.is_ok(), "buffer {i} panicked");
    }
}

/// OOB chunk metadata as an image could hold it after corruption: any bytes, any length
/// (shorter than its header too), decode to a fill and records or an error naming the page.
#[test]
fn random_oob_pages_decode_or_are_refused() {
    let mut rng = Rng::new(0x00b);
    let (mut ok, mut refused) = (0, 0);
    for i in 0..20_000 {
        let mut b = vec![0u8; rng.below(80) as usize];
        rng.fill(&mut b);
        if b.len() >= 8 && rng.below(2) == 0 {
            // A fill inside the page and a small record count, so records are decoded.
            b[..4].copy_from_slice(&(rng.below(16384) as u32).to_le_bytes());
            b[4..6].copy_from_slice(&(rng.below(5) as u16).to_le_bytes());
        }
        match std::panic::catch_unwind(|| device::decode_oob_page(16384, 7, &b)) {
            Ok(Ok(_)) => ok += 1,
            Ok(Err(e)) => {
                assert!(e.starts_with("page 7"), "{e}");
                refused += 1;
            }
            Err(_) => panic!("OOB {i} ({} bytes) panicked", b.len()),
        }
    }
    assert!(ok > 100 && refused > 100, "{ok} decoded, {refused} refused");
}
