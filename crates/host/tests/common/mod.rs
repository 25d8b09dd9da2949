//! Helpers the host's test files share: a small device for the store, a host on it, keys and
//! values.
#![allow(dead_code)] // each test file uses its own part

use std::rc::Rc;

use device::{presets, Controller, DeviceHandle};
use host::{HostIo, IoConfig};
use sim::cpu::CpuPool;
use sim::{Rng, Sim};

/// A `test_min` device of `zones` zones of 256 KiB in memory. The store holds a WAL, the
/// MANIFEST, a flush and a compaction output at once; ZenFS keeps 3 open zones back: 6 open.
pub fn store_device(zones: u32) -> (Sim, DeviceHandle) {
    let mut cfg = presets::test_min();
    cfg.nand.blocks_per_plane = zones;
    cfg.zones.max_open = 6;
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    (sim, dev)
}

/// A host on the device: what a reboot gives (fresh memory, same device).
pub fn host(sim: &Sim, dev: &DeviceHandle) -> Rc<HostIo> {
    Rc::new(HostIo::new(
        dev,
        Rc::new(CpuPool::new(sim, 2)),
        IoConfig::default(),
    ))
}

pub fn key(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// `value-i-` and 60-139 random bytes.
pub fn value(rng: &mut Rng, i: u64) -> Vec<u8> {
    let mut v = format!("value-{i}-").into_bytes();
    let mut tail = vec![0u8; 60 + rng.below(80) as usize];
    rng.fill(&mut tail);
    v.extend(tail);
    v
}

/// A `test_min` device in memory, as its preset gives it.
pub fn test_min_device() -> (Sim, DeviceHandle) {
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(
        &sim,
        Controller::in_memory(presets::test_min()).expect("valid"),
    );
    (sim, dev)
}

/// `len` seeded random bytes.
pub fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    Rng::new(seed).fill(&mut v);
    v
}

/// File `name` of `fs` read whole.
pub async fn read_all(fs: &host::zonefs::ZoneFs, name: &str) -> Vec<u8> {
    let size = fs.size(name).expect("exists") as usize;
    let mut buf = vec![0u8; size];
    let n = fs.read(name, 0, &mut buf).await.expect("reads");
    assert_eq!(n, size);
    buf
}
