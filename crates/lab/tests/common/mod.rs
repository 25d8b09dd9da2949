//! What the file-system tests share: a small ZNS+ stack.

use device::Controller;
use lab::stack::{fit_to_fs, FsStack};
use sim::Sim;

/// A ZNS+ MLC device with 2 MiB zones for a file system of `fs_bytes`, and its stack.
pub fn stack(sim: &Sim, fs_bytes: u64) -> FsStack {
    let mut cfg = device::presets::znsplus_mlc();
    cfg.nand.pages_per_block /= 16;
    let cfg = fit_to_fs(cfg, fs_bytes).expect("fits");
    let main = Controller::in_memory(cfg).expect("valid");
    let meta = Controller::in_memory(device::presets::znsplus_meta()).expect("valid");
    FsStack::new(sim, main, meta, 4)
}
