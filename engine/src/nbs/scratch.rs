//! Scratch arrays for `interior.rs`, reused across its iterations instead of allocated anew.
//!
//! An iteration makes ~50 arrays of jobs x slots (~0.4 MB each on a GCD cell). Freshly
//! allocated, each is a new mapping from the system (the binary's allocator returns freed
//! memory at once, `src/allocator.rs`), and faulting its pages in took a fifth of a solve
//! (`bench-results/nbs-per-job-2026-11-28.md`). A [`Buf`] dropped goes to its thread's free
//! list; the next one taken reuses a free array at least as large. [`release`] empties the
//! list (a solve's end), so nothing is held between solves.
//!
//! Invariants: a `Buf<T>` stores `T`s as their `f64` components (`T` is `f64` or an array of
//! them: same alignment, size a multiple), so one free list serves every element type; taking
//! and giving back never changes a value computed with the arrays.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use bytemuck::Pod;

/// Free arrays kept per thread at most (an iteration has ~50 alive at once).
const MAX_FREE: usize = 128;
/// `f64`s in the smallest array kept (smaller ones, per slot, are cheap to allocate).
const SMALLEST: usize = 1024;

thread_local! {
    static FREE: RefCell<Vec<Vec<f64>>> = const { RefCell::new(Vec::new()) };
}

/// An array of `T` whose storage comes from, and returns to, the thread's free list.
pub(super) struct Buf<T: Pod> {
    data: Vec<f64>,
    element: PhantomData<T>,
}

impl<T: Pod> Buf<T> {
    /// `f64`s per element.
    const WIDTH: usize = {
        assert!(size_of::<T>().is_multiple_of(size_of::<f64>()) && size_of::<T>() > 0);
        assert!(align_of::<T>() == align_of::<f64>());
        size_of::<T>() / size_of::<f64>()
    };

    /// An empty array able to hold `len` elements without growing.
    fn with_capacity(len: usize) -> Buf<T> {
        let want = len * Self::WIDTH;
        let taken = (want >= SMALLEST).then(|| {
            FREE.try_with(|free| {
                let mut free = free.borrow_mut();
                // The smallest that fits, so a small array does not take a large one.
                let fit = (free.iter().enumerate())
                    .filter(|(_, v)| v.capacity() >= want)
                    .min_by_key(|(_, v)| v.capacity())
                    .map(|(at, _)| at);
                fit.map(|at| free.swap_remove(at))
            })
        });
        let mut data = taken.and_then(|t| t.ok().flatten()).unwrap_or_default();
        data.clear();
        data.reserve(want);
        Buf {
            data,
            element: PhantomData,
        }
    }

    /// `len` copies of `value`.
    pub(super) fn filled(len: usize, value: T) -> Buf<T> {
        let mut b = Buf::with_capacity(len);
        for _ in 0..len {
            b.push(value);
        }
        b
    }

    fn push(&mut self, value: T) {
        self.data
            .extend_from_slice(bytemuck::cast_slice(std::slice::from_ref(&value)));
    }
}

impl Buf<f64> {
    /// `len` zeros.
    pub(super) fn zeros(len: usize) -> Buf<f64> {
        let mut b = Buf::with_capacity(len);
        b.data.resize(len, 0.0);
        b
    }
}

impl<T: Pod> Default for Buf<T> {
    fn default() -> Buf<T> {
        Buf {
            data: Vec::new(),
            element: PhantomData,
        }
    }
}

impl<T: Pod> Deref for Buf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        bytemuck::cast_slice(&self.data)
    }
}

impl<T: Pod> DerefMut for Buf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        bytemuck::cast_slice_mut(&mut self.data)
    }
}

impl<'a, T: Pod> IntoIterator for &'a Buf<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: Pod> Clone for Buf<T> {
    fn clone(&self) -> Buf<T> {
        let mut b = Buf::with_capacity(self.len());
        b.data.extend_from_slice(&self.data);
        b
    }
}

impl<T: Pod> FromIterator<T> for Buf<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Buf<T> {
        let iter = iter.into_iter();
        let mut b = Buf::with_capacity(iter.size_hint().0);
        iter.for_each(|v| b.push(v));
        b
    }
}

impl<T: Pod> Drop for Buf<T> {
    fn drop(&mut self) {
        if self.data.capacity() < SMALLEST {
            return;
        }
        let data = std::mem::take(&mut self.data);
        // A thread ending drops its list; an array dropped then is simply freed.
        let _ = FREE.try_with(|free| {
            let mut free = free.borrow_mut();
            if free.len() < MAX_FREE {
                free.push(data);
            }
        });
    }
}

/// Frees the thread's free arrays.
pub(super) fn release() {
    let _ = FREE.try_with(|free| free.borrow_mut().clear());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An array given back is the next one taken (same storage), with the values asked for;
    /// arrays of triples share the list with plain ones; `release` empties it.
    #[test]
    fn arrays_are_reused_with_fresh_values() {
        release();
        let (a, large) = (Buf::<f64>::filled(5000, 7.0), Buf::<f64>::zeros(20_000));
        let (at, large_at) = (a.as_ptr(), large.as_ptr());
        drop((a, large));
        let b = Buf::<f64>::zeros(4000);
        assert_eq!(b.as_ptr(), at, "the smallest that fits");
        assert_eq!((b.len(), b.iter().sum::<f64>()), (4000, 0.0));
        drop(b);
        let c: Buf<[f64; 3]> = (0..1500).map(|i| [i as f64, 1.0, 2.0]).collect();
        assert_eq!(c.as_ptr() as *const f64, at);
        assert_eq!((c.len(), c[1499]), (1500, [1499.0, 1.0, 2.0]));
        let d = c.clone();
        assert_eq!(d.as_ptr() as *const f64, large_at);
        assert_eq!(&d[..], &c[..]);
        let small = Buf::<f64>::zeros(10);
        drop((c, d, small));
        assert_eq!(FREE.with(|f| f.borrow().len()), 2, "small arrays not kept");
        release();
        assert_eq!(FREE.with(|f| f.borrow().len()), 0);
    }
}
