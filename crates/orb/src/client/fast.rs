//! The lean path of the common call (a cached route and connection, a
//! GIOP 1.2 header template) and the entry points the stubs call.

use std::sync::Arc;
use std::time::Instant;

use peregrine_cdr::{CodeSets, GiopVersion, Writer};
use tracing::Level;

use super::{call::*, conn::*, header::*, reply::*, route::*};
use super::{lock, put_writer, take_writer, Deadline};
use crate::coarse_clock;
use crate::error::raise_cdr;
use crate::runtime::{Cause, Phase};
use crate::runtime::{
    CompletionStatus, DecodeResult, DecodeUserException, EncodeArgs, ObjectRef, SystemException,
};
use crate::thread_conns;
use crate::trace;

/// Sends a request (`w` is the thread's writer): the arguments, then
/// `tail` if any (see [`encode_tail`]); a twoway waits for its reply,
/// leading its connection (see [`ClientConn::begin`]).
///
/// The common case takes the lean path ([`fast_call`]: [`fast_begin`],
/// the arguments, [`fast_finish`], in one function that is not generic:
/// the encoder is called through a `dyn` reference), so stubs share it
/// and only build the encoder; anything else goes through `Call`.
#[inline(always)]
pub(super) fn send_request<'a>(
    obj: &'a ObjectRef,
    op: &'a str,
    twoway: bool,
    w: &mut Writer,
    encode_args: impl EncodeArgs,
    tail: Option<&'a dyn peregrine_cdr::TailSeq>,
) -> Result<Option<ReplyMsg>, SystemException> {
    let mut args = Some(encode_args);
    let mut encode = |w: &mut Writer| -> peregrine_cdr::Result<&'a [u8]> {
        // Called at most once: by the lean path when it takes the call,
        // else by the general path.
        let Some(encode_args) = args.take() else {
            unreachable!("a request's arguments are encoded once")
        };
        encode_args(w)?;
        match tail {
            Some(t) => encode_tail(w, t),
            None => Ok(&[][..]),
        }
    };
    // Written by `fast_call` only when the outcome is not `Ok(None)` (a
    // oneway sent): see there.
    let mut done = Ok(None);
    // `twoway` is a constant here once this is inlined into a stub.
    let taken = if twoway {
        fast_twoway(obj, op, w, &mut encode, &mut done)
    } else {
        fast_oneway(obj, op, w, &mut encode, &mut done)
    };
    if taken {
        return done;
    }
    // Declined before encoding: the encoder still holds the arguments.
    general_request(obj, op, twoway, w, &mut encode)
}

/// The lean call: `false` when it does not apply (see [`fast_begin`];
/// `encode` was not called then), else `true` with the call's outcome in
/// `done`, which the caller set to `Ok(None)` (what a oneway gives) and
/// which is only written when the outcome is something else.
///
/// One function for the whole call (`fast_begin` and `fast_finish`
/// inlined), and its outcome left where the caller has it: a value
/// returned through memory and copied right away, with wide loads of
/// what narrower stores had just written, stalls (store forwarding
/// fails): a `Fast` returned by `fast_begin` and passed to `fast_finish`
/// cost ~27 % of the oneway stub's samples, an outcome returned by value
/// as much. The encoder's indirect call costs less.
#[inline(always)]
fn fast_call<'a>(
    obj: &'a ObjectRef,
    op: &'a str,
    twoway: bool,
    w: &mut Writer,
    encode: &mut dyn FnMut(&mut Writer) -> peregrine_cdr::Result<&'a [u8]>,
    done: &mut Result<Option<ReplyMsg>, SystemException>,
) -> bool {
    let Some(fast) = fast_begin(obj, op, twoway, w) else {
        return false;
    };
    // The one event on the lean path: its cost while nobody listens is
    // the level check (docs/PERFORMANCE.md, step 38).
    if trace::on(Level::DEBUG) {
        trace::request(&fast.conn.ep, op, fast.id, twoway);
    }
    // A panicking encoder must not leave the connection's claim.
    let guard = EncodeGuard(&fast);
    let encoded = encode(w);
    // It did not panic (the guard owns nothing: forgetting it leaks
    // nothing).
    std::mem::forget(guard);
    fast_finish(fast, obj, op, w, encoded, done);
    true
}

/// [`fast_call`] for a oneway: a function of its own, so that the
/// twoway's paths (leading, waiting, the reply) cost it neither code nor
/// stack spills.
#[inline(never)]
fn fast_oneway<'a>(
    obj: &'a ObjectRef,
    op: &'a str,
    w: &mut Writer,
    encode: &mut dyn FnMut(&mut Writer) -> peregrine_cdr::Result<&'a [u8]>,
    done: &mut Result<Option<ReplyMsg>, SystemException>,
) -> bool {
    fast_call(obj, op, false, w, encode, done)
}

/// [`fast_call`] for a twoway.
#[inline(never)]
fn fast_twoway<'a>(
    obj: &'a ObjectRef,
    op: &'a str,
    w: &mut Writer,
    encode: &mut dyn FnMut(&mut Writer) -> peregrine_cdr::Result<&'a [u8]>,
    done: &mut Result<Option<ReplyMsg>, SystemException>,
) -> bool {
    fast_call(obj, op, true, w, encode, done)
}

/// [`send_request`] through `Call`: binds and connects as needed, encodes
/// headers that are not cached. Not generic (the arguments come through
/// the lean path's `dyn` encoder): one copy for every stub, where a copy
/// per operation cost about 600 bytes of code each.
#[inline(never)]
fn general_request<'a>(
    obj: &'a ObjectRef,
    op: &'a str,
    twoway: bool,
    w: &mut Writer,
    encode: &mut dyn FnMut(&mut Writer) -> peregrine_cdr::Result<&'a [u8]>,
) -> Result<Option<ReplyMsg>, SystemException> {
    let mut call = Call::new(obj, op, twoway, twoway);
    let mut gathered: &[u8] = &[];
    call.start(w, |w| {
        gathered = encode(w)?;
        Ok(())
    })?;
    call.tail = gathered;
    call.run(w)
}

/// Hands a fast-path call's claim on its connection back if the call
/// ends (an error, a panicking encoder) before it is done with it.
struct GiveUp<'c> {
    pub(super) conn: &'c ClientConn,
    pub(super) id: u32,
    pub(super) led: bool,
    /// A twoway (a oneway holds no claim).
    pub(super) twoway: bool,
    armed: bool,
}

impl Drop for GiveUp<'_> {
    fn drop(&mut self) {
        if self.armed && self.twoway {
            give_up(self.conn, self.id, self.led);
        }
    }
}

/// A call on the lean path (see [`fast_begin`]) between its header and
/// its arguments.
struct Fast {
    pub(super) conn: Arc<ClientConn>,
    /// A oneway's connection was taken from the thread's cache: where it
    /// goes back to when the call is done with it.
    home: Option<thread_conns::Home>,
    pub(super) id: u32,
    /// The call leads the connection.
    pub(super) led: bool,
    pub(super) twoway: bool,
    pub(super) cs: CodeSets,
    pub(super) framing: Framing,
    /// When a twoway started (its deadline counts from it). A oneway
    /// reads no precise clock: only its idle check needs the time, and
    /// that takes the coarse one.
    pub(super) started: Option<Instant>,
}

/// Gives a lean call's claim on its connection up if the stub's encoder
/// panics (forgotten when it returns): one pointer to set up, where a
/// `GiveUp` copied five fields (~30 instructions a call).
struct EncodeGuard<'f>(&'f Fast);

impl Drop for EncodeGuard<'_> {
    fn drop(&mut self) {
        let f = self.0;
        give_up_if(f.twoway, &f.conn, f.id, f.led);
    }
}

/// The route's connection when the thread's cache has none for it (a
/// miss: first use, a call made from inside another's encoder, a route
/// evicted or a connection that closed), remembered in the cache.
#[cold]
#[inline(never)]
fn route_conn(route: &Arc<Route>) -> Option<Arc<ClientConn>> {
    let conn = lock(&route.conn).clone()?;
    thread_conns::remember(route, &conn);
    Some(conn)
}

/// Hands a oneway's connection back to the thread's cache (a twoway's
/// count is dropped).
#[inline(always)]
fn put_back(conn: Arc<ClientConn>, home: Option<thread_conns::Home>) {
    if let Some(home) = home {
        thread_conns::put(conn, home);
    }
}

/// The start of the common call, lean (principle: optimize for the
/// common case): a reference bound to a GIOP 1.2 route with a connection
/// up, a request header cached for the operation and no CodeSets context
/// to send. Writes the header into `w` (arguments go after it); `None`
/// when that is not the case: the general path (`Call`) then binds,
/// connects and encodes headers.
///
/// The connection comes from the thread's cache (no route lock, no
/// reference count); a oneway whose connection needs nothing checked
/// takes its request id without the connection's state lock
/// ([`ClientConn::begin_oneway`]).
#[inline(always)]
fn fast_begin(obj: &ObjectRef, op: &str, twoway: bool, w: &mut Writer) -> Option<Fast> {
    let inner = &obj.inner;
    if inner.orb.is_shut_down() {
        return None;
    }
    let target = inner.target().ok()?;
    if target.version != GiopVersion::V1_2 {
        return None;
    }
    let (conn, home) = if twoway {
        // The reply keeps a count of the connection: a clone, the entry
        // stays in the cache.
        let conn = match thread_conns::cloned(&target.route) {
            Some(c) => c,
            None => route_conn(&target.route)?,
        };
        (conn, None)
    } else {
        match thread_conns::take(&target.route) {
            Some((conn, home)) => (conn, Some(home)),
            // A miss: the route's connection, with a count (rare).
            None => (route_conn(&target.route)?, None),
        }
    };
    let (id, cs, led, started) = if twoway {
        let started = Instant::now();
        match conn.begin(&target, None, true, true, Now::Precise(started)) {
            Ok(Begun {
                id,
                cs,
                ctx: false,
                led,
            }) => (id, cs, led, Some(started)),
            Ok(Begun { id, led, .. }) => {
                give_up(&conn, id, led);
                return None;
            }
            // Closed: the general path drops the connection and binds
            // anew.
            Err(_) => return None,
        }
    } else {
        let now = coarse_clock::now_ns();
        match conn.begin_oneway(&target, now) {
            Some((id, cs)) => (id, cs, false, None),
            None => match conn.begin(&target, None, false, false, Now::Coarse(now)) {
                Ok(Begun {
                    id, cs, ctx: false, ..
                }) => (id, cs, false, None),
                _ => {
                    put_back(conn, home);
                    return None;
                }
            },
        }
    };
    w.set_codesets(cs);
    let Some(framing) = target.write_header(op, twoway, id, w) else {
        give_up_if(twoway, &conn, id, led);
        put_back(conn, home);
        return None;
    };
    Some(Fast {
        conn,
        home,
        id,
        led,
        twoway,
        cs,
        framing,
        started,
    })
}

/// `give_up` for a twoway (a oneway holds no claim).
fn give_up_if(twoway: bool, conn: &ClientConn, id: u32, led: bool) {
    if twoway {
        give_up(conn, id, led);
    }
}

/// The rest of the lean call once the arguments are `encoded` (with the
/// tail to send after them): sends and, for a twoway, reads the reply.
/// The outcome goes to `done` (left alone for `Ok(None)`, a oneway
/// sent; see [`fast_call`]).
///
/// A synchronous twoway that finds nobody reading the connection reads
/// its own reply and returns it still leading (decoded in place, as on
/// the general path). Anything unusual (a failed write, a reply other
/// than NO_EXCEPTION/USER_EXCEPTION with the fixed header, a timeout, a
/// closed connection, a follower's wait) continues on the general path
/// from where this one stands, so forwards, re-sends and errors behave
/// the same.
#[inline(always)]
fn fast_finish<'a>(
    fast: Fast,
    obj: &'a ObjectRef,
    op: &'a str,
    w: &mut Writer,
    encoded: peregrine_cdr::Result<&'a [u8]>,
    done: &mut Result<Option<ReplyMsg>, SystemException>,
) {
    let Fast {
        conn,
        home,
        id,
        led,
        twoway,
        cs,
        framing,
        started,
    } = fast;
    let inner = &obj.inner;
    let guard = GiveUp {
        conn: &conn,
        id,
        led,
        twoway,
        armed: true,
    };
    let tail = match encoded {
        Ok(t) => t,
        Err(e) => {
            let e = cdr_to_sys(&e, CompletionStatus::No, || {
                Cause::new(Phase::Encode)
                    .with_peer(&conn.ep)
                    .with_operation(op)
            });
            drop(guard);
            put_back(conn, home);
            *done = Err(e);
            return;
        }
    };
    let tail = match frame_request(&conn, w, Some(framing), tail) {
        Ok(t) => t,
        Err(e) => {
            let e = raise_cdr(&e, CompletionStatus::No, || {
                Cause::new(Phase::Encode)
                    .with_peer(&conn.ep)
                    .with_operation(op)
                    .with_detail(&e)
            });
            drop(guard);
            put_back(conn, home);
            *done = Err(e);
            return;
        }
    };
    let sent = conn.send(w.as_slice(), tail);
    std::mem::forget(guard);
    let general = |led, started: Option<Instant>, clock: Option<Instant>, conn| {
        // A oneway has no clock reading yet: its (re-)send's deadline
        // counts from here.
        let started = started.unwrap_or_else(Instant::now);
        Call {
            obj,
            op,
            tail,
            st: CallState {
                twoway,
                lead: twoway,
                started,
                clock: clock.unwrap_or(started),
                timeout: inner
                    .timeout
                    .unwrap_or(inner.orb.inner().config.call_timeout),
                led,
                conn: Some(conn),
                request_id: id,
                codesets: cs,
                version: GiopVersion::V1_2,
                args_start: framing.body_start,
                pending: Some(framing),
                sent_pending: Some(framing),
                forwards: 0,
                resends: 0,
                locate: false,
            },
        }
    };
    let Some(started) = started else {
        // A oneway.
        if sent.is_err() {
            // The connection is marked failed: re-send on another.
            // (`put_back` drops the failed connection from the cache.)
            let mut call = general(false, None, None, conn.clone());
            put_back(conn, home);
            *done = call.resend(w).and_then(|()| call.run(w));
            return;
        }
        put_back(conn, home);
        return;
    };
    let timeout = inner
        .timeout
        .unwrap_or(inner.orb.inner().config.call_timeout);
    let mut clock = started;
    match sent {
        Ok(waited) if clock_stale(waited, w.len() + tail.len()) => clock = Instant::now(),
        Ok(_) => {}
        Err(_) => {
            // The connection is marked failed: re-send on another.
            let mut call = general(led, Some(started), Some(clock), conn);
            *done = call.resend(w).and_then(|()| call.run(w));
            return;
        }
    }
    let deadline = Deadline {
        from: started,
        after: timeout,
    };
    let left = (clock == started).then_some(timeout);
    // The common reply goes straight into `done`.
    let Some((conn, got)) = await_reply_on(conn, id, led, deadline, clock, left, cs, done) else {
        return;
    };
    let mut call = general(false, Some(started), Some(clock), conn.clone());
    *done = match call.on_arrival(w, conn, got) {
        Ok(None) => call.run(w),
        other => other,
    };
}

/// Tails shorter than this are copied into the writer: a gathered write
/// costs an extra I/O vector (and the kernel's walk of it), which only a
/// copy of this size outweighs (docs/PERFORMANCE.md, step 25).
pub(crate) const GATHER_MIN: usize = 8 * 1024;

/// Encodes `tail` after the other arguments: a large one is left in the
/// caller's memory and returned (to become [`Call::tail`]), a small one
/// copied into `w` (an empty result).
fn encode_tail<'t>(
    w: &mut Writer,
    tail: &'t dyn peregrine_cdr::TailSeq,
) -> peregrine_cdr::Result<&'t [u8]> {
    if tail.byte_len() >= GATHER_MIN {
        tail.encode_split(w)
    } else {
        tail.encode_all(w).map(|()| &[][..])
    }
}

/// [`invoke`] whose last `in` argument, `tail` (if any), is encoded after
/// what `encode_args` writes and, when large, sent from the caller's
/// memory.
#[inline(always)]
pub(crate) fn invoke_with_tail<T, E: From<SystemException>>(
    obj: &ObjectRef,
    op: &str,
    encode_args: impl EncodeArgs,
    tail: Option<&dyn peregrine_cdr::TailSeq>,
    decode_result: impl DecodeResult<T>,
    decode_user_exception: impl DecodeUserException<E>,
) -> Result<T, E> {
    let mut w = take_writer();
    let res = send_request(obj, op, true, &mut w, encode_args, tail);
    put_writer(w);
    let reply = res?.expect("twoway calls return a reply");
    decode_reply(reply, op, decode_result, decode_user_exception)
}
