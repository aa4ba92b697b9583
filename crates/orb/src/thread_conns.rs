//! A per-thread cache of the connections the thread's calls last used,
//! by route, so that the client's lean call path finds its connection
//! without locking the route's `conn` mutex and without counting a
//! reference to it (four atomic read-modify-writes a call: lock, unlock,
//! `Arc` clone and drop).
//!
//! A call *takes* its entry out of the cache and puts it back when done
//! with the connection, so the entry is the call's alone meanwhile: a
//! call made while it is out (from an argument encoder, on the same
//! thread) misses and goes through the route as before.
//!
//! An entry holds a `Weak` of its route (its address is the key and stays
//! unique while the entry exists; the route itself is not kept alive) and
//! an `Arc` of the connection. A closed connection is never handed out:
//! a lookup that finds one drops the entry. What a cached connection can
//! keep alive after it closed (its socket descriptor, already shut down,
//! and its buffers) is bounded by [`SLOTS`] entries per thread, freed at
//! the thread's next call through that route, when a newer route evicts
//! it, or when the thread ends.

use std::cell::Cell;
use std::sync::{Arc, Weak};

use crate::client::{ClientConn, Route};

/// Entries per thread: a thread calling through more routes than this
/// in turn evicts them round robin (and pays the route lock on a miss).
pub(crate) const SLOTS: usize = 4;

/// A route's connection, as cached for one thread.
pub(crate) struct Entry {
    pub(crate) conn: Arc<ClientConn>,
    pub(crate) home: Home,
}

/// Where an entry taken out goes back to.
pub(crate) struct Home {
    route: Weak<Route>,
    /// The slot it was taken from (`SLOTS`: none), where `put` looks
    /// first.
    slot: usize,
}

struct Slots {
    /// The address of each slot's route (0: none). A slot whose entry is
    /// out (in use by a call) keeps its key.
    keys: [Cell<usize>; SLOTS],
    entries: [Cell<Option<Entry>>; SLOTS],
    /// The slot a new route evicts next.
    next: Cell<usize>,
}

thread_local! {
    static CACHE: Slots = const {
        Slots {
            keys: [const { Cell::new(0) }; SLOTS],
            entries: [const { Cell::new(None) }; SLOTS],
            next: Cell::new(0),
        }
    };
}

/// Takes `route`'s entry, if this thread has one, not in use, whose
/// connection is open.
#[inline(always)]
pub(crate) fn take(route: &Arc<Route>) -> Option<Entry> {
    let key = Arc::as_ptr(route) as usize;
    let found = CACHE
        .try_with(|c| {
            for (i, (k, e)) in c.keys.iter().zip(&c.entries).enumerate() {
                if k.get() == key {
                    return e.take().map(|mut e| {
                        e.home.slot = i;
                        e
                    });
                }
            }
            None
        })
        .ok()
        .flatten()?;
    if found.conn.is_closed() {
        drop_closed(found);
        return None;
    }
    Some(found)
}

/// A clone of `route`'s connection, if this thread has an entry for it,
/// not in use, whose connection is open: for a twoway, whose reply keeps
/// the connection (a count, where an entry taken out would have to come
/// back from the reply's release).
#[inline(always)]
pub(crate) fn cloned(route: &Arc<Route>) -> Option<Arc<ClientConn>> {
    let key = Arc::as_ptr(route) as usize;
    let conn = CACHE
        .try_with(|c| {
            for (k, e) in c.keys.iter().zip(&c.entries) {
                if k.get() == key {
                    let found = e.take()?;
                    if found.conn.is_closed() {
                        return Some(Err(found));
                    }
                    let conn = found.conn.clone();
                    // The slot was emptied just above: nothing is dropped
                    // (and no drop glue makes the access a call).
                    std::mem::forget(e.replace(Some(found)));
                    return Some(Ok(conn));
                }
            }
            None
        })
        .ok()
        .flatten()?;
    match conn {
        Ok(c) => Some(c),
        Err(closed) => {
            drop_closed(closed);
            None
        }
    }
}

/// Caches `conn` for `route` after a miss (so that the thread's next call
/// finds it).
#[cold]
#[inline(never)]
pub(crate) fn remember(route: &Arc<Route>, conn: &Arc<ClientConn>) {
    put(entry(route, conn.clone()));
}

/// Drops an entry whose connection closed (out of line: rare, and the
/// drop may free the connection).
#[cold]
#[inline(never)]
fn drop_closed(e: Entry) {
    let key = Weak::as_ptr(&e.home.route) as usize;
    let _ = CACHE.try_with(|c| {
        for k in &c.keys {
            if k.get() == key {
                k.set(0);
            }
        }
    });
    drop(e);
}

/// An entry for `route` and `conn` (a miss: the connection came from the
/// route).
#[cold]
pub(crate) fn entry(route: &Arc<Route>, conn: Arc<ClientConn>) -> Entry {
    Entry {
        conn,
        home: Home {
            route: Arc::downgrade(route),
            slot: SLOTS,
        },
    }
}

/// Puts `e` back (or in for the first time). A closed connection is
/// dropped instead.
#[inline(always)]
pub(crate) fn put(e: Entry) {
    if e.conn.is_closed() {
        drop_closed(e);
        return;
    }
    let key = Weak::as_ptr(&e.home.route) as usize;
    let i = e.home.slot;
    // The closure borrows the entry rather than owning it: one that owned
    // it would drop it when the thread-local is gone, and with that drop
    // glue the thread-local access was a call (~40 instructions).
    let mut e = Some(e);
    let displaced = CACHE
        .try_with(|c| match (c.keys.get(i), c.entries.get(i)) {
            // Another entry here (a call made while this one was out put
            // its own back) is replaced.
            (Some(k), Some(slot)) if k.get() == key => slot.replace(e.take()),
            _ => None,
        })
        .ok()
        .flatten();
    if let Some(d) = displaced {
        drop_displaced(d);
    }
    if let Some(e) = e {
        put_new(e, key);
    }
}

/// Drops an entry displaced by another for the same route (rare).
#[cold]
#[inline(never)]
fn drop_displaced(e: Entry) {
    drop(e);
}

/// `put` of an entry whose route has no slot (a miss, or evicted while
/// out): evicts the next slot round robin, preferring an empty one.
/// Whatever is displaced is dropped after the cache is left.
#[cold]
#[inline(never)]
fn put_new(e: Entry, key: usize) {
    let displaced = CACHE.try_with(|c| {
        if let Some(i) = c.keys.iter().position(|k| k.get() == key) {
            return c.entries[i].replace(Some(e));
        }
        let i = c.keys.iter().position(|k| k.get() == 0).unwrap_or_else(|| {
            let i = c.next.get() % SLOTS;
            c.next.set((i + 1) % SLOTS);
            i
        });
        c.keys[i].set(key);
        c.entries[i].replace(Some(e))
    });
    drop(displaced);
}
