//! # codec: real codecs and engine profiles (layer 3)
//!
//! [`Coder`] runs real compressors (zstd, lz4, snappy, deflate) on real bytes, so the sizes a
//! simulation sees are those of the data. [`EngineProfile`]s say what a (de)compression costs
//! where it runs (host CPU, in-storage ASIC, PCIe card, on-chip), taken from the papers'
//! measurements. The two are separate: the codec makes the bytes, the profile the time.
//!
//! A [`Coder::modeled`] runs no codec at all: it draws stored sizes from a [`SizeModel`]
//! measured on the dataset (the modeled payload, [`modeled`]).
//!
//! Depends on nothing else in the workspace.

mod codec;
pub mod modeled;
pub mod profile;

pub use codec::{Codec, CodecError, Coder};
pub use modeled::{Modeled, SizeModel};
pub use profile::{Direction, EngineProfile, OpCost, Placement};
