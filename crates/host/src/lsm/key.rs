//! Internal keys, as RocksDB stores them: user key, then an 8-byte little-endian trailer
//! `(sequence << 8) | type`. They sort by user key ascending, then newest (highest trailer) first.

use std::cmp::Ordering;

/// What an entry is (RocksDB's ValueType codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ValueType {
    Deletion = 0,
    Value = 1,
}

impl ValueType {
    pub fn from_code(c: u8) -> Option<ValueType> {
        match c {
            0 => Some(ValueType::Deletion),
            1 => Some(ValueType::Value),
            _ => None,
        }
    }
}

/// Sequence numbers have 56 bits.
pub const MAX_SEQUENCE: u64 = (1 << 56) - 1;

pub fn internal_key(user_key: &[u8], seq: u64, t: ValueType) -> Vec<u8> {
    let mut k = Vec::with_capacity(user_key.len() + 8);
    k.extend_from_slice(user_key);
    k.extend_from_slice(&((seq << 8) | t as u64).to_le_bytes());
    k
}

/// Split an internal key into user key, sequence and type; None if malformed.
pub fn parse(ikey: &[u8]) -> Option<(&[u8], u64, ValueType)> {
    if ikey.len() < 8 {
        return None;
    }
    let (user, tail) = ikey.split_at(ikey.len() - 8);
    let t = u64::from_le_bytes(tail.try_into().ok()?);
    Some((user, t >> 8, ValueType::from_code(t as u8)?))
}

pub fn user_key(ikey: &[u8]) -> &[u8] {
    &ikey[..ikey.len().saturating_sub(8)]
}

fn trailer(ikey: &[u8]) -> u64 {
    let n = ikey.len();
    if n < 8 {
        return 0;
    }
    u64::from_le_bytes(ikey[n - 8..].try_into().expect("8 bytes"))
}

/// RocksDB's InternalKeyComparator.
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    user_key(a)
        .cmp(user_key(b))
        .then_with(|| trailer(b).cmp(&trailer(a)))
}

/// The key that seeks to the newest version of `user_key` visible at `seq`.
pub fn lookup_key(user_key: &[u8], seq: u64) -> Vec<u8> {
    internal_key(user_key, seq, ValueType::Value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_versions_sort_first() {
        let a1 = internal_key(b"a", 1, ValueType::Value);
        let a2 = internal_key(b"a", 2, ValueType::Deletion);
        let b0 = internal_key(b"b", 0, ValueType::Value);
        assert_eq!(compare(&a2, &a1), Ordering::Less);
        assert_eq!(compare(&a1, &b0), Ordering::Less);
        assert_eq!(parse(&a2), Some((&b"a"[..], 2, ValueType::Deletion)));
        assert_eq!(parse(b"short"), None);
    }
}
