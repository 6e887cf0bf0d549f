//! Berkeley DB 5.3 (Debian's libdb5.3, its btree) under `lamina-bench
//! scale-reads`, through the C calls of bench/bdb_shim.c. The load: one
//! btree file of 4 KiB pages, records put in key order (a put at the end
//! of a btree splits its last page unevenly, so pages stay full), with a 1
//! GiB memory pool; the file synced and closed. The lookups: the file
//! opened `DB_RDONLY` in a private, free-threaded environment whose memory
//! pool is the cache share of the cap; `DB->get` into a buffer of the
//! reader's own; a batch a loop of `get`. There are no transactions: the
//! file is read while nothing writes it, as the other engines' are.

use super::{Engine, Load, Reader};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

/// The shim's handle: a Berkeley DB environment and its database.
#[repr(C)]
struct Handle {
    _opaque: [u8; 0],
}

extern "C" {
    fn lb_bdb_open(home: *const c_char, create: c_int, cache: u64, out: *mut *mut Handle) -> c_int;
    fn lb_bdb_put(
        h: *mut Handle,
        k: *const c_void,
        klen: usize,
        v: *const c_void,
        vlen: usize,
    ) -> c_int;
    fn lb_bdb_get(
        h: *mut Handle,
        k: *const c_void,
        klen: usize,
        buf: *mut c_void,
        cap: usize,
        found: *mut c_int,
        vlen: *mut usize,
    ) -> c_int;
    fn lb_bdb_sync(h: *mut Handle) -> c_int;
    fn lb_bdb_close(h: *mut Handle) -> c_int;
    fn lb_bdb_strerror(code: c_int) -> *const c_char;
    fn lb_bdb_version() -> *const c_char;
}

/// The memory pool of the load (not under the cap).
const LOAD_CACHE: u64 = 1 << 30;

/// Berkeley DB's words for error `code`.
fn err(what: &str, code: c_int) -> String {
    // SAFETY: db_strerror returns a static string for any code.
    let msg = unsafe { CStr::from_ptr(lb_bdb_strerror(code)) };
    format!("bdb: {what}: {}", msg.to_string_lossy())
}

/// The library's version, as it names itself.
pub(super) fn version() -> String {
    // SAFETY: db_version returns a static string.
    let full = unsafe { CStr::from_ptr(lb_bdb_version()) }.to_string_lossy();
    // "Berkeley DB 5.3.28: (September  9, 2013)": the name and number.
    full.split(':')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// An open environment and database; closed when dropped.
pub struct BdbEngine {
    h: *mut Handle,
}

// SAFETY: the environment and the database are opened with DB_THREAD, which
// makes their handles free-threaded; every get copies into its caller's
// own buffer (DB_DBT_USERMEM).
unsafe impl Send for BdbEngine {}
unsafe impl Sync for BdbEngine {}

impl BdbEngine {
    /// Opens the database in `dir`: created for the load, else read-only;
    /// a memory pool of `cache` bytes.
    fn open_with(dir: &Path, create: bool, cache: u64) -> Result<BdbEngine, String> {
        let home = CString::new(dir.as_os_str().as_encoded_bytes())
            .map_err(|_| format!("bdb: {}: a path with a NUL byte", dir.display()))?;
        let mut h = std::ptr::null_mut();
        // SAFETY: `home` is a NUL-terminated path; `h` receives the handle.
        let r = unsafe { lb_bdb_open(home.as_ptr(), c_int::from(create), cache, &mut h) };
        if r != 0 {
            return Err(err(&format!("opening {}", dir.display()), r));
        }
        Ok(BdbEngine { h })
    }

    /// Opens the database in `dir` read-only for the lookups, with a
    /// memory pool of `cache` bytes.
    pub fn open(dir: &Path, cache: usize) -> Result<BdbEngine, String> {
        BdbEngine::open_with(dir, false, cache as u64)
    }
}

impl BdbEngine {
    /// Closes the database, writing what the memory pool holds.
    fn close(mut self) -> Result<(), String> {
        let h = std::mem::replace(&mut self.h, std::ptr::null_mut());
        // SAFETY: the handle is open and used by no one else now.
        match unsafe { lb_bdb_close(h) } {
            0 => Ok(()),
            r => Err(err("close", r)),
        }
    }
}

impl Drop for BdbEngine {
    fn drop(&mut self) {
        // SAFETY: the handle is open (or null, which the shim ignores) and
        // used by no one else now.
        unsafe { lb_bdb_close(self.h) };
    }
}

/// Loads the records into a new database in `dir`.
pub fn build(dir: &Path, load: &mut Load) -> Result<(), String> {
    let db = BdbEngine::open_with(dir, true, LOAD_CACHE)?;
    load.for_each(&mut |k, v| {
        // SAFETY: the slices are valid for the call; Berkeley DB copies them.
        let r = unsafe { lb_bdb_put(db.h, k.as_ptr().cast(), k.len(), v.as_ptr().cast(), v.len()) };
        if r == 0 {
            Ok(())
        } else {
            Err(err("put", r))
        }
    })?;
    // SAFETY: the handle is open.
    let r = unsafe { lb_bdb_sync(db.h) };
    if r != 0 {
        return Err(err("sync", r));
    }
    db.close()
}

impl Engine for BdbEngine {
    fn reader(&self) -> Result<Box<dyn Reader + '_>, String> {
        Ok(Box::new(BdbReader {
            db: self,
            buf: vec![0; 4096],
        }))
    }
}

/// One thread's lookups, into a buffer of its own.
struct BdbReader<'e> {
    db: &'e BdbEngine,
    buf: Vec<u8>,
}

impl BdbReader<'_> {
    /// The value of `key`, if present, in the reader's buffer.
    fn lookup(&mut self, key: &[u8]) -> Result<Option<&[u8]>, String> {
        loop {
            let (mut found, mut len) = (0, 0);
            // SAFETY: `key` and `buf` are valid for the call; the shim
            // writes at most `buf.len()` bytes into `buf`.
            let r = unsafe {
                lb_bdb_get(
                    self.db.h,
                    key.as_ptr().cast(),
                    key.len(),
                    self.buf.as_mut_ptr().cast(),
                    self.buf.len(),
                    &mut found,
                    &mut len,
                )
            };
            if r != 0 {
                return Err(err("get", r));
            }
            if found == 0 {
                return Ok(None);
            }
            if len <= self.buf.len() {
                return Ok(Some(&self.buf[..len]));
            }
            self.buf.resize(len, 0);
        }
    }
}

impl Reader for BdbReader<'_> {
    fn get(&mut self, key: &[u8], seen: &mut dyn FnMut(Option<&[u8]>)) -> Result<(), String> {
        seen(self.lookup(key)?);
        Ok(())
    }
}
