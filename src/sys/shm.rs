//! Memory shared between the orchestrator and the children it forks: an anonymous
//! MAP_SHARED mapping, zero-filled by the kernel, so a child can leave its figures where
//! the parent reads them after reaping it, without pipes or parsing.

use crate::model::Usage;
use std::io;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::atomic::Ordering;

/// Types for which all-zero bytes are a valid value and that may be shared across
/// processes: atomics, and arrays or structs of them.
///
/// # Safety
/// The all-zero bit pattern must be a valid value of the type, and it must hold no
/// pointers (the other process's addresses would be meaningless).
pub unsafe trait SharedPlain: Sync {}

// SAFETY: integers and atomics are valid when zero and hold no pointers.
unsafe impl SharedPlain for std::sync::atomic::AtomicU32 {}
unsafe impl SharedPlain for std::sync::atomic::AtomicU64 {}
unsafe impl SharedPlain for std::sync::atomic::AtomicU8 {}
unsafe impl<T: SharedPlain, const N: usize> SharedPlain for [T; N] {}

/// `len` zeroed values of `T` in a shared anonymous mapping, unmapped on drop. A forked
/// child sees the same pages, so a store in one process is visible in the other.
pub struct SharedSlice<T: SharedPlain> {
    ptr: *mut T,
    len: usize,
    bytes: usize,
    _owns: PhantomData<T>,
}

// SAFETY: the mapping is plain shared memory; `T: Sync` governs concurrent access.
unsafe impl<T: SharedPlain> Send for SharedSlice<T> {}
unsafe impl<T: SharedPlain> Sync for SharedSlice<T> {}

impl<T: SharedPlain> SharedSlice<T> {
    pub fn new(len: usize) -> io::Result<Self> {
        let bytes = (std::mem::size_of::<T>() * len.max(1)).max(1);
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(SharedSlice { ptr: ptr.cast(), len, bytes, _owns: PhantomData })
    }
}

impl<T: SharedPlain> Deref for SharedSlice<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the mapping holds `len` zero-initialised (hence valid) `T`s.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: SharedPlain> Drop for SharedSlice<T> {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mmap gave us.
        unsafe { libc::munmap(self.ptr.cast(), self.bytes) };
    }
}

/// Words per child slot in a [`UsageBoard`]: two usage snapshots and a few extras.
const SLOT_WORDS: usize = 40;

/// Per-child figures in shared memory: two [`Usage`] snapshots (`Snapshot::Start` and
/// `Snapshot::End`) and a few extra words, each child writing only its own slot.
pub struct UsageBoard {
    slots: SharedSlice<[std::sync::atomic::AtomicU64; SLOT_WORDS]>,
}

#[derive(Clone, Copy, Debug)]
pub enum Snapshot {
    Start,
    End,
}

impl UsageBoard {
    /// Extra words per slot, after the two snapshots.
    pub const EXTRA_WORDS: usize = SLOT_WORDS - 2 * Usage::FIELDS;

    pub fn new(children: usize) -> io::Result<UsageBoard> {
        Ok(UsageBoard { slots: SharedSlice::new(children)? })
    }

    fn offset(which: Snapshot) -> usize {
        match which {
            Snapshot::Start => 0,
            Snapshot::End => Usage::FIELDS,
        }
    }

    pub fn store_usage(&self, child: usize, which: Snapshot, usage: &Usage) {
        let base = Self::offset(which);
        for (i, v) in usage.to_array().into_iter().enumerate() {
            self.slots[child][base + i].store(v, Ordering::Relaxed);
        }
    }

    pub fn load_usage(&self, child: usize, which: Snapshot) -> Usage {
        let base = Self::offset(which);
        let mut a = [0u64; Usage::FIELDS];
        for (i, v) in a.iter_mut().enumerate() {
            *v = self.slots[child][base + i].load(Ordering::Relaxed);
        }
        Usage::from_array(a)
    }

    pub fn store_extra(&self, child: usize, word: usize, value: u64) {
        assert!(word < Self::EXTRA_WORDS);
        self.slots[child][2 * Usage::FIELDS + word].store(value, Ordering::Relaxed);
    }

    pub fn load_extra(&self, child: usize, word: usize) -> u64 {
        assert!(word < Self::EXTRA_WORDS);
        self.slots[child][2 * Usage::FIELDS + word].load(Ordering::Relaxed)
    }
}
