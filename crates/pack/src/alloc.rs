//! The script's memory cap, kept by its allocator.
//!
//! QuickJS answers a refused allocation by throwing `InternalError: out of
//! memory`, which a script can also throw itself. So the cap is kept here, not
//! by `JS_SetMemoryLimit`: [`Capped`] counts the bytes the runtime holds,
//! refuses a request that would go over the limit, and records that it did.
//! [`crate::sandbox`] reads that record to report `OutOfMemory`; no error is
//! recognised by its message.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rquickjs::allocator::{Allocator, RustAllocator};

/// Rust's allocator with a byte limit; `refused` is set once a request went over it.
pub(crate) struct Capped {
    used: usize,
    limit: usize,
    refused: Arc<AtomicBool>,
}

impl Capped {
    /// An allocator that holds at most `limit` bytes, and the flag it sets when it refuses one.
    pub(crate) fn new(limit: usize) -> (Capped, Arc<AtomicBool>) {
        let refused = Arc::new(AtomicBool::new(false));
        (Capped { used: 0, limit, refused: refused.clone() }, refused)
    }

    /// Whether `more` bytes fit beside what is held; records a refusal.
    fn admit(&mut self, more: usize) -> bool {
        let fits = self.used.checked_add(more).is_some_and(|total| total <= self.limit);
        if !fits {
            self.refused.store(true, Ordering::SeqCst);
        }
        fits
    }
}

// SAFETY: every pointer handed out comes from `RustAllocator`, which meets the
// trait's contract; `Capped` only refuses requests (returning null) and counts
// the usable size of what it hands out and takes back.
unsafe impl Allocator for Capped {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admit(size) {
            return std::ptr::null_mut();
        }
        let p = RustAllocator.alloc(size);
        if !p.is_null() {
            // SAFETY: `p` was just allocated by RustAllocator.
            self.used += unsafe { RustAllocator::usable_size(p) };
        }
        p
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else { return std::ptr::null_mut() };
        if !self.admit(total) {
            return std::ptr::null_mut();
        }
        let p = RustAllocator.calloc(count, size);
        if !p.is_null() {
            // SAFETY: `p` was just allocated by RustAllocator.
            self.used += unsafe { RustAllocator::usable_size(p) };
        }
        p
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        // SAFETY: the caller hands back a pointer this allocator (RustAllocator) gave out.
        unsafe {
            self.used = self.used.saturating_sub(RustAllocator::usable_size(ptr));
            RustAllocator.dealloc(ptr)
        }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        // SAFETY: `ptr` was given out by this allocator (RustAllocator); `p` is its successor.
        unsafe {
            let old = RustAllocator::usable_size(ptr);
            if new_size > old && !self.admit(new_size - old) {
                return std::ptr::null_mut();
            }
            let p = RustAllocator.realloc(ptr, new_size);
            if !p.is_null() {
                self.used = self.used.saturating_sub(old) + RustAllocator::usable_size(p);
            }
            p
        }
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: the caller's pointer came from this allocator (RustAllocator).
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rquickjs::{CatchResultExt, Context, Runtime};

    fn run(limit: usize, source: &str) -> (bool, Arc<AtomicBool>) {
        let (capped, refused) = Capped::new(limit);
        let rt = Runtime::new_with_alloc(capped).unwrap();
        let ctx = Context::full(&rt).unwrap();
        let ok = ctx.with(|ctx| ctx.eval::<rquickjs::Value, _>(source).catch(&ctx).is_ok());
        (ok, refused)
    }

    #[test]
    fn a_script_over_the_cap_is_refused_and_the_refusal_is_recorded() {
        let (ok, refused) = run(16 << 20, "let a = []; for (;;) a.push('x'.repeat(1 << 16) + a.length);");
        assert!(!ok);
        assert!(refused.load(Ordering::SeqCst));
    }

    #[test]
    fn a_script_that_throws_the_words_is_not_out_of_memory() {
        let (ok, refused) = run(16 << 20, "throw new InternalError('out of memory')");
        assert!(!ok);
        assert!(!refused.load(Ordering::SeqCst));
        let (ok, refused) = run(16 << 20, "let s = 'x'.repeat(1 << 20); s.length");
        assert!(ok);
        assert!(!refused.load(Ordering::SeqCst));
    }
}
