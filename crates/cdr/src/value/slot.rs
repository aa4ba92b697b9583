//! [`ValueSlot`], a value-typed member: a [`ValueRef`] that may be null
//! and that can be filled once through a shared reference.
//!
//! A slot has the size of a `ValueRef` (two words for a sized type): the
//! block pointer says whether the slot is null, being filled, or holds a
//! value, so no lock or separate cell is needed. Size matters here: a
//! slot sits in every node of a decoded graph and in every element of a
//! sequence of values, and a 40-octet slot (an `Option<ValueRef>` beside
//! a `OnceLock<ValueRef>`) made a 1,000-node graph decode a tenth slower
//! than this one (docs/PERFORMANCE.md).

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, Ordering};

use super::vref::{Block, ValueRef};

/// A value-typed member: null or a shared reference to a value.
///
/// It can be filled once through a shared reference ([`ValueSlot::set`]),
/// which is how a graph closes a cycle after its nodes exist (and how
/// the decoder completes a member that points back to a value still being
/// read); through `&mut` it can be changed freely. No allocation beyond
/// the value itself, and no larger than a [`ValueRef`].
// Laid out as a `ValueRef` (both `repr(C)`, the value's address first,
// then the block) so that a full slot is read in place as one.
#[repr(C)]
pub struct ValueSlot<T: ?Sized> {
    /// The value's address: initialized whenever `block` holds a block.
    ptr: UnsafeCell<MaybeUninit<NonNull<T>>>,
    /// Null, [`filling`], or the value's block (one counted reference).
    block: AtomicPtr<Block>,
    _owns: PhantomData<ValueRef<T>>,
}

/// The block pointer of a slot that [`ValueSlot::set`] is filling: not
/// null, and no block's address (the lowest aligned address, where no
/// allocation lies).
#[inline(always)]
fn filling() -> *mut Block {
    NonNull::<Block>::dangling().as_ptr()
}

/// Whether `block` is a block's address (not null, not [`filling`]).
#[inline(always)]
fn holds(block: *mut Block) -> bool {
    block as usize > core::mem::align_of::<Block>()
}

// SAFETY: a slot holds a `ValueRef<T>` (or nothing); it is `Send` and
// `Sync` when that is. Filling through `&self` is synchronized by the
// block pointer's compare-exchange and release store.
unsafe impl<T: ?Sized + Send + Sync> Send for ValueSlot<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync> Sync for ValueSlot<T> {}

impl<T: ?Sized> ValueSlot<T> {
    /// A null member.
    pub const fn null() -> Self {
        Self {
            ptr: UnsafeCell::new(MaybeUninit::uninit()),
            block: AtomicPtr::new(core::ptr::null_mut()),
            _owns: PhantomData,
        }
    }

    /// A member holding `v`.
    pub fn new(v: ValueRef<T>) -> Self {
        let (ptr, block) = ValueRef::forget(v);
        Self {
            ptr: UnsafeCell::new(MaybeUninit::new(ptr)),
            block: AtomicPtr::new(block.as_ptr()),
            _owns: PhantomData,
        }
    }

    /// The value, or `None` for null.
    #[inline]
    pub fn get(&self) -> Option<&ValueRef<T>> {
        const {
            assert!(core::mem::size_of::<Self>() == core::mem::size_of::<ValueRef<T>>());
            assert!(core::mem::align_of::<Self>() == core::mem::align_of::<ValueRef<T>>());
        }
        // Acquire: pairs with the release in `set`, after which `ptr` is
        // written.
        if !holds(self.block.load(Ordering::Acquire)) {
            return None;
        }
        // SAFETY: the slot holds a value: `ptr` and `block` are set and
        // stay as they are while `self` is borrowed (only `&mut self`
        // changes a full slot), and a full slot has the layout of a
        // `ValueRef<T>` (both `repr(C)`: the address, then the block; the
        // sizes and alignments checked above).
        Some(unsafe { &*(self as *const Self).cast::<ValueRef<T>>() })
    }

    /// Fills a null member; gives `v` back if it already holds a value.
    pub fn set(&self, v: ValueRef<T>) -> core::result::Result<(), ValueRef<T>> {
        // Claim the slot; a concurrent `get` sees it null until the
        // release below.
        if self
            .block
            .compare_exchange(
                core::ptr::null_mut(),
                filling(),
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return Err(v);
        }
        let (ptr, block) = ValueRef::forget(v);
        // SAFETY: claimed above: no other thread writes `ptr`, and none
        // reads it until the block is published.
        unsafe { (*self.ptr.get()).write(ptr) };
        self.block.store(block.as_ptr(), Ordering::Release);
        Ok(())
    }

    /// Replaces the value (through exclusive access).
    pub fn replace(&mut self, v: Option<ValueRef<T>>) -> Option<ValueRef<T>> {
        let old = self.take();
        // The slot is null now: nothing to drop in its place.
        *self = Self::from(v);
        old
    }

    /// Takes the value out, leaving the slot null.
    fn take(&mut self) -> Option<ValueRef<T>> {
        let block = core::mem::replace(self.block.get_mut(), core::ptr::null_mut());
        if !holds(block) {
            return None;
        }
        // SAFETY: the slot held a value (so `ptr` is initialized) and
        // gives up its reference, now the caller's; the slot is null.
        unsafe {
            Some(ValueRef::from_parts(
                self.ptr.get_mut().assume_init(),
                NonNull::new_unchecked(block),
            ))
        }
    }

    /// True for null.
    pub fn is_null(&self) -> bool {
        self.get().is_none()
    }
}

impl<T: ?Sized> Drop for ValueSlot<T> {
    #[inline]
    fn drop(&mut self) {
        drop(self.take());
    }
}

impl<T: ?Sized> Default for ValueSlot<T> {
    fn default() -> Self {
        Self::null()
    }
}

impl<T: ?Sized> Clone for ValueSlot<T> {
    /// Shares the value (a shallow copy, as for any value reference).
    fn clone(&self) -> Self {
        match self.get() {
            Some(v) => Self::new(v.clone()),
            None => Self::null(),
        }
    }
}

impl<T: ?Sized> From<ValueRef<T>> for ValueSlot<T> {
    fn from(v: ValueRef<T>) -> Self {
        Self::new(v)
    }
}

impl<T: ?Sized> From<Option<ValueRef<T>>> for ValueSlot<T> {
    fn from(v: Option<ValueRef<T>>) -> Self {
        v.map_or_else(Self::null, Self::new)
    }
}

impl<T: ?Sized> core::fmt::Debug for ValueSlot<T> {
    /// The address only: a graph may have cycles.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.get() {
            Some(v) => write!(f, "ValueSlot({:p})", ValueRef::as_ptr(v)),
            None => f.write_str("ValueSlot(null)"),
        }
    }
}

impl<T: ?Sized> PartialEq for ValueSlot<T> {
    /// Identity: the same value (or both null).
    fn eq(&self, other: &Self) -> bool {
        match (self.get(), other.get()) {
            (Some(a), Some(b)) => ValueRef::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::vref::tests::Counted;
    use alloc::string::String;
    use alloc::sync::Arc;
    use core::sync::atomic::AtomicUsize;

    #[test]
    fn no_larger_than_a_reference() {
        assert_eq!(
            core::mem::size_of::<ValueSlot<String>>(),
            core::mem::size_of::<ValueRef<String>>()
        );
        assert_eq!(
            core::mem::size_of::<ValueSlot<dyn core::any::Any + Send + Sync>>(),
            core::mem::size_of::<ValueRef<dyn core::any::Any + Send + Sync>>()
        );
    }

    #[test]
    fn filled_once_through_a_shared_reference() {
        let s = ValueSlot::<String>::null();
        assert!(s.is_null());
        let a = ValueRef::new(String::from("a"));
        s.set(a.clone()).unwrap();
        assert!(ValueRef::ptr_eq(s.get().unwrap(), &a));
        let b = s.set(ValueRef::new(String::from("b"))).unwrap_err();
        assert_eq!(&*b, "b");
        assert_eq!(&**s.get().unwrap(), "a");
        // A slot made full refuses too.
        let full = ValueSlot::new(a.clone());
        assert!(full.set(b).is_err());
    }

    #[test]
    fn replace_take_and_drop_release_the_value() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut s = ValueSlot::new(ValueRef::new(Counted(drops.clone())));
        let old = s.replace(Some(ValueRef::new(Counted(drops.clone()))));
        assert!(old.is_some());
        drop(old);
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        assert!(s.replace(None).is_some());
        assert_eq!(drops.load(Ordering::Relaxed), 2);
        assert!(s.is_null());
        s.set(ValueRef::new(Counted(drops.clone()))).ok().unwrap();
        let c = s.clone();
        drop(s);
        assert_eq!(drops.load(Ordering::Relaxed), 2);
        drop(c);
        assert_eq!(drops.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn trait_object_slots() {
        let s: ValueSlot<dyn core::any::Any + Send + Sync> = ValueSlot::null();
        s.set(ValueRef::into_any(ValueRef::new(7u32))).ok().unwrap();
        assert_eq!(s.get().unwrap().downcast_ref::<u32>(), Some(&7));
    }

    #[test]
    fn one_of_racing_fillers_wins() {
        let drops = Arc::new(AtomicUsize::new(0));
        let s = Arc::new(ValueSlot::<Counted>::null());
        let won = Arc::new(AtomicUsize::new(0));
        let handles: alloc::vec::Vec<_> = (0..4)
            .map(|_| {
                let (s, won, drops) = (s.clone(), won.clone(), drops.clone());
                std::thread::spawn(move || {
                    if s.set(ValueRef::new(Counted(drops.clone()))).is_ok() {
                        won.fetch_add(1, Ordering::Relaxed);
                    }
                    // Whoever reads after filling sees the whole value.
                    let v = s.get().expect("filled by this thread or another");
                    assert!(Arc::ptr_eq(&v.0, &drops));
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(won.load(Ordering::Relaxed), 1);
        // The losers' values were given back and dropped.
        assert_eq!(drops.load(Ordering::Relaxed), 3);
        drop(s);
        assert_eq!(drops.load(Ordering::Relaxed), 4);
    }
}
