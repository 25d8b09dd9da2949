//! The file-system seam: what a file workload (filebench's flowops, the OLTP-like file
//! workload) asks of a POSIX-like file system, and nothing of how it stores files.
//!
//! Two implementations: the F2FS-like log-structured file system (`lfs`, on a zoned device)
//! and [`MemFs`] (files in host memory, no device and no time, for fast tests of the
//! workloads). Paths are absolute, `/`-separated, without `.` or `..`; a file is reached by
//! its inode number once looked up (an open file descriptor in the kernel holds the same).
//! Closing needs no call: F2FS writes nothing at close.
//!
//! Methods are `async fn`s used through generics, as [`crate::ZonedBackend`]'s are.
#![allow(async_fn_in_trait)]

use std::cell::RefCell;
use std::collections::BTreeMap;

use sim::Sim;

/// An inode number.
pub type Ino = u64;

/// What `stat` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStat {
    pub ino: Ino,
    pub size: u64,
    pub is_dir: bool,
}

/// Why a file-system call failed, with the errno a kernel would give.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum FsError {
    #[error("{0}: no such file or directory")]
    NotFound(String),
    #[error("{0}: file exists")]
    Exists(String),
    #[error("{0}: not a directory")]
    NotADirectory(String),
    #[error("{0}: is a directory")]
    IsADirectory(String),
    #[error("{0}: directory not empty")]
    NotEmpty(String),
    #[error("no space left on device")]
    NoSpace,
    #[error("{0}: invalid argument")]
    Invalid(String),
    #[error("I/O error: {0}")]
    Io(String),
}

impl FsError {
    /// The Linux errno (for messages in the real tools' forms).
    pub fn errno(&self) -> i32 {
        match self {
            FsError::NotFound(_) => 2,
            FsError::Exists(_) => 17,
            FsError::NotADirectory(_) => 20,
            FsError::IsADirectory(_) => 21,
            FsError::NotEmpty(_) => 39,
            FsError::NoSpace => 28,
            FsError::Invalid(_) => 22,
            FsError::Io(_) => 5,
        }
    }
}

/// A POSIX-like file system as a file workload sees it.
pub trait FileSystem: 'static {
    /// The clock its I/O is timed on.
    fn sim(&self) -> &Sim;
    /// Bytes a file may hold at most in all (the capacity users can fill), and the bytes
    /// files hold now: `df`'s size and used.
    fn capacity(&self) -> (u64, u64);

    /// Make directory `path`; its parent must exist.
    async fn mkdir(&self, path: &str) -> Result<Ino, FsError>;
    /// Create empty regular file `path` (`open(O_CREAT | O_EXCL)`); its parent must exist.
    async fn create(&self, path: &str) -> Result<Ino, FsError>;
    /// The inode of `path` (`open` of an existing file or directory).
    async fn lookup(&self, path: &str) -> Result<Ino, FsError>;
    /// `stat(path)`.
    async fn stat(&self, path: &str) -> Result<FileStat, FsError>;
    /// Names in directory `path`, sorted.
    async fn readdir(&self, path: &str) -> Result<Vec<String>, FsError>;
    /// Read up to `buf.len()` bytes at `offset` of file `ino`; the bytes read (short at the
    /// end of the file).
    async fn read(&self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize, FsError>;
    /// Write `data` at `offset` of file `ino` (into the page cache; durable after `fsync`),
    /// growing it (a gap reads as zeros).
    async fn write(&self, ino: Ino, offset: u64, data: &[u8]) -> Result<(), FsError>;
    /// The file's size.
    fn size(&self, ino: Ino) -> Result<u64, FsError>;
    /// Make file `ino`'s data and size durable.
    async fn fsync(&self, ino: Ino) -> Result<(), FsError>;
    /// Remove file `path`.
    async fn unlink(&self, path: &str) -> Result<(), FsError>;
    /// Remove empty directory `path`.
    async fn rmdir(&self, path: &str) -> Result<(), FsError>;
    /// Make everything durable (`sync`).
    async fn sync(&self) -> Result<(), FsError>;
}

/// A shared file system is one too (a workload runs on it while its owner keeps a handle to
/// read its counters afterwards).
impl<T: FileSystem> FileSystem for std::rc::Rc<T> {
    fn sim(&self) -> &Sim {
        (**self).sim()
    }
    fn capacity(&self) -> (u64, u64) {
        (**self).capacity()
    }
    async fn mkdir(&self, path: &str) -> Result<Ino, FsError> {
        (**self).mkdir(path).await
    }
    async fn create(&self, path: &str) -> Result<Ino, FsError> {
        (**self).create(path).await
    }
    async fn lookup(&self, path: &str) -> Result<Ino, FsError> {
        (**self).lookup(path).await
    }
    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        (**self).stat(path).await
    }
    async fn readdir(&self, path: &str) -> Result<Vec<String>, FsError> {
        (**self).readdir(path).await
    }
    async fn read(&self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        (**self).read(ino, offset, buf).await
    }
    async fn write(&self, ino: Ino, offset: u64, data: &[u8]) -> Result<(), FsError> {
        (**self).write(ino, offset, data).await
    }
    fn size(&self, ino: Ino) -> Result<u64, FsError> {
        (**self).size(ino)
    }
    async fn fsync(&self, ino: Ino) -> Result<(), FsError> {
        (**self).fsync(ino).await
    }
    async fn unlink(&self, path: &str) -> Result<(), FsError> {
        (**self).unlink(path).await
    }
    async fn rmdir(&self, path: &str) -> Result<(), FsError> {
        (**self).rmdir(path).await
    }
    async fn sync(&self) -> Result<(), FsError> {
        (**self).sync().await
    }
}

/// Split `path` into its parent and last name; `None` for the root or a malformed path.
pub fn split_path(path: &str) -> Option<(&str, &str)> {
    let p = path.strip_suffix('/').unwrap_or(path);
    if !p.starts_with('/') || p.len() < 2 {
        return None;
    }
    let cut = p.rfind('/')?;
    let (parent, name) = (&p[..cut.max(1)], &p[cut + 1..]);
    if name.is_empty() || name == "." || name == ".." || name.contains('\0') {
        return None;
    }
    Some((if cut == 0 { "/" } else { parent }, name))
}

enum Node {
    Dir(BTreeMap<String, Ino>),
    File(Vec<u8>),
}

/// Files in host memory: no device, no time, nothing lost. For tests of file workloads.
pub struct MemFs {
    sim: Sim,
    capacity: u64,
    nodes: RefCell<BTreeMap<Ino, Node>>,
    next: std::cell::Cell<Ino>,
    used: std::cell::Cell<u64>,
}

const ROOT: Ino = 1;

impl MemFs {
    /// An empty file system holding at most `capacity` bytes of file data.
    pub fn new(sim: &Sim, capacity: u64) -> MemFs {
        let mut nodes = BTreeMap::new();
        nodes.insert(ROOT, Node::Dir(BTreeMap::new()));
        MemFs {
            sim: sim.clone(),
            capacity,
            nodes: RefCell::new(nodes),
            next: std::cell::Cell::new(ROOT + 1),
            used: std::cell::Cell::new(0),
        }
    }

    fn resolve(&self, path: &str) -> Result<Ino, FsError> {
        if path == "/" {
            return Ok(ROOT);
        }
        let (parent, name) = split_path(path).ok_or_else(|| FsError::Invalid(path.into()))?;
        let dir = self.resolve(parent)?;
        match self.nodes.borrow().get(&dir) {
            Some(Node::Dir(entries)) => entries
                .get(name)
                .copied()
                .ok_or_else(|| FsError::NotFound(path.into())),
            _ => Err(FsError::NotADirectory(parent.into())),
        }
    }

    fn add(&self, path: &str, node: Node) -> Result<Ino, FsError> {
        let (parent, name) = split_path(path).ok_or_else(|| FsError::Invalid(path.into()))?;
        let dir = self.resolve(parent)?;
        let ino = self.next.get();
        let mut nodes = self.nodes.borrow_mut();
        match nodes.get_mut(&dir) {
            Some(Node::Dir(entries)) => {
                if entries.contains_key(name) {
                    return Err(FsError::Exists(path.into()));
                }
                entries.insert(name.to_string(), ino);
            }
            _ => return Err(FsError::NotADirectory(parent.into())),
        }
        nodes.insert(ino, node);
        self.next.set(ino + 1);
        Ok(ino)
    }

    fn remove(&self, path: &str, dir: bool) -> Result<(), FsError> {
        let (parent, name) = split_path(path).ok_or_else(|| FsError::Invalid(path.into()))?;
        let ino = self.resolve(path)?;
        let pino = self.resolve(parent)?;
        let mut nodes = self.nodes.borrow_mut();
        match (nodes.get(&ino), dir) {
            (Some(Node::Dir(e)), true) if !e.is_empty() => {
                return Err(FsError::NotEmpty(path.into()))
            }
            (Some(Node::Dir(_)), false) => return Err(FsError::IsADirectory(path.into())),
            (Some(Node::File(_)), true) => return Err(FsError::NotADirectory(path.into())),
            (Some(Node::File(d)), false) => self.used.set(self.used.get() - d.len() as u64),
            _ => {}
        }
        nodes.remove(&ino);
        if let Some(Node::Dir(entries)) = nodes.get_mut(&pino) {
            entries.remove(name);
        }
        Ok(())
    }
}

impl FileSystem for MemFs {
    fn sim(&self) -> &Sim {
        &self.sim
    }
    fn capacity(&self) -> (u64, u64) {
        (self.capacity, self.used.get())
    }
    async fn mkdir(&self, path: &str) -> Result<Ino, FsError> {
        self.add(path, Node::Dir(BTreeMap::new()))
    }
    async fn create(&self, path: &str) -> Result<Ino, FsError> {
        self.add(path, Node::File(Vec::new()))
    }
    async fn lookup(&self, path: &str) -> Result<Ino, FsError> {
        self.resolve(path)
    }
    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let ino = self.resolve(path)?;
        let nodes = self.nodes.borrow();
        Ok(match nodes.get(&ino) {
            Some(Node::File(d)) => FileStat {
                ino,
                size: d.len() as u64,
                is_dir: false,
            },
            _ => FileStat {
                ino,
                size: 0,
                is_dir: true,
            },
        })
    }
    async fn readdir(&self, path: &str) -> Result<Vec<String>, FsError> {
        let ino = self.resolve(path)?;
        match self.nodes.borrow().get(&ino) {
            Some(Node::Dir(entries)) => Ok(entries.keys().cloned().collect()),
            _ => Err(FsError::NotADirectory(path.into())),
        }
    }
    async fn read(&self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        match self.nodes.borrow().get(&ino) {
            Some(Node::File(d)) => {
                let from = (offset as usize).min(d.len());
                let n = (d.len() - from).min(buf.len());
                buf[..n].copy_from_slice(&d[from..from + n]);
                Ok(n)
            }
            Some(Node::Dir(_)) => Err(FsError::IsADirectory(format!("inode {ino}"))),
            None => Err(FsError::NotFound(format!("inode {ino}"))),
        }
    }
    async fn write(&self, ino: Ino, offset: u64, data: &[u8]) -> Result<(), FsError> {
        let mut nodes = self.nodes.borrow_mut();
        match nodes.get_mut(&ino) {
            Some(Node::File(d)) => {
                let end = offset
                    .checked_add(data.len() as u64)
                    .ok_or_else(|| FsError::Invalid(format!("offset {offset}")))?;
                let grow = end.saturating_sub(d.len() as u64);
                if self.used.get() + grow > self.capacity {
                    return Err(FsError::NoSpace);
                }
                if grow > 0 {
                    d.resize(end as usize, 0);
                    self.used.set(self.used.get() + grow);
                }
                d[offset as usize..end as usize].copy_from_slice(data);
                Ok(())
            }
            Some(Node::Dir(_)) => Err(FsError::IsADirectory(format!("inode {ino}"))),
            None => Err(FsError::NotFound(format!("inode {ino}"))),
        }
    }
    fn size(&self, ino: Ino) -> Result<u64, FsError> {
        match self.nodes.borrow().get(&ino) {
            Some(Node::File(d)) => Ok(d.len() as u64),
            Some(Node::Dir(_)) => Ok(0),
            None => Err(FsError::NotFound(format!("inode {ino}"))),
        }
    }
    async fn fsync(&self, ino: Ino) -> Result<(), FsError> {
        self.size(ino).map(|_| ())
    }
    async fn unlink(&self, path: &str) -> Result<(), FsError> {
        self.remove(path, false)
    }
    async fn rmdir(&self, path: &str) -> Result<(), FsError> {
        self.remove(path, true)
    }
    async fn sync(&self) -> Result<(), FsError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_parent_and_name() {
        assert_eq!(split_path("/a"), Some(("/", "a")));
        assert_eq!(split_path("/a/b/"), Some(("/a", "b")));
        assert_eq!(split_path("/"), None);
        assert_eq!(split_path("a/b"), None);
        assert_eq!(split_path("/a/.."), None);
    }

    #[test]
    fn memfs_files_and_directories_behave_as_posix_says() {
        let sim = Sim::new(1);
        let fs = MemFs::new(&sim, 1 << 20);
        sim.block_on(async move {
            fs.mkdir("/d").await.unwrap();
            let f = fs.create("/d/f").await.unwrap();
            assert_eq!(fs.create("/d/f").await, Err(FsError::Exists("/d/f".into())));
            assert!(matches!(fs.create("/x/f").await, Err(FsError::NotFound(_))));
            fs.write(f, 10, b"abc").await.unwrap();
            let mut buf = [9u8; 20];
            assert_eq!(fs.read(f, 0, &mut buf).await.unwrap(), 13);
            assert_eq!(&buf[..13], b"\0\0\0\0\0\0\0\0\0\0abc");
            assert_eq!(fs.stat("/d/f").await.unwrap().size, 13);
            assert_eq!(fs.readdir("/d").await.unwrap(), vec!["f".to_string()]);
            assert!(matches!(fs.rmdir("/d").await, Err(FsError::NotEmpty(_))));
            fs.unlink("/d/f").await.unwrap();
            fs.rmdir("/d").await.unwrap();
            assert_eq!(fs.capacity(), (1 << 20, 0));
            let g = fs.create("/g").await.unwrap();
            assert_eq!(fs.write(g, 1 << 20, b"x").await, Err(FsError::NoSpace));
        });
    }
}
