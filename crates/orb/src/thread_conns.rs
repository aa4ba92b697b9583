//! A per-thread cache of the connections the thread's calls last used,
//! by route, so that the client's lean call path finds its connection
//! without locking the route's `conn` mutex and without counting a
//! reference to it (four atomic read-modify-writes a call: lock, unlock,
//! `Arc` clone and drop).
//!
//! A oneway *takes* its slot's connection out of the cache and puts it
//! back when done with it, so the connection is the call's alone
//! meanwhile: a call made while it is out (from an argument encoder, on
//! the same thread) misses and goes through the route as before. A twoway
//! clones it (its reply keeps the connection until decoded).
//!
//! A slot holds a `Weak` of its route (the route's address is the slot's
//! key and cannot be reused while the `Weak` exists; the route itself is
//! not kept alive, only its allocation) and an `Arc` of the connection.
//! A closed connection is never handed out: a lookup that finds one
//! empties the slot. What a slot can keep alive after its connection
//! closed or its route was dropped (the connection's socket descriptor,
//! already shut down, its buffers, and the route's allocation, ~1.3 KB)
//! is bounded by [`SLOTS`] slots per thread, freed at the thread's next
//! call through that route, when a newer route evicts the slot, or when
//! the thread ends.

use std::cell::Cell;
use std::sync::{Arc, Weak};

use crate::client::{ClientConn, Route};

/// Slots per thread: a thread calling through more routes than this
/// in turn evicts them round robin (and pays the route lock on a miss).
pub(crate) const SLOTS: usize = 4;

/// Where a connection taken out goes back to: its slot, and the slot's
/// key then (a slot evicted meanwhile has another), in one word (the key
/// is a route's address, 8-aligned, so the slot fits in its low bits):
/// a lean call keeps it in `Fast` (see `client::fast_call`).
pub(crate) struct Home(std::num::NonZeroUsize);

const _: () = assert!(SLOTS <= 8 && std::mem::align_of::<Route>() >= 8);

impl Home {
    #[inline(always)]
    fn new(slot: usize, key: usize) -> Home {
        // A key is a non-null address.
        Home(std::num::NonZeroUsize::new(key | slot).unwrap_or(std::num::NonZeroUsize::MIN))
    }

    #[inline(always)]
    fn slot(&self) -> usize {
        self.0.get() & 7
    }

    #[inline(always)]
    fn key(&self) -> usize {
        self.0.get() & !7
    }
}

struct Slots {
    /// The address of each slot's route (0: none).
    keys: [Cell<usize>; SLOTS],
    /// Each slot's route, keeping the key's address from being reused.
    routes: [Cell<Option<Weak<Route>>>; SLOTS],
    /// Each slot's connection (`None` while a oneway has it out). One
    /// pointer: putting it back is one store, where a whole entry moved
    /// through the stack cost a store-forwarding stall.
    conns: [Cell<Option<Arc<ClientConn>>>; SLOTS],
    /// The slot a new route evicts next.
    next: Cell<usize>,
}

thread_local! {
    static CACHE: Slots = const {
        Slots {
            keys: [const { Cell::new(0) }; SLOTS],
            routes: [const { Cell::new(None) }; SLOTS],
            conns: [const { Cell::new(None) }; SLOTS],
            next: Cell::new(0),
        }
    };
}

/// The slot of `key` in `s`.
#[inline(always)]
fn find(s: &Slots, key: usize) -> Option<usize> {
    s.keys.iter().position(|k| k.get() == key)
}

/// Takes `route`'s connection, if this thread has one cached, not in use,
/// open.
#[inline(always)]
pub(crate) fn take(route: &Arc<Route>) -> Option<(Arc<ClientConn>, Home)> {
    let key = Arc::as_ptr(route) as usize;
    let (conn, slot) = CACHE
        .try_with(|s| {
            let i = find(s, key)?;
            Some((s.conns[i].take()?, i))
        })
        .ok()
        .flatten()?;
    let home = Home::new(slot, key);
    if conn.is_closed() {
        drop_closed(conn, home);
        return None;
    }
    Some((conn, home))
}

/// A clone of `route`'s connection, if this thread has one cached, not
/// in use, open: for a twoway, whose reply keeps the connection (a count,
/// where a connection taken out would have to come back from the reply's
/// release).
#[inline(always)]
pub(crate) fn cloned(route: &Arc<Route>) -> Option<Arc<ClientConn>> {
    let key = Arc::as_ptr(route) as usize;
    let conn = CACHE
        .try_with(|s| {
            let i = find(s, key)?;
            let found = s.conns[i].take()?;
            if found.is_closed() {
                return Some(Err((found, i)));
            }
            let conn = found.clone();
            // The slot was emptied just above: nothing is dropped (and no
            // drop glue makes the access a call).
            std::mem::forget(s.conns[i].replace(Some(found)));
            Some(Ok(conn))
        })
        .ok()
        .flatten()?;
    match conn {
        Ok(c) => Some(c),
        Err((closed, slot)) => {
            drop_closed(closed, Home::new(slot, key));
            None
        }
    }
}

/// Puts a connection taken with [`take`] back. A closed one is dropped
/// instead (its slot emptied).
#[inline(always)]
pub(crate) fn put(conn: Arc<ClientConn>, home: Home) {
    if conn.is_closed() {
        drop_closed(conn, home);
        return;
    }
    // The closure borrows the connection rather than owning it: one that
    // owned it would drop it when the thread-local is gone, and with that
    // drop glue the thread-local access was a call (~40 instructions).
    let mut conn = Some(conn);
    let displaced = CACHE
        .try_with(
            |s| match (s.keys.get(home.slot()), s.conns.get(home.slot())) {
                (Some(k), Some(c)) if k.get() == home.key() => c.replace(conn.take()),
                _ => None,
            },
        )
        .ok()
        .flatten();
    // Another connection in the slot (a call made while this one was out
    // cached its own), or the slot evicted meanwhile (the next miss
    // caches again): dropped.
    if displaced.is_some() || conn.is_some() {
        drop_conns(displaced, conn);
    }
}

/// Drops connections displaced from the cache (rare; out of line).
#[cold]
#[inline(never)]
fn drop_conns(a: Option<Arc<ClientConn>>, b: Option<Arc<ClientConn>>) {
    drop((a, b));
}

/// Drops a closed connection and empties its slot (rare; out of line).
#[cold]
#[inline(never)]
fn drop_closed(conn: Arc<ClientConn>, home: Home) {
    let route = CACHE
        .try_with(|s| {
            let i = home.slot();
            if s.keys[i].get() == home.key() {
                s.keys[i].set(0);
                // A connection cached meanwhile goes with it (the next miss
                // caches the route's).
                let other = s.conns[i].take();
                (s.routes[i].take(), other)
            } else {
                (None, None)
            }
        })
        .ok();
    drop(route);
    drop(conn);
}

/// Caches `conn` for `route` after a miss (so that the thread's next call
/// finds it): in the route's slot, else an empty one, else the next slot
/// round robin. Whatever is displaced is dropped after the cache is left.
#[cold]
#[inline(never)]
pub(crate) fn remember(route: &Arc<Route>, conn: &Arc<ClientConn>) {
    if conn.is_closed() {
        return;
    }
    let key = Arc::as_ptr(route) as usize;
    let displaced = CACHE.try_with(|s| {
        if let Some(i) = find(s, key) {
            return (None, s.conns[i].replace(Some(conn.clone())));
        }
        let i = find(s, 0).unwrap_or_else(|| {
            let i = s.next.get() % SLOTS;
            s.next.set((i + 1) % SLOTS);
            i
        });
        s.keys[i].set(key);
        (
            s.routes[i].replace(Some(Arc::downgrade(route))),
            s.conns[i].replace(Some(conn.clone())),
        )
    });
    drop(displaced);
}
