//! The `VkPipelineCache` kept on disk between processes, so that a kernel's pipeline is
//! compiled once per machine rather than once per process.
//!
//! One file per device and driver: `<dir>/<pipelineCacheUUID>-<vendorID>-<deviceID>-
//! <driverVersion>.bin` (hexadecimal), where `<dir>` is `$XDG_CACHE_HOME/pisa-vk`, else
//! `~/.cache/pisa-vk`. [`PIPELINE_CACHE_ENV`] (`PISA_VK_PIPELINE_CACHE`) turns it off (`0`,
//! `off`, `false`, `no`) or names another directory; [`DiskCache`] in
//! [`ContextOptions`](crate::ContextOptions) does the same from code.
//!
//! - Loading: the file is read when the context is created and used only when its header
//!   is the one Vulkan defines (`VkPipelineCacheHeaderVersionOne`: header size at least 32
//!   and within the file, version 1, and the vendor, device and pipeline-cache UUID of this
//!   device); a missing, truncated, corrupt or foreign file is ignored (the context starts
//!   with an empty cache and replaces the file later). A driver that still refuses the data
//!   gets an empty cache too.
//! - Saving: when the context is dropped (or [`Context::save_pipeline_cache`](
//!   crate::Context::save_pipeline_cache) is called) after it built pipelines, the cache is
//!   written to a temporary file in the same directory and renamed over the file: a reader
//!   in another process sees the old file or the new one, never a partial one. If the file
//!   changed since it was loaded (another process saved meanwhile), its pipelines are merged
//!   in first (`vkMergePipelineCaches`), so concurrent processes lose nothing but a race
//!   between two saves. Errors while saving are ignored: the cache is an optimisation.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Env variable: `0`/`off`/`false`/`no` turns the on-disk pipeline cache off; `1`/`on` or
/// empty keeps the default directory; anything else is the directory to use.
pub const PIPELINE_CACHE_ENV: &str = "PISA_VK_PIPELINE_CACHE";

/// Where the pipeline cache is kept on disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DiskCache {
    /// What [`PIPELINE_CACHE_ENV`] says, else the user's cache directory.
    #[default]
    Default,
    /// No file: pipelines are cached for the context's lifetime only.
    Off,
    /// This directory (created when missing).
    Dir(PathBuf),
}

impl DiskCache {
    /// The directory this setting means, or `None` for no on-disk cache (also when no
    /// cache directory can be found: neither `XDG_CACHE_HOME` nor `HOME` set).
    pub fn directory(&self) -> Option<PathBuf> {
        match self {
            DiskCache::Off => None,
            DiskCache::Dir(d) => Some(d.clone()),
            DiskCache::Default => match std::env::var_os(PIPELINE_CACHE_ENV) {
                Some(v) => match v.to_string_lossy().trim().to_ascii_lowercase().as_str() {
                    "0" | "off" | "false" | "no" => None,
                    "" | "1" | "on" | "true" | "yes" => user_cache_dir(),
                    _ => Some(PathBuf::from(v)),
                },
                None => user_cache_dir(),
            },
        }
    }
}

/// `$XDG_CACHE_HOME/pisa-vk` (an absolute path), else `$HOME/.cache/pisa-vk`.
fn user_cache_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".cache"))
    })?;
    Some(base.join("pisa-vk"))
}

/// What identifies a device's pipeline-cache data: the fields of its header, and the driver
/// version for the file name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CacheIdentity {
    pub vendor_id: u32,
    pub device_id: u32,
    pub driver_version: u32,
    pub uuid: [u8; 16],
}

/// `VkPipelineCacheHeaderVersionOne`'s size and `VK_PIPELINE_CACHE_HEADER_VERSION_ONE`.
const HEADER_SIZE: usize = 32;
const HEADER_VERSION_ONE: u32 = 1;

impl CacheIdentity {
    /// The file name of this device's cache.
    pub fn file_name(&self) -> String {
        let uuid: String = self.uuid.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{uuid}-{:04x}-{:04x}-{:08x}{}.bin",
            self.vendor_id,
            self.device_id,
            self.driver_version,
            codegen_suffix()
        )
    }

    /// Whether `data` starts with a valid header for this device.
    pub fn accepts(&self, data: &[u8]) -> bool {
        self.accepts_header(data, data.len() as u64)
    }

    /// Whether `head` (at least the first [`HEADER_SIZE`] bytes of data `len` bytes long) is a
    /// valid header for this device.
    fn accepts_header(&self, head: &[u8], len: u64) -> bool {
        if head.len() < HEADER_SIZE {
            return false;
        }
        let word = |i: usize| u32::from_le_bytes(head[i * 4..i * 4 + 4].try_into().unwrap());
        let header_size = word(0) as u64;
        header_size >= HEADER_SIZE as u64
            && header_size <= len
            && word(1) == HEADER_VERSION_ONE
            && word(2) == self.vendor_id
            && word(3) == self.device_id
            && head[16..32] == self.uuid
    }
}

/// The cache file of one device, and what was seen of it at load time.
pub(crate) struct CacheFile {
    pub path: PathBuf,
    /// The modification time of the file loaded (`None`: none was).
    loaded: Option<SystemTime>,
}

impl CacheFile {
    /// The file for `identity` under `setting`'s directory, and its data when valid.
    pub fn open(
        setting: &DiskCache,
        identity: &CacheIdentity,
    ) -> Option<(CacheFile, Option<Vec<u8>>)> {
        let path = setting.directory()?.join(identity.file_name());
        let (data, loaded) = match read_valid(&path, identity) {
            Some((d, t)) => (Some(d), Some(t)),
            None => (None, None),
        };
        Some((CacheFile { path, loaded }, data))
    }

    /// The data of the file when another process replaced it after it was loaded (and it
    /// is valid).
    pub fn changed_since_load(&self, identity: &CacheIdentity) -> Option<Vec<u8>> {
        let modified = std::fs::metadata(&self.path).ok()?.modified().ok()?;
        if Some(modified) == self.loaded {
            return None;
        }
        read_valid(&self.path, identity).map(|(d, _)| d)
    }

    /// Writes `data` to a temporary file next to the cache file and renames it over it.
    pub fn store(&self, data: &[u8]) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.{}.{nanos:08x}.tmp", std::process::id()));
        let written = std::fs::write(&tmp, data).and_then(|()| std::fs::rename(&tmp, &self.path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// The largest cache file loaded; a larger one is ignored (and replaced at the next save).
pub const MAX_CACHE_FILE_BYTES: u64 = 512 << 20;

/// The file's bytes and modification time when it holds valid data for `identity`. Only a
/// regular file of at most [`MAX_CACHE_FILE_BYTES`] is opened (a FIFO or a device would block
/// or never end), and its header is checked before the rest is read.
fn read_valid(path: &Path, identity: &CacheIdentity) -> Option<(Vec<u8>, SystemTime)> {
    use std::io::Read;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_CACHE_FILE_BYTES {
        return None;
    }
    let mut file = std::fs::File::open(path).ok()?;
    let modified = meta.modified().ok()?;
    let mut data = vec![0u8; HEADER_SIZE];
    file.read_exact(&mut data).ok()?;
    if !identity.accepts_header(&data, meta.len()) {
        return None;
    }
    file.take(MAX_CACHE_FILE_BYTES)
        .read_to_end(&mut data)
        .ok()?;
    identity.accepts(&data).then_some((data, modified))
}

/// The variables that change how a CPU driver generates code in this process
/// (`GALLIUM_OVERRIDE_CPU_CAPS`, which pisa-vk sets on AVX-512 CPUs, and
/// `LP_NATIVE_VECTOR_WIDTH`), as a file-name suffix: lavapipe's `pipelineCacheUUID` does not
/// reflect them, and a pipeline compiled under one setting must not be served under another
/// (docs/driver-bugs.md). Empty when neither is set.
fn codegen_suffix() -> String {
    codegen_suffix_of(
        std::env::var_os(crate::driver_bugs::CPU_CAPS_ENV).as_deref(),
        std::env::var_os("LP_NATIVE_VECTOR_WIDTH").as_deref(),
    )
}

/// [`codegen_suffix`] of the two variables' values.
fn codegen_suffix_of(caps: Option<&std::ffi::OsStr>, width: Option<&std::ffi::OsStr>) -> String {
    let mut suffix = String::new();
    for (value, tag) in [(caps, "caps"), (width, "width")] {
        if let Some(v) = value {
            let v: String = v
                .to_string_lossy()
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(32)
                .collect();
            suffix.push_str(&format!("-{tag}-{v}"));
        }
    }
    suffix
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> CacheIdentity {
        CacheIdentity {
            vendor_id: 0x10005,
            device_id: 0,
            driver_version: 0x0640_0001,
            uuid: *b"0123456789abcdef",
        }
    }

    fn header(id: &CacheIdentity) -> Vec<u8> {
        let mut h = Vec::new();
        for w in [32u32, 1, id.vendor_id, id.device_id] {
            h.extend_from_slice(&w.to_le_bytes());
        }
        h.extend_from_slice(&id.uuid);
        h
    }

    #[test]
    fn only_a_header_for_this_device_is_accepted() {
        let id = identity();
        let mut good = header(&id);
        assert!(id.accepts(&good));
        good.extend_from_slice(&[7; 100]);
        assert!(id.accepts(&good));
        // Truncated anywhere in the header.
        for len in 0..32 {
            assert!(!id.accepts(&good[..len]), "{len}");
        }
        let bad = |at: usize, value: u8| {
            let mut d = header(&id);
            d[at] = value;
            id.accepts(&d)
        };
        assert!(!bad(0, 16), "header size below 32");
        assert!(!bad(0, 33), "header size beyond the file");
        assert!(!bad(4, 2), "header version 2");
        assert!(!bad(8, 6), "another vendor");
        assert!(!bad(12, 1), "another device");
        assert!(!bad(31, b'x'), "another pipeline-cache UUID");
    }

    #[test]
    fn the_file_name_has_every_part_of_the_identity() {
        assert_eq!(
            identity().file_name(),
            format!(
                "30313233343536373839616263646566-10005-0000-06400001{}.bin",
                codegen_suffix()
            )
        );
    }

    #[test]
    fn code_generation_settings_name_their_own_file() {
        use std::ffi::OsStr;
        assert_eq!(codegen_suffix_of(None, None), "");
        assert_eq!(
            codegen_suffix_of(Some(OsStr::new("avx")), None),
            "-caps-avx"
        );
        assert_eq!(codegen_suffix_of(Some(OsStr::new("")), None), "-caps-");
        assert_eq!(
            codegen_suffix_of(Some(OsStr::new("sse4.1")), Some(OsStr::new("../512"))),
            "-caps-sse4.1-width-.._512"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_junk_file_is_not_read() {
        let dir = std::env::temp_dir().join(format!("pisa-vk-cache-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let id = identity();
        let path = dir.join(id.file_name());
        // A FIFO nobody writes to: opening it for reading would block for ever.
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        if made.is_ok_and(|s| s.success()) {
            let (_, data) = CacheFile::open(&DiskCache::Dir(dir.clone()), &id).unwrap();
            assert!(data.is_none());
            std::fs::remove_file(&path).unwrap();
        }
        // Junk: refused at its header, the rest unread.
        std::fs::write(&path, vec![0xAB; 4096]).unwrap();
        let (_, data) = CacheFile::open(&DiskCache::Dir(dir.clone()), &id).unwrap();
        assert!(data.is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn settings_name_directories() {
        assert_eq!(DiskCache::Off.directory(), None);
        assert_eq!(
            DiskCache::Dir("/tmp/x".into()).directory(),
            Some(PathBuf::from("/tmp/x"))
        );
    }

    #[test]
    fn a_store_replaces_the_file_whole() {
        let dir = std::env::temp_dir().join(format!("pisa-vk-cache-unit-{}", std::process::id()));
        let id = identity();
        let (file, data) = CacheFile::open(&DiskCache::Dir(dir.clone()), &id).unwrap();
        assert!(data.is_none());
        let mut d = header(&id);
        d.extend_from_slice(b"payload");
        file.store(&d).unwrap();
        assert_eq!(std::fs::read(&file.path).unwrap(), d);
        // Garbage on disk is ignored at the next load.
        std::fs::write(&file.path, b"garbage").unwrap();
        let (_, data) = CacheFile::open(&DiskCache::Dir(dir.clone()), &id).unwrap();
        assert!(data.is_none());
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
