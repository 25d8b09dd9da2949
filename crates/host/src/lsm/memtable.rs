//! The memtable: entries in internal-key order (user key ascending, newest first), and the
//! write batch that carries them through the WAL.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use super::format::{get_varint, put_varint};
use super::key::{self, ValueType};

/// Per-entry bookkeeping a skip-list arena would add (RocksDB's estimate is of this order).
const ENTRY_OVERHEAD: usize = 32;

/// (user key, newest first) → (type, value).
type Entries = BTreeMap<(Vec<u8>, Reverse<u64>), (ValueType, Vec<u8>)>;

#[derive(Default)]
pub struct MemTable {
    map: Entries,
    bytes: usize,
}

impl MemTable {
    pub fn insert(&mut self, user_key: &[u8], seq: u64, t: ValueType, value: &[u8]) {
        self.bytes += user_key.len() + 8 + value.len() + ENTRY_OVERHEAD;
        self.map
            .insert((user_key.to_vec(), Reverse(seq)), (t, value.to_vec()));
    }

    /// The newest version of `user_key` at or below `seq`.
    pub fn get(&self, user_key: &[u8], seq: u64) -> Option<(ValueType, Vec<u8>)> {
        self.map
            .range((user_key.to_vec(), Reverse(seq))..)
            .next()
            .filter(|((k, _), _)| k == user_key)
            .map(|(_, (t, v))| (*t, v.clone()))
    }

    /// Memory the table takes (keys, values and per-entry overhead).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Entries from user key `start` on, in order.
    pub fn entries_from<'a>(
        &'a self,
        start: &[u8],
    ) -> impl Iterator<Item = (Vec<u8>, &'a [u8])> + 'a {
        self.map
            .range((start.to_vec(), Reverse(u64::MAX))..)
            .map(|((k, Reverse(seq)), (t, v))| (key::internal_key(k, *seq, *t), v.as_slice()))
    }

    /// Entries as (internal key, value), in order.
    pub fn entries(&self) -> impl Iterator<Item = (Vec<u8>, &[u8])> {
        self.map
            .iter()
            .map(|((k, Reverse(seq)), (t, v))| (key::internal_key(k, *seq, *t), v.as_slice()))
    }
}

/// Updates applied together: RocksDB's WriteBatch layout (sequence u64, count u32, then per
/// entry a type byte, the key and, for a value, the value, each length-prefixed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteBatch {
    pub ops: Vec<(ValueType, Vec<u8>, Vec<u8>)>,
}

impl WriteBatch {
    pub fn put(&mut self, k: &[u8], v: &[u8]) {
        self.ops.push((ValueType::Value, k.to_vec(), v.to_vec()));
    }
    pub fn delete(&mut self, k: &[u8]) {
        self.ops.push((ValueType::Deletion, k.to_vec(), Vec::new()));
    }

    pub fn encode(&self, seq: u64) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&seq.to_le_bytes());
        b.extend_from_slice(&(self.ops.len() as u32).to_le_bytes());
        for (t, k, v) in &self.ops {
            b.push(*t as u8);
            put_varint(&mut b, k.len() as u64);
            b.extend_from_slice(k);
            if *t == ValueType::Value {
                put_varint(&mut b, v.len() as u64);
                b.extend_from_slice(v);
            }
        }
        b
    }

    /// The batch and its first sequence number; None if malformed.
    pub fn decode(b: &[u8]) -> Option<(u64, WriteBatch)> {
        let seq = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
        let count = u32::from_le_bytes(b.get(8..12)?.try_into().ok()?);
        let mut at = 12;
        let mut batch = WriteBatch::default();
        let field = |at: &mut usize| -> Option<Vec<u8>> {
            let (n, used) = get_varint(b.get(*at..)?)?;
            let start = *at + used;
            let end = start.checked_add(usize::try_from(n).ok()?)?;
            *at = end;
            Some(b.get(start..end)?.to_vec())
        };
        for _ in 0..count {
            let t = ValueType::from_code(*b.get(at)?)?;
            at += 1;
            let k = field(&mut at)?;
            let v = if t == ValueType::Value {
                field(&mut at)?
            } else {
                Vec::new()
            };
            batch.ops.push((t, k, v));
        }
        (at == b.len()).then_some((seq, batch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_visible_version_wins() {
        let mut m = MemTable::default();
        m.insert(b"k", 1, ValueType::Value, b"one");
        m.insert(b"k", 5, ValueType::Deletion, b"");
        m.insert(b"k", 9, ValueType::Value, b"nine");
        m.insert(b"j", 7, ValueType::Value, b"j");
        assert_eq!(m.get(b"k", 100), Some((ValueType::Value, b"nine".to_vec())));
        assert_eq!(m.get(b"k", 8), Some((ValueType::Deletion, Vec::new())));
        assert_eq!(m.get(b"k", 4), Some((ValueType::Value, b"one".to_vec())));
        assert_eq!(m.get(b"k", 0), None);
        assert_eq!(m.get(b"kk", 100), None);
        let keys: Vec<Vec<u8>> = m.entries().map(|(k, _)| k).collect();
        let mut sorted = keys.clone();
        sorted.sort_by(|a, b| key::compare(a, b));
        assert_eq!(keys, sorted);
    }

    #[test]
    fn batches_round_trip_and_refuse_garbage() {
        let mut b = WriteBatch::default();
        b.put(b"a", b"1");
        b.delete(b"b");
        b.put(b"", &[7u8; 300]);
        let enc = b.encode(42);
        assert_eq!(WriteBatch::decode(&enc), Some((42, b)));
        assert_eq!(WriteBatch::decode(&enc[..enc.len() - 1]), None);
        assert_eq!(WriteBatch::decode(&[1, 2, 3]), None);
    }
}
