//! NVMe command dwords as a host would submit them: decoded or refused with a status.
#![no_main]
use device::cmd::wire::{self, IoDwords};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 24 {
        return;
    }
    let u32_at = |i: usize| u32::from_le_bytes(data[i..i + 4].try_into().expect("4 bytes"));
    let dw = IoDwords {
        cdw10: u32_at(0),
        cdw11: u32_at(4),
        cdw12: u32_at(8),
        cdw13: u32_at(12),
        cdw14: u32_at(16),
        cdw15: u32_at(20),
    };
    let mut payload = data[24..].to_vec();
    let mut md = vec![0u8; payload.len().min(4096)];
    let _ = wire::decode_write(wire::OPC_WRITE, dw, &payload, &mut md).is_ok();
    let _ = wire::decode_write(wire::OPC_ZONE_APPEND, dw, &payload, &mut md).is_ok();
    let _ = wire::decode_read(dw, &mut payload, &mut md).is_ok();
    let _ = wire::decode_zone_send(dw.slba(), dw.cdw13).is_ok();
    let _ = wire::cw_feedback(&md, 4096);
});
