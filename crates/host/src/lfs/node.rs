//! Node blocks: the inode (923 data pointers, 5 node ids: two direct, two indirect, one
//! double indirect), direct nodes (1018 data pointers) and indirect nodes (1018 node ids), with
//! F2FS's node offsets (`IS_DNODE`, `get_node_path`), their on-media encoding and the
//! 24-byte footer {nid, ino, flag (offset << 3 | marks), cp_ver, next_blkaddr}.

use super::BLOCK;

/// A node id (the inode number of an inode).
pub type Nid = u32;
/// A main-area block address (`zone * zone_blocks + offset`).
pub type Blk = u32;
/// No block.
pub const NULL: Blk = u32::MAX;

pub const ADDRS_PER_INODE: usize = 923;
pub const ADDRS_PER_BLOCK: usize = 1018;
pub const NIDS_PER_BLOCK: usize = 1018;
/// Longest name (F2FS_NAME_LEN).
pub const NAME_LEN: usize = 255;
/// Node offset of the double-indirect node.
const DIND_OFS: u32 = 5 + 2 * NIDS_PER_BLOCK as u32;
/// Footer marks.
pub const FSYNC_MARK: u32 = 1;
pub const DENT_MARK: u32 = 2;

/// An inode's fields that matter here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inode {
    pub is_dir: bool,
    pub size: u64,
    /// Parent directory and name (F2FS's `i_pino`, `i_name`: roll-forward recovers the
    /// dentry of a file created after the last checkpoint from them).
    pub pino: Nid,
    pub name: Vec<u8>,
    pub addrs: Vec<Blk>,
    pub nids: [Nid; 5],
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeBody {
    Inode(Box<Inode>),
    Direct(Vec<Blk>),
    Indirect(Vec<Nid>),
}

/// A node: its id, the inode it belongs to, its offset in the file's node tree and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub nid: Nid,
    pub ino: Nid,
    pub ofs: u32,
    pub body: NodeBody,
}

/// Whether node offset `ofs` is a direct node (or the inode): F2FS's `IS_DNODE`.
pub fn is_dnode(ofs: u32) -> bool {
    let n = NIDS_PER_BLOCK as u32;
    if ofs == 3 || ofs == 4 + n || ofs == DIND_OFS {
        return false;
    }
    if ofs >= 6 + 2 * n {
        return !(ofs - (6 + 2 * n)).is_multiple_of(n + 1);
    }
    true
}

/// The node offset of child `slot` of the node at offset `parent` (the inode's five, the
/// indirect nodes' 1018): what `node_path` walks down.
pub fn child_ofs(parent: u32, slot: usize) -> u32 {
    let n = NIDS_PER_BLOCK as u32;
    let slot = slot as u32;
    match parent {
        0 => [1, 2, 3, 4 + n, DIND_OFS][slot.min(4) as usize],
        3 => 4 + slot,
        p if p == 4 + n => 5 + n + slot,
        DIND_OFS => DIND_OFS + 1 + slot * (n + 1),
        p => p + 1 + slot,
    }
}

impl Node {
    pub fn new_inode(ino: Nid, is_dir: bool, pino: Nid, name: &[u8]) -> Node {
        Node {
            nid: ino,
            ino,
            ofs: 0,
            body: NodeBody::Inode(Box::new(Inode {
                is_dir,
                size: 0,
                pino,
                name: name[..name.len().min(NAME_LEN)].to_vec(),
                addrs: vec![NULL; ADDRS_PER_INODE],
                nids: [0; 5],
            })),
        }
    }
    pub fn new_child(nid: Nid, ino: Nid, ofs: u32) -> Node {
        let body = if is_dnode(ofs) {
            NodeBody::Direct(vec![NULL; ADDRS_PER_BLOCK])
        } else {
            NodeBody::Indirect(vec![0; NIDS_PER_BLOCK])
        };
        Node {
            nid,
            ino,
            ofs,
            body,
        }
    }
    pub fn inode(&self) -> Option<&Inode> {
        match &self.body {
            NodeBody::Inode(i) => Some(i),
            _ => None,
        }
    }
    pub fn inode_mut(&mut self) -> Option<&mut Inode> {
        match &mut self.body {
            NodeBody::Inode(i) => Some(i),
            _ => None,
        }
    }
    /// Data pointers (inode and direct nodes).
    pub fn addrs(&self) -> &[Blk] {
        match &self.body {
            NodeBody::Inode(i) => &i.addrs,
            NodeBody::Direct(a) => a,
            NodeBody::Indirect(_) => &[],
        }
    }
    pub fn addrs_mut(&mut self) -> &mut [Blk] {
        match &mut self.body {
            NodeBody::Inode(i) => &mut i.addrs,
            NodeBody::Direct(a) => a,
            NodeBody::Indirect(_) => &mut [],
        }
    }
    /// Child node ids (inode: its five; indirect: 1018).
    pub fn nids(&self) -> &[Nid] {
        match &self.body {
            NodeBody::Inode(i) => &i.nids,
            NodeBody::Direct(_) => &[],
            NodeBody::Indirect(n) => n,
        }
    }
    pub fn nids_mut(&mut self) -> &mut [Nid] {
        match &mut self.body {
            NodeBody::Inode(i) => &mut i.nids,
            NodeBody::Direct(_) => &mut [],
            NodeBody::Indirect(n) => n,
        }
    }

    /// The 4 KiB block with footer marks `marks`, checkpoint version `cp_ver` and the log's
    /// next block `next`.
    pub fn encode(&self, marks: u32, cp_ver: u64, next: Blk) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK];
        let put32 =
            |b: &mut [u8], at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        match &self.body {
            NodeBody::Inode(i) => {
                b[0] = i.is_dir as u8;
                b[1..9].copy_from_slice(&i.size.to_le_bytes());
                put32(&mut b, 9, i.pino);
                b[13..15].copy_from_slice(&(i.name.len() as u16).to_le_bytes());
                b[15..15 + i.name.len()].copy_from_slice(&i.name);
                let base = 15 + NAME_LEN;
                for (k, a) in i.addrs.iter().enumerate() {
                    put32(&mut b, base + 4 * k, *a);
                }
                let base = base + 4 * ADDRS_PER_INODE;
                for (k, n) in i.nids.iter().enumerate() {
                    put32(&mut b, base + 4 * k, *n);
                }
            }
            NodeBody::Direct(a) => {
                for (k, v) in a.iter().enumerate() {
                    put32(&mut b, 4 * k, *v);
                }
            }
            NodeBody::Indirect(n) => {
                for (k, v) in n.iter().enumerate() {
                    put32(&mut b, 4 * k, *v);
                }
            }
        }
        let f = BLOCK - 24;
        put32(&mut b, f, self.nid);
        put32(&mut b, f + 4, self.ino);
        put32(&mut b, f + 8, self.ofs << 3 | marks);
        b[f + 12..f + 20].copy_from_slice(&cp_ver.to_le_bytes());
        put32(&mut b, f + 20, next);
        b
    }

    /// A node block back, with its footer: (node, marks, cp_ver, next). `None` for a block that
    /// is no node (zeros).
    pub fn decode(b: &[u8]) -> Option<(Node, u32, u64, Blk)> {
        if b.len() != BLOCK {
            return None;
        }
        let get32 = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let f = BLOCK - 24;
        let (nid, ino, flag) = (get32(f), get32(f + 4), get32(f + 8));
        let cp_ver = u64::from_le_bytes(b[f + 12..f + 20].try_into().unwrap());
        let next = get32(f + 20);
        if nid == 0 || ino == 0 {
            return None;
        }
        let ofs = flag >> 3;
        let body = if ofs == 0 {
            if nid != ino {
                return None;
            }
            let len = (u16::from_le_bytes([b[13], b[14]]) as usize).min(NAME_LEN);
            let base = 15 + NAME_LEN;
            let addrs = (0..ADDRS_PER_INODE).map(|k| get32(base + 4 * k)).collect();
            let base = base + 4 * ADDRS_PER_INODE;
            let mut nids = [0; 5];
            for (k, n) in nids.iter_mut().enumerate() {
                *n = get32(base + 4 * k);
            }
            NodeBody::Inode(Box::new(Inode {
                is_dir: b[0] == 1,
                size: u64::from_le_bytes(b[1..9].try_into().unwrap()),
                pino: get32(9),
                name: b[15..15 + len].to_vec(),
                addrs,
                nids,
            }))
        } else if is_dnode(ofs) {
            NodeBody::Direct((0..ADDRS_PER_BLOCK).map(|k| get32(4 * k)).collect())
        } else {
            NodeBody::Indirect((0..NIDS_PER_BLOCK).map(|k| get32(4 * k)).collect())
        };
        Some((
            Node {
                nid,
                ino,
                ofs,
                body,
            },
            flag & 7,
            cp_ver,
            next,
        ))
    }
}

/// The first file block a direct node (or the inode) at node offset `ofs` maps: F2FS's
/// `start_bidx_of_node`.
pub fn start_index(ofs: u32) -> u64 {
    let (a, n) = (ADDRS_PER_BLOCK as u64, NIDS_PER_BLOCK as u64);
    let ofs = ofs as u64;
    let base = ADDRS_PER_INODE as u64;
    match ofs {
        0 => 0,
        1 | 2 => base + (ofs - 1) * a,
        o if o >= 4 && o < 4 + n => base + 2 * a + (o - 4) * a,
        o if o >= 5 + n && o < 5 + 2 * n => base + 2 * a + n * a + (o - 5 - n) * a,
        o => {
            let rel = o.saturating_sub(DIND_OFS as u64 + 1);
            let (k, j) = (rel / (n + 1), (rel % (n + 1)).saturating_sub(1));
            base + 2 * a + 2 * n * a + (k * n + j) * a
        }
    }
}

/// Where file block `idx` hangs: from the inode, the chain of (slot in the parent's node
/// ids, node offset of the child) down to the node holding the pointer, and the pointer's
/// slot in it. `None` past the largest file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodePath {
    pub chain: Vec<(usize, u32)>,
    pub slot: usize,
}

/// F2FS's `get_node_path`.
pub fn node_path(idx: u64) -> Option<NodePath> {
    let (a, n) = (ADDRS_PER_BLOCK as u64, NIDS_PER_BLOCK as u64);
    let mut i = idx;
    if i < ADDRS_PER_INODE as u64 {
        return Some(NodePath {
            chain: vec![],
            slot: i as usize,
        });
    }
    i -= ADDRS_PER_INODE as u64;
    for k in 0..2u64 {
        if i < a {
            return Some(NodePath {
                chain: vec![(k as usize, 1 + k as u32)],
                slot: i as usize,
            });
        }
        i -= a;
    }
    for (k, ind_ofs) in [3u32, 4 + n as u32].into_iter().enumerate() {
        if i < a * n {
            let d = i / a;
            return Some(NodePath {
                chain: vec![(2 + k, ind_ofs), (d as usize, ind_ofs + 1 + d as u32)],
                slot: (i % a) as usize,
            });
        }
        i -= a * n;
    }
    if i < a * n * n {
        let ind = i / (a * n);
        let d = (i / a) % n;
        let ind_ofs = DIND_OFS + 1 + ind as u32 * (n as u32 + 1);
        return Some(NodePath {
            chain: vec![
                (4, DIND_OFS),
                (ind as usize, ind_ofs),
                (d as usize, ind_ofs + 1 + d as u32),
            ],
            slot: (i % a) as usize,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_f2fs_offsets() {
        assert_eq!(node_path(0).unwrap().chain, vec![]);
        let p = node_path(923).unwrap();
        assert_eq!((p.chain.clone(), p.slot), (vec![(0, 1)], 0));
        let p = node_path(923 + 1018).unwrap();
        assert_eq!(p.chain, vec![(1, 2)]);
        let p = node_path(923 + 2036 + 1018 + 5).unwrap();
        assert_eq!((p.chain.clone(), p.slot), (vec![(2, 3), (1, 5)], 5));
        assert!(is_dnode(5) && !is_dnode(3) && !is_dnode(1022) && !is_dnode(2041));
        let p = node_path(923 + 2036 + 2 * 1018 * 1018).unwrap();
        assert_eq!(p.chain, vec![(4, 2041), (0, 2042), (0, 2043)]);
        assert!(!is_dnode(2042) && is_dnode(2043));
        let p = node_path(923 + 2036 + 2 * 1018 * 1018 + 1018 * 1018).unwrap();
        assert_eq!(p.chain[1], (1, 2042 + 1019));
        for p in [node_path(5000).unwrap(), node_path(3_000_000).unwrap()] {
            for (_, ofs) in &p.chain[..p.chain.len() - 1] {
                assert!(!is_dnode(*ofs));
            }
            assert!(is_dnode(p.chain.last().unwrap().1));
        }
        assert!(node_path(u64::MAX / 2).is_none());
        // child_ofs walks the same chains node_path gives.
        for idx in [923, 2000, 5000, 3_000_000, 1_000_000_000] {
            let p = node_path(idx).unwrap();
            let mut parent = 0;
            for &(slot, ofs) in &p.chain {
                assert_eq!(child_ofs(parent, slot), ofs, "{idx}");
                parent = ofs;
            }
        }
        for idx in [0, 922, 923, 2000, 5000, 3_000_000, 1_000_000_000] {
            let p = node_path(idx).unwrap();
            let ofs = p.chain.last().map_or(0, |c| c.1);
            assert_eq!(start_index(ofs) + p.slot as u64, idx, "{idx}");
        }
    }

    #[test]
    fn node_blocks_round_trip() {
        let mut n = Node::new_inode(7, false, 3, b"file.txt");
        n.inode_mut().unwrap().size = 12345;
        n.addrs_mut()[3] = 99;
        n.nids_mut()[2] = 41;
        let b = n.encode(FSYNC_MARK | DENT_MARK, 5, 1234);
        assert_eq!(Node::decode(&b), Some((n, 3, 5, 1234)));
        let mut d = Node::new_child(9, 7, 4);
        d.addrs_mut()[1017] = 5;
        assert_eq!(Node::decode(&d.encode(0, 1, NULL)), Some((d, 0, 1, NULL)));
        assert_eq!(Node::decode(&[0u8; BLOCK]), None);
    }
}
