//! A fileset as `fileset.c` keeps it: the tree laid out by `fileset_populate_subdir`
//! (directory depth and width drawn from a gamma of shape `dirgamma`/1000 around
//! log(entries + leafdirs) / log(dirwidth) and `dirwidth`; names `%08d`), file sizes from
//! `size` (a fixed number, or a draw per file from a `cvar`/`randvar`), and the picking of
//! `fileset_pick`: files and leaf directories that exist or not, in rotation (`indexed`:
//! by index), skipping busy ones and failing when all are busy ("All %d files are busy"),
//! with the idle counts threads wait on and `fileset_unbusy`.

use std::collections::BTreeSet;

use sim::Rng;

use super::model::{FilesetDef, Num};
use super::random::gamma_knuth;

#[derive(Clone, Debug)]
pub struct Entry {
    /// The path below the fileset's directory, `/`-prefixed (`""` for a single file).
    pub path: String,
    /// The size filebench gives the file (`fse_size`).
    pub size: u64,
    pub exists: bool,
    pub busy: bool,
    pub open_cnt: i64,
}

/// What `fileset_pick` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Pick {
    Got(u32),
    /// No entry of the kind asked for, or all of them busy.
    Empty,
    /// No idle entry: wait for one to be released.
    Wait,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    File,
    LeafDir,
}

pub struct FilesetState {
    pub name: String,
    /// `path/name` (for a single file: `path`).
    pub root: String,
    pub single_file: bool,
    pub files: Vec<Entry>,
    pub leafdirs: Vec<Entry>,
    /// Every directory below the root (and the root, `""`), in creation order.
    pub dirs: Vec<String>,
    dir_busy: Vec<bool>,
    exist: [BTreeSet<u32>; 2],
    noex: [BTreeSet<u32>; 2],
    idle: [i64; 2],
    idle_dirs: i64,
    exrotor: u32,
    nerotor: [u32; 2],
    leaf_exrotor: u32,
    dirrotor: u32,
    /// Bytes of all files at their nominal sizes.
    pub bytes: u64,
    pub meanwidth: f64,
    pub meandepth: f64,
}

fn slot(w: What) -> usize {
    match w {
        What::File => 0,
        What::LeafDir => 1,
    }
}

struct Layout<'a> {
    def: &'a FilesetDef,
    rng: &'a mut Rng,
    st: &'a mut FilesetState,
    gamma: f64,
}

impl Layout<'_> {
    fn subdir(&mut self, parent: Option<&str>, serial: u64, depth: f64) {
        let depth = depth + 1.0;
        let path = match parent {
            None => String::new(),
            Some(p) => format!("{p}/{serial:08}"),
        };
        self.st.dirs.push(path.clone());
        let mut randepth = match &self.def.dirdepthrv {
            Some(n) => n.get(self.rng) as f64,
            None if self.gamma > 0.0 => {
                gamma_knuth(self.rng, self.gamma, self.st.meandepth / self.gamma).trunc()
            }
            None => self.st.meandepth.trunc(),
        };
        let mut ranwidth = match &self.def.dirwidth {
            Num::Rand(_) => self.def.dirwidth.get(self.rng) as f64,
            Num::Const(_) if self.gamma > 0.0 => {
                gamma_knuth(self.rng, self.gamma, self.st.meanwidth / self.gamma)
            }
            Num::Const(_) => self.st.meanwidth,
        };
        if randepth == 0.0 {
            randepth = 1.0;
        }
        if ranwidth == 0.0 {
            ranwidth = 1.0;
        }
        let isleaf = depth >= randepth;
        for what in [What::File, What::LeafDir] {
            let want = match what {
                What::File => self.def.entries,
                What::LeafDir => self.def.leafdirs,
            };
            let mut i = 1u64;
            while (parent.is_none() || (i as f64) < ranwidth + 1.0) && self.count(what) < want {
                if parent.is_some() && isleaf {
                    let entry = Entry {
                        path: format!("{path}/{i:08}"),
                        size: match what {
                            What::File => self.def.size.get(self.rng),
                            What::LeafDir => 0,
                        },
                        exists: false,
                        busy: false,
                        open_cnt: 0,
                    };
                    self.st.bytes += entry.size;
                    self.st.idle[slot(what)] += 1;
                    let list = match what {
                        What::File => &mut self.st.files,
                        What::LeafDir => &mut self.st.leafdirs,
                    };
                    self.st.noex[slot(what)].insert(list.len() as u32);
                    list.push(entry);
                } else {
                    self.subdir(Some(&path), i, depth);
                }
                i += 1;
            }
        }
    }

    fn count(&self, what: What) -> u64 {
        match what {
            What::File => self.st.files.len() as u64,
            What::LeafDir => self.st.leafdirs.len() as u64,
        }
    }
}

impl FilesetState {
    /// Lay out the fileset (`fileset_populate`); nothing exists yet.
    pub fn populate(def: &FilesetDef, rng: &mut Rng) -> FilesetState {
        let mut st = FilesetState {
            name: def.name.clone(),
            root: if def.single_file {
                def.path.trim_end_matches('/').to_string()
            } else {
                format!("{}/{}", def.path.trim_end_matches('/'), def.name)
            },
            single_file: def.single_file,
            files: Vec::new(),
            leafdirs: Vec::new(),
            dirs: Vec::new(),
            dir_busy: Vec::new(),
            exist: Default::default(),
            noex: Default::default(),
            idle: [0; 2],
            idle_dirs: 0,
            exrotor: 0,
            nerotor: [0; 2],
            leaf_exrotor: 0,
            dirrotor: 0,
            bytes: 0,
            meanwidth: def.dirwidth.mean().trunc(),
            meandepth: 0.0,
        };
        if def.single_file {
            let size = def.size.get(rng);
            st.files.push(Entry {
                path: String::new(),
                size,
                exists: false,
                busy: false,
                open_cnt: 0,
            });
            st.noex[0].insert(0);
            st.idle[0] = 1;
            st.bytes = size;
            st.dirs.push(String::new());
        } else {
            st.meandepth = ((def.entries + def.leafdirs) as f64).ln() / st.meanwidth.ln();
            if !st.meandepth.is_finite() {
                st.meandepth = 1.0;
            }
            let gamma = def.dirgamma as f64 / 1000.0;
            let mut l = Layout {
                def,
                rng,
                st: &mut st,
                gamma,
            };
            l.subdir(None, 1, 0.0);
        }
        st.dir_busy = vec![false; st.dirs.len()];
        st.idle_dirs = st.dirs.len() as i64;
        st
    }

    /// The path of file or leaf directory `i`.
    pub fn path(&self, what: What, i: u32) -> String {
        let e = match what {
            What::File => &self.files[i as usize],
            What::LeafDir => &self.leafdirs[i as usize],
        };
        if self.single_file {
            format!("{}/{}", self.root, self.name)
        } else {
            format!("{}{}", self.root, e.path)
        }
    }

    pub fn dir_path(&self, i: u32) -> String {
        format!("{}{}", self.root, self.dirs[i as usize])
    }

    pub fn entry(&self, what: What, i: u32) -> &Entry {
        match what {
            What::File => &self.files[i as usize],
            What::LeafDir => &self.leafdirs[i as usize],
        }
    }

    fn entry_mut(&mut self, what: What, i: u32) -> &mut Entry {
        match what {
            What::File => &mut self.files[i as usize],
            What::LeafDir => &mut self.leafdirs[i as usize],
        }
    }

    pub fn exists_count(&self, what: What) -> usize {
        self.exist[slot(what)].len()
    }

    /// `fileset_find_entry`: `index`, else the next higher, else the first.
    fn find(tree: &BTreeSet<u32>, index: u32) -> Option<u32> {
        tree.range(index..).next().or_else(|| tree.first()).copied()
    }

    /// `fileset_pick` for a file or leaf directory that exists (`exists`) or not, by
    /// `index` or in rotation.
    pub fn pick(&mut self, what: What, exists: bool, index: Option<u64>) -> Pick {
        let s = slot(what);
        let total = match what {
            What::File => self.files.len(),
            What::LeafDir => self.leafdirs.len(),
        };
        if total == 0 {
            return Pick::Empty;
        }
        if self.idle[s] <= 0 {
            return Pick::Wait;
        }
        let tree = if exists {
            &self.exist[s]
        } else {
            &self.noex[s]
        };
        if tree.is_empty() {
            return Pick::Empty;
        }
        let start = match index {
            Some(ix) => Self::find(tree, (ix % total as u64) as u32),
            None => {
                let rotor = match (what, exists) {
                    (What::File, true) => self.exrotor,
                    (What::LeafDir, true) => self.leaf_exrotor,
                    (_, false) => self.nerotor[s],
                };
                Self::find(tree, rotor)
            }
        };
        let Some(start) = start else {
            return Pick::Empty;
        };
        if index.is_none() {
            match (what, exists) {
                (What::File, true) => self.exrotor = start + 1,
                (What::LeafDir, true) => self.leaf_exrotor = start + 1,
                (_, false) => self.nerotor[s] = start + 1,
            }
        }
        let tree = if exists {
            &self.exist[s]
        } else {
            &self.noex[s]
        };
        let mut e = start;
        while self.entry(what, e).busy {
            e = tree
                .range(e + 1..)
                .next()
                .or_else(|| tree.first())
                .copied()
                .unwrap_or(start);
            if e == start {
                return Pick::Empty;
            }
        }
        self.idle[s] -= 1;
        self.entry_mut(what, e).busy = true;
        Pick::Got(e)
    }

    /// Mark a known entry busy (closefile and deletefile of an open fd), once it is not:
    /// false while another thread holds it. `take_idle` as filebench decrements the idle
    /// count there.
    pub fn grab(&mut self, what: What, i: u32, take_idle: bool) -> bool {
        if self.entry(what, i).busy {
            return false;
        }
        self.entry_mut(what, i).busy = true;
        if take_idle {
            self.idle[slot(what)] -= 1;
        }
        true
    }

    /// `fileset_unbusy`: set or clear existence, add to the open count, release.
    pub fn unbusy(&mut self, what: What, i: u32, exists: Option<bool>, open_incr: i64) {
        let s = slot(what);
        if let Some(ex) = exists {
            let was = self.entry(what, i).exists;
            if ex != was {
                if ex {
                    self.noex[s].remove(&i);
                    self.exist[s].insert(i);
                } else {
                    self.exist[s].remove(&i);
                    self.noex[s].insert(i);
                }
                self.entry_mut(what, i).exists = ex;
            }
        }
        let e = self.entry_mut(what, i);
        e.open_cnt += open_incr;
        if e.busy {
            e.busy = false;
            self.idle[s] += 1;
        }
    }

    /// `fileset_pick(FILESET_PICKDIR)`: any directory, in rotation.
    pub fn pick_dir(&mut self) -> Pick {
        if self.dirs.is_empty() {
            return Pick::Empty;
        }
        if self.idle_dirs <= 0 {
            return Pick::Wait;
        }
        let n = self.dirs.len() as u32;
        let start = if self.dirrotor >= n { 0 } else { self.dirrotor };
        self.dirrotor = start + 1;
        let mut e = start;
        while self.dir_busy[e as usize] {
            e = (e + 1) % n;
            if e == start {
                return Pick::Empty;
            }
        }
        self.idle_dirs -= 1;
        self.dir_busy[e as usize] = true;
        Pick::Got(e)
    }

    pub fn unbusy_dir(&mut self, i: u32) {
        if std::mem::replace(&mut self.dir_busy[i as usize], false) {
            self.idle_dirs += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filebench::model::Num;

    fn def(entries: u64, width: u64, gamma: u64) -> FilesetDef {
        FilesetDef {
            name: "big".into(),
            path: "/tmp".into(),
            size: Num::Const(4096),
            entries,
            leafdirs: 0,
            dirwidth: Num::Const(width),
            dirgamma: gamma,
            dirdepthrv: None,
            prealloc: 0,
            readonly: false,
            writeonly: false,
            single_file: false,
            line: 1,
        }
    }

    #[test]
    fn layout_and_picking_follow_fileset_c() {
        let mut rng = Rng::new(1);
        // dirgamma=0: fixed depth (int)(ln 1000 / ln 10) = 2 (3 by rounding error or 2),
        // fixed width 10.
        let st = FilesetState::populate(&def(1000, 10, 0), &mut rng);
        assert_eq!(st.files.len(), 1000);
        assert_eq!(st.bytes, 1000 * 4096);
        assert!(
            st.files[0].path.starts_with("/00000001/"),
            "{}",
            st.files[0].path
        );
        assert!(st
            .files
            .iter()
            .all(|f| f.path.rsplit('/').next().unwrap().len() == 8));
        let widths = st
            .files
            .iter()
            .filter(|f| f.path.ends_with("/00000011"))
            .count();
        assert_eq!(widths, 0, "no directory holds more than dirwidth files");
        let mut st = FilesetState::populate(&def(100, 20, 1500), &mut rng);
        assert_eq!(st.files.len(), 100);
        assert_eq!(st.pick(What::File, true, None), Pick::Empty);
        assert_eq!(st.pick(What::File, false, None), Pick::Got(0));
        assert_eq!(st.pick(What::File, false, None), Pick::Got(1));
        st.unbusy(What::File, 0, Some(true), 1);
        assert_eq!(st.pick(What::File, true, None), Pick::Got(0));
        // 0 is busy and the only one existing: all busy.
        assert_eq!(st.pick(What::File, true, None), Pick::Empty);
        st.unbusy(What::File, 0, None, -1);
        st.unbusy(What::File, 1, Some(true), 0);
        assert_eq!(st.pick(What::File, true, Some(1)), Pick::Got(1));
    }
}
