//! [`ValueRef`], the shared reference to a value that the mapping of
//! valuetypes uses where `Arc` would stand.
//!
//! A value lives in a *block* that counts the references to it. A value
//! made with [`ValueRef::new`] is a block of one, as an `Arc` is. The
//! values a reader decodes from one message share one block (see
//! `arena.rs`): the references between them are not counted, only the
//! references the application holds, so decoding a graph takes no
//! atomic operation per node, and a graph with cycles is freed with its
//! block. Keeping one value of such a graph keeps the whole block.
//!
//! This module, `slot.rs` and `arena.rs` hold the crate's value-memory
//! `unsafe` code; everything else uses the safe API below.

use alloc::boxed::Box;
use core::any::Any;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use core::sync::atomic::{fence, AtomicUsize, Ordering};

/// References past this many are refused (as `Arc` does): the count
/// cannot wrap around, whatever the application leaks.
const MAX_REFS: usize = isize::MAX as usize;

/// What a reader adds to the count of a value it makes
/// ([`Reader::new_value`](crate::Reader::new_value)): the references it
/// hands out are taken from this stake without touching the count, and
/// it gives back the rest when it ends. Larger than the references any
/// input can ask for (at most one per eight octets), smaller than
/// `MAX_REFS` by as much again.
pub(crate) const STAKE: usize = MAX_REFS / 2;

/// A block's count while it frees its values: references between its own
/// values, dropped with them, see it and do nothing.
pub(crate) const FREEING: usize = usize::MAX;

/// The head of every block of values.
pub(crate) struct Block {
    /// References to the block's values held outside it, plus a reader's
    /// stake while one is still decoding into it.
    pub(crate) count: AtomicUsize,
    /// Drops the block's values and frees its memory; called once, by the
    /// release that took `count` to zero.
    pub(crate) free: unsafe fn(NonNull<Block>),
}

impl Block {
    /// Gives up `n` counted references; frees the block if they were the
    /// last.
    ///
    /// # Safety
    /// `block` is live and the caller holds `n` of its counted references,
    /// none of which it uses after.
    pub(crate) unsafe fn release(block: NonNull<Block>, n: usize) {
        // SAFETY: live while the caller's references are (the contract).
        let b = unsafe { block.as_ref() };
        let before = b.count.load(Ordering::Relaxed);
        if before == FREEING {
            // A reference between values of a block being freed.
            return;
        }
        if b.count.fetch_sub(n, Ordering::Release) != n {
            return;
        }
        // Everything other holders did with the values happens before
        // they are dropped.
        fence(Ordering::Acquire);
        b.count.store(FREEING, Ordering::Relaxed);
        // SAFETY: the count reached zero: nobody else refers to the block.
        unsafe { (b.free)(block) }
    }
}

/// A block of one value.
#[repr(C)]
struct Single<T> {
    block: Block,
    value: T,
}

/// `Block::free` of a `Single<T>`.
///
/// # Safety
/// `block` is the head of a `Single<T>` made by [`ValueRef::new`], with
/// no reference left.
unsafe fn free_single<T>(block: NonNull<Block>) {
    // SAFETY: `Single` is `repr(C)` with the block first, allocated as a
    // `Box` (the contract).
    drop(unsafe { Box::from_raw(block.as_ptr().cast::<Single<T>>()) });
}

/// A shared, immutable reference to a value (a valuetype's or a value
/// box's Rust type, or `dyn Any` for [`AnyValue`](crate::AnyValue)): the
/// mapping's counterpart of C++'s `_var` and Java's object reference.
///
/// It behaves as an `Arc`: `clone` shares, the value is dropped with the
/// last reference, [`ValueRef::ptr_eq`] tells identity. The difference is
/// where values live: those decoded from one message share one block,
/// counted once (see the module doc).
// `repr(C)`: `ValueSlot` has this layout, and a full slot is read in
// place as a `ValueRef` (see `slot.rs`).
#[repr(C)]
pub struct ValueRef<T: ?Sized> {
    ptr: NonNull<T>,
    block: NonNull<Block>,
    _owns: PhantomData<T>,
}

// SAFETY: as for `Arc<T>`: the value is shared between threads (`Sync`)
// and dropped by whichever thread lets go last (`Send`); the block's
// count is atomic.
unsafe impl<T: ?Sized + Send + Sync> Send for ValueRef<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync> Sync for ValueRef<T> {}

impl<T> ValueRef<T> {
    /// A value of its own: a block of one, freed with its last reference.
    pub fn new(value: T) -> Self {
        Self::with_count(value, 1)
    }

    /// A block of one whose count starts at `count` (this reference and
    /// `count - 1` held otherwise).
    pub(crate) fn with_count(value: T, count: usize) -> Self {
        let single = Box::new(Single {
            block: Block {
                count: AtomicUsize::new(count),
                free: free_single::<T>,
            },
            value,
        });
        let single = NonNull::from(Box::leak(single));
        // SAFETY: the two fields of a live allocation.
        unsafe {
            Self::from_parts(
                NonNull::new_unchecked(core::ptr::addr_of_mut!((*single.as_ptr()).value)),
                single.cast(),
            )
        }
    }
}

impl<T: ?Sized> ValueRef<T> {
    /// A reference made of its parts, taking over one counted reference
    /// to `block` (or one the caller accounts for otherwise).
    ///
    /// # Safety
    /// `ptr` is valid for as long as `block` is live.
    pub(crate) unsafe fn from_parts(ptr: NonNull<T>, block: NonNull<Block>) -> Self {
        Self {
            ptr,
            block,
            _owns: PhantomData,
        }
    }

    /// The block the value lives in.
    pub(crate) fn block(this: &Self) -> NonNull<Block> {
        this.block
    }

    /// The block's count (references held outside it, plus a reader's
    /// stake).
    #[cfg(test)]
    pub(crate) fn strong_count(this: &Self) -> usize {
        // SAFETY: live while `this` is.
        unsafe { this.block.as_ref() }.count.load(Ordering::Relaxed)
    }

    /// Gives up the reference without releasing it (the caller accounts
    /// for it).
    pub(crate) fn forget(this: Self) -> (NonNull<T>, NonNull<Block>) {
        let this = ManuallyDrop::new(this);
        (this.ptr, this.block)
    }

    /// True if both refer to the same value (the same address; a value
    /// box of a zero-sized type aside, the same value).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        core::ptr::addr_eq(a.ptr.as_ptr(), b.ptr.as_ptr())
    }

    /// The value's address.
    pub fn as_ptr(this: &Self) -> *const T {
        this.ptr.as_ptr()
    }

    /// A reference to a part of the value, or to the value as a trait
    /// object (`ValueRef::map(v, |v| v as &dyn Shape)`), that keeps the
    /// whole value alive.
    pub fn map<U: ?Sized>(this: Self, f: impl FnOnce(&T) -> &U) -> ValueRef<U> {
        // The result borrows from the value (or is `'static`): valid for
        // as long as the block, which `this`'s count keeps.
        let ptr = NonNull::from(f(&this));
        let (_, block) = Self::forget(this);
        // SAFETY: see above; the count moves over from `this`.
        unsafe { ValueRef::from_parts(ptr, block) }
    }
}

impl<T: Any + Send + Sync> ValueRef<T> {
    /// The value type-erased, as an indirection hands it out.
    pub fn into_any(this: Self) -> ValueRef<dyn Any + Send + Sync> {
        this.upcast()
    }
}

/// A trait object type a `T` can be seen as (`dyn Shape` for a type
/// implementing an abstract valuetype's trait): what
/// [`ValueRef::upcast`] needs. Generated code implements it for each
/// abstract valuetype's trait, this crate for `dyn Any + Send + Sync` and
/// `dyn ValueObject`; it stands in for the unsizing coercion that
/// `Arc<T>` has and a crate's own pointer cannot have on stable Rust.
pub trait Upcast<T> {
    /// `v` seen as `Self`.
    fn upcast(v: &T) -> &Self;
}

impl<T: Any + Send + Sync> Upcast<T> for dyn Any + Send + Sync {
    fn upcast(v: &T) -> &Self {
        v
    }
}

impl<T> ValueRef<T> {
    /// The reference as one to a trait object type the value implements:
    /// `let s: ValueRef<dyn Shape> = ValueRef::new(Circle(2)).upcast();`
    pub fn upcast<U: ?Sized + Upcast<T>>(self) -> ValueRef<U> {
        ValueRef::map(self, U::upcast)
    }
}

impl ValueRef<dyn Any + Send + Sync> {
    /// The value as a `T`, or itself back if it is not one.
    pub fn downcast<T: Any + Send + Sync>(self) -> Result<ValueRef<T>, Self> {
        if !(*self).is::<T>() {
            return Err(self);
        }
        let (ptr, block) = Self::forget(self);
        // SAFETY: the value is a `T` (checked above); the count moves over.
        Ok(unsafe { ValueRef::from_parts(ptr.cast::<T>(), block) })
    }
}

impl<T: ?Sized> Clone for ValueRef<T> {
    #[inline]
    fn clone(&self) -> Self {
        // SAFETY: live while `self` is.
        let b = unsafe { self.block.as_ref() };
        // Relaxed as for `Arc`: a new reference is made from one held.
        if b.count.fetch_add(1, Ordering::Relaxed) > MAX_REFS {
            too_many_refs();
        }
        // SAFETY: the count taken above.
        unsafe { Self::from_parts(self.ptr, self.block) }
    }
}

#[cold]
fn too_many_refs() -> ! {
    panic!("more than {MAX_REFS} references to one block of values");
}

impl<T: ?Sized> Drop for ValueRef<T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: one counted reference, given up here.
        unsafe { Block::release(self.block, 1) }
    }
}

impl<T: ?Sized> core::ops::Deref for ValueRef<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: valid while the block is, which `self` keeps live; never
        // handed out mutably.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: ?Sized> AsRef<T> for ValueRef<T> {
    fn as_ref(&self) -> &T {
        self
    }
}

impl<T: ?Sized> core::borrow::Borrow<T> for ValueRef<T> {
    fn borrow(&self) -> &T {
        self
    }
}

impl<T> From<T> for ValueRef<T> {
    fn from(v: T) -> Self {
        Self::new(v)
    }
}

impl<T: ?Sized + core::fmt::Debug> core::fmt::Debug for ValueRef<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: ?Sized + core::fmt::Display> core::fmt::Display for ValueRef<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: ?Sized + PartialEq> PartialEq for ValueRef<T> {
    /// The values compared (as for `Arc`); [`ValueRef::ptr_eq`] compares
    /// identity.
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: ?Sized + Eq> Eq for ValueRef<T> {}

impl<T: ?Sized + core::hash::Hash> core::hash::Hash for ValueRef<T> {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use alloc::string::String;
    use alloc::sync::Arc;
    use core::sync::atomic::AtomicUsize;

    /// Counts its drops (in the counter it shares).
    pub(crate) struct Counted(pub(crate) Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn dropped_with_the_last_reference() {
        let drops = Arc::new(AtomicUsize::new(0));
        let a = ValueRef::new(Counted(drops.clone()));
        let b = a.clone();
        assert!(ValueRef::ptr_eq(&a, &b));
        drop(a);
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        drop(b);
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn downcast_checks_the_type_and_keeps_the_value() {
        let drops = Arc::new(AtomicUsize::new(0));
        let any = ValueRef::into_any(ValueRef::new(Counted(drops.clone())));
        let any = any.downcast::<String>().unwrap_err();
        let back = any.downcast::<Counted>().ok().unwrap();
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        drop(back);
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_mapped_reference_keeps_the_whole_value() {
        let drops = Arc::new(AtomicUsize::new(0));
        let pair = ValueRef::new((Counted(drops.clone()), String::from("x")));
        let s = ValueRef::map(pair, |p| &p.1);
        assert_eq!(&*s, "x");
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        drop(s);
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn shared_across_threads() {
        let drops = Arc::new(AtomicUsize::new(0));
        let v = ValueRef::new(Counted(drops.clone()));
        let handles: alloc::vec::Vec<_> = (0..4)
            .map(|_| {
                let v = v.clone();
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        drop(v.clone());
                    }
                })
            })
            .collect();
        drop(v);
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    }
}
