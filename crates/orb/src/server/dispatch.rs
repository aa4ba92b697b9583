//! Dispatching one request: demultiplexing it to its servant (through
//! the thread's resolve cache or the POA), running the upcall, and
//! writing the reply; and the answer to a LocateRequest.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use peregrine_cdr::{ByteOrder, CodeSets, GiopVersion, Writer};
use peregrine_giop::conn::{IncomingLocate, IncomingRequest, RequestId};
use peregrine_giop::fast::RequestLayout;
use peregrine_giop::{
    encode_system_exception_reply, LocateStatus, ServiceContexts, TaggedProfile, TargetAddress,
};

use super::connection::Conn;
use super::fast_path::{patch_size, start_reply_1_2, Incoming};
use crate::client::lock;
use crate::error::{raise, raise_cdr, raise_giop};
use crate::orb::Orb;
use crate::poa;
use crate::runtime::{Cause, Phase};
use crate::runtime::{
    CompletionStatus, ReplyStart, ReplyState, ServerRequest, SystemException,
    SystemExceptionKind as K,
};

/// Longest a request waits while its POA manager holds.
const HOLD_MAX: Duration = Duration::from_secs(30);

/// What the connection does after a message.
pub(super) enum Next {
    Continue,
    Close,
}

/// One request's handling on one thread: the connection it came on and
/// the thread's reply buffer and resolve cache.
pub(super) struct ConnCtx<'o> {
    pub(super) orb: &'o Orb,
    pub(super) slot: &'o Conn,
    pub(super) tx: &'o mut Writer,
    pub(super) codesets: CodeSets,
    /// This thread's last resolved target.
    pub(super) cache: &'o mut poa::ResolveCache,
    /// The pool's count of threads running requests, decremented once
    /// the upcall is over (before the reply goes out: a client's next
    /// call must not find this thread still counted).
    pub(super) upcall: Option<&'o AtomicUsize>,
}

/// The object key a request or LocateRequest names (empty for a target
/// this server cannot serve: it is then not found).
fn key_of<'a>(target: &'a TargetAddress<'_>) -> &'a [u8] {
    match target {
        TargetAddress::Key(k) => k,
        TargetAddress::Profile(TaggedProfile::Iiop(p)) => &p.object_key,
        TargetAddress::Reference(info) => {
            match info.ior.profiles.get(info.selected_profile_index as usize) {
                Some(TaggedProfile::Iiop(p)) => &p.object_key,
                _ => &[],
            }
        }
        _ => &[],
    }
}

/// The answer to a LocateRequest: its status and body (the forward's
/// IOR, or nothing).
pub(super) fn locate(orb: &Orb, l: &IncomingLocate) -> (LocateStatus, Vec<u8>) {
    let target = l.target();
    // Only an object key or an IIOP profile names an object here (as for
    // a request addressed by reference, the selected profile would do,
    // but no client sends a LocateRequest so).
    let key: &[u8] = match &target {
        TargetAddress::Reference(_) => &[],
        t => key_of(t),
    };
    match poa::locate(orb.inner(), key) {
        poa::Located::Here => (LocateStatus::ObjectHere, Vec::new()),
        poa::Located::Unknown => (LocateStatus::UnknownObject, Vec::new()),
        poa::Located::Forward(ior) => {
            // An IOR needs 4-byte alignment at most, which the LocateReply
            // body has in every version: encoded apart, the bytes are the
            // same.
            let mut w = Writer::new(ByteOrder::NATIVE);
            if peregrine_cdr::Encode::encode(&ior, &mut w).is_err() {
                return (LocateStatus::UnknownObject, Vec::new());
            }
            (LocateStatus::ObjectForward, w.into_vec())
        }
    }
}

impl ConnCtx<'_> {
    /// Ends the upcall's count (once).
    #[inline]
    pub(super) fn upcall_done(&mut self) {
        if let Some(n) = self.upcall.take() {
            n.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Dispatches a request the connection's machine reported, then
    /// gives its buffer back to the machine (the next message through it
    /// allocates nothing: a GIOP 1.0/1.1 client's every request).
    pub(super) fn machine_request(&mut self, req: IncomingRequest) -> Next {
        let next = {
            let target = req.target();
            let body = req.body();
            let incoming = Incoming {
                request_id: req.id.0,
                expected: req.response_flags.response_expected(),
                key: key_of(&target),
                operation: req.operation(),
                args: body.reader(),
                missed: false,
                tracked: true,
            };
            self.request(body.version, incoming)
        };
        lock(&self.slot.machine).recycle(req.into_message().into_message());
        next
    }

    /// Dispatches a message the fast path took, `request_layout` having
    /// read it as `at` (lent exclusively: the argument reader may decode
    /// in place).
    #[inline(always)]
    pub(super) fn fast(&mut self, m: &mut [u8], at: &RequestLayout) -> Next {
        let (head, body) = m.split_at_mut(at.body_at);
        match self.fast_request(at, head, body) {
            Some(next) => next,
            None => self.refused(m),
        }
    }

    /// A message the fast path refused after all (its operation is not
    /// UTF-8, or holds a NUL): the machine answers it, as it answers
    /// every malformed request (MARSHAL).
    #[cold]
    #[inline(never)]
    fn refused(&mut self, m: &[u8]) -> Next {
        match super::machine::feed(self.orb, self.slot, m) {
            super::machine::Step::Nothing => Next::Continue,
            super::machine::Step::Close => Next::Close,
            super::machine::Step::Request(r) => self.machine_request(r),
        }
    }

    /// Dispatches one request and sends its reply (if one is expected).
    fn request(&mut self, version: GiopVersion, req: Incoming<'_>) -> Next {
        // Refuse new work once CloseConnection went out: the client
        // re-sends it elsewhere (it was provably not processed).
        if !self.slot.begin_request() {
            if req.tracked {
                self.forget(req.request_id);
            }
            return Next::Continue;
        }
        if crate::trace::on(tracing::Level::DEBUG) {
            crate::trace::server_request(self.slot.peer(), req.operation, req.request_id);
        }
        self.counted_request(version, req)
    }

    /// The machine need not wait for request `id` any more.
    #[cold]
    fn forget(&self, id: u32) {
        lock(&self.slot.machine).forget_request(RequestId(id));
    }

    /// The common request whole, without intermediate values: a GIOP 1.2
    /// request read at fixed offsets (`request_layout`) for an object of an
    /// active object map, found in (or refilled into) this thread's
    /// resolve cache ([`poa::ResolveCache::lookup_or_refill`]). The
    /// `ServerRequest` is built once, in place, with the NO_EXCEPTION
    /// reply header already written; a target elsewhere goes the general
    /// way. `None`: the operation is not a name the full decode reads
    /// (not UTF-8, or a NUL inside), for the machine to answer.
    #[inline(always)]
    fn fast_request(
        &mut self,
        at: &RequestLayout,
        head: &mut [u8],
        body: &mut [u8],
    ) -> Option<Next> {
        let head: &[u8] = head;
        let (key, operation) = at.key_and_operation(head)?;
        self.slot.note_fast_request();
        if !self.slot.begin_request() {
            return Some(Next::Continue);
        }
        // The level check alone while nobody listens (docs/PERFORMANCE.md,
        // step 38).
        if crate::trace::on(tracing::Level::DEBUG) {
            crate::trace::server_request(self.slot.peer(), operation, at.request_id);
        }
        let mut args = at.args(body);
        // Another object than last time (round robin) takes the fast way
        // too if its servant is in an active object map.
        let Some(hit) = self.cache.lookup_or_refill(self.orb.inner(), key) else {
            let req = Incoming {
                request_id: at.request_id,
                expected: at.response_expected(),
                key,
                operation,
                args,
                missed: true,
                tracked: false,
            };
            return Some(self.counted_request(GiopVersion::V1_2, req));
        };
        args.set_codesets(self.codesets);
        self.tx.set_codesets(self.codesets);
        let expected = at.response_expected();
        let (state, pending) = if expected {
            start_reply_1_2(&mut *self.tx, at.request_id);
            (ReplyState::NoException, Some(ReplyStart::Fixed))
        } else {
            (ReplyState::Empty, None)
        };
        let mut req = ServerRequest {
            operation,
            args,
            reply: &mut *self.tx,
            state,
            pending,
            version: GiopVersion::V1_2,
            request_id: at.request_id,
            response_expected: at.response_expected(),
            object_id: hit.object_id,
            orb: self.orb,
        };
        // CORBA::Object's operations (rare) apart: the upcall closure
        // then holds only the servant call.
        let ran = if operation.starts_with('_') {
            hit.run(|servant| upcall(servant, &mut req))
        } else {
            // The panic is turned into UNKNOWN out here, where the
            // operation is at hand anyway: inside the closure its cause
            // kept registers alive across the servant call
            // (docs/PERFORMANCE.md, step 37).
            let caught =
                hit.run(|servant| catch_unwind(AssertUnwindSafe(|| servant.dispatch(&mut req))));
            match caught {
                Ok(r) => r,
                Err(_) => Err(servant_panicked(operation)),
            }
        };
        let res = match ran {
            Ok(()) => finish_fixed(&mut req),
            e => e,
        };
        req.args.done();
        // The upcall is over: release the servant and the POA count
        // before the reply goes out (`req`'s borrows end here too).
        drop(hit);
        Some(self.respond(GiopVersion::V1_2, at.request_id, expected, false, res))
    }

    /// `request` once counted in the connection's busy count.
    fn counted_request(&mut self, version: GiopVersion, req: Incoming<'_>) -> Next {
        let mut args = req.args;
        args.set_codesets(self.codesets);
        self.tx.set_codesets(self.codesets);
        let res = dispatch(
            self.orb,
            self.cache,
            &mut *self.tx,
            version,
            req.request_id,
            req.expected,
            req.operation,
            req.key,
            args,
            req.missed,
        );
        self.respond(version, req.request_id, req.expected, req.tracked, res)
    }

    /// Sends the reply in `tx` (or `res`'s exception), if one is
    /// expected, and ends the request's busy count (`tracked`: in the
    /// machine's too).
    #[inline(always)]
    fn respond(
        &mut self,
        version: GiopVersion,
        request_id: u32,
        expected: bool,
        tracked: bool,
        res: Result<(), SystemException>,
    ) -> Next {
        if let Err(e) = res {
            crate::trace::server_exception(self.slot.peer(), request_id, &e);
            let _ = encode_system_exception_reply(
                &mut *self.tx,
                version,
                request_id,
                ServiceContexts::EMPTY,
                &e,
            );
        }
        self.upcall_done();
        let stopping = self.orb.inner().server.is_stopping();
        // The reply goes out while the request still counts as busy (so
        // CloseConnection cannot overtake it).
        let out = if !expected {
            Next::Continue
        } else {
            if crate::trace::on(tracing::Level::DEBUG) {
                crate::trace::server_reply(self.slot.peer(), request_id);
            }
            self.send_tx()
        };
        if tracked {
            // Before the busy count drops: CloseConnection, sent once it
            // is zero, finds the machine waiting for nothing.
            self.forget(request_id);
        }
        self.slot.end_request();
        if stopping {
            self.slot.send_close();
        }
        out
    }

    /// Writes the message in `tx` (serialized with the connection's other
    /// writers).
    #[inline(always)]
    fn send_tx(&mut self) -> Next {
        let r = self
            .slot
            .write_message(self.tx.as_slice(), self.orb.inner().config.fragment_size);
        if self.tx.len() > (1 << 20) {
            *self.tx = Writer::new(ByteOrder::NATIVE);
        }
        match r {
            Ok(()) => Next::Continue,
            Err(_) => Next::Close,
        }
    }
}

/// Demultiplexes and runs one request, leaving the reply in `tx` (or
/// returning the system exception to send). `missed`: the caller already
/// found the key not in `cache`.
#[allow(clippy::too_many_arguments)]
fn dispatch(
    orb: &Orb,
    cache: &mut poa::ResolveCache,
    tx: &mut Writer,
    version: GiopVersion,
    request_id: u32,
    response_expected: bool,
    operation: &str,
    key: &[u8],
    args: peregrine_cdr::Reader<'_>,
    missed: bool,
) -> Result<(), SystemException> {
    if !missed {
        if let Some(hit) = cache.lookup(orb.inner(), key) {
            // The thread's last object again. The request is built once,
            // here, and the hit released when it drops.
            let mut req = request(
                orb,
                tx,
                version,
                request_id,
                response_expected,
                operation,
                hit.object_id,
                args,
            );
            return hit.run(|servant| invoke(servant, &mut req));
        }
    }
    let mut up = match poa::resolve(orb.inner(), cache, key, operation, HOLD_MAX) {
        Ok(poa::Resolution::Upcall(u)) => u,
        Ok(poa::Resolution::Forward(to)) => {
            return location_forward(tx, version, request_id, operation, &to)
        }
        Err(e) if e.kind == K::ObjectNotExist && is_non_existent(operation) => {
            let mut req = request(
                orb,
                tx,
                version,
                request_id,
                response_expected,
                operation,
                key,
                args,
            );
            req.reply().write_bool(true);
            return finish(&mut req);
        }
        Err(e) => return Err(e),
    };
    let mut req = request(
        orb,
        tx,
        version,
        request_id,
        response_expected,
        operation,
        up.object_id,
        args,
    );
    // postinvoke (servant locators) runs after the upcall, whatever its
    // outcome; its exception replaces the reply.
    up.run(|servant| invoke(servant, &mut req))
}

/// Calls `servant` (or answers an operation of CORBA::Object for it) and
/// completes the reply.
#[inline]
fn invoke(
    servant: &Arc<dyn crate::runtime::Servant>,
    req: &mut ServerRequest<'_>,
) -> Result<(), SystemException> {
    upcall(servant, req)?;
    finish(req)
}

/// Calls `servant` (or answers an operation of CORBA::Object for it),
/// leaving the reply to be completed by `finish`.
#[inline(always)]
fn upcall(
    servant: &Arc<dyn crate::runtime::Servant>,
    req: &mut ServerRequest<'_>,
) -> Result<(), SystemException> {
    let operation = req.operation;
    if operation.starts_with('_') {
        match operation {
            "_is_a" => {
                let id = req.args().read_string_bytes()?;
                let id = std::str::from_utf8(id)
                    .map_err(|_| SystemException::from(peregrine_cdr::CdrError::InvalidText))?;
                let yes = id == "IDL:omg.org/CORBA/Object:1.0" || servant.is_a(id);
                req.reply().write_bool(yes);
                return Ok(());
            }
            op if is_non_existent(op) => {
                req.reply().write_bool(false);
                return Ok(());
            }
            "_repository_id" => {
                let id = servant.repository_id();
                req.reply().write_string(id)?;
                return Ok(());
            }
            "_interface" | "_get_interface" => {
                return Err(raise(
                    K::NoImplement,
                    peregrine_giop::system_exception::minor::NO_IMPLEMENT_NO_INTERFACE_REPOSITORY,
                    CompletionStatus::No,
                    || {
                        Cause::new(Phase::Dispatch)
                            .with_operation("_interface")
                            .with_detail("no interface repository")
                    },
                ))
            }
            _ => {}
        }
    }
    call_servant(servant, req)
}

/// The servant's `dispatch`, a panic in it answered as UNKNOWN.
#[inline(always)]
fn call_servant(
    servant: &Arc<dyn crate::runtime::Servant>,
    req: &mut ServerRequest<'_>,
) -> Result<(), SystemException> {
    match catch_unwind(AssertUnwindSafe(|| servant.dispatch(req))) {
        Ok(r) => r,
        Err(_) => Err(servant_panicked(req.operation)),
    }
}

#[cold]
#[inline(never)]
fn servant_panicked(operation: &str) -> SystemException {
    raise(
        K::Unknown,
        peregrine_giop::system_exception::minor::UNKNOWN_PANIC,
        CompletionStatus::Maybe,
        || {
            Cause::new(Phase::Dispatch)
                .with_operation(operation)
                .with_detail("the servant panicked")
        },
    )
}

/// A LOCATION_FORWARD reply to `to` (`ForwardRequest` from a servant
/// manager, or a bound object key).
#[cold]
fn location_forward(
    tx: &mut Writer,
    version: GiopVersion,
    request_id: u32,
    operation: &str,
    to: &peregrine_giop::Ior,
) -> Result<(), SystemException> {
    let h = peregrine_giop::ReplyHeader {
        request_id,
        status: peregrine_giop::ReplyStatus::LocationForward,
        service_contexts: ServiceContexts::EMPTY,
    };
    let cause = |e: &dyn std::fmt::Display| {
        Cause::new(Phase::Forward)
            .with_operation(operation)
            .with_detail(e)
    };
    let no = CompletionStatus::No;
    let p = peregrine_giop::encode_reply(tx, version, &h)
        .map_err(|e| raise_giop(&e, no, || cause(&e)))?;
    peregrine_cdr::Encode::encode(to, tx).map_err(|e| raise_cdr(&e, no, || cause(&e)))?;
    p.finish(tx).map_err(|e| raise_giop(&e, no, || cause(&e)))?;
    Ok(())
}

fn is_non_existent(op: &str) -> bool {
    op == "_non_existent" || op == "_not_existent"
}

#[allow(clippy::too_many_arguments)]
fn request<'a>(
    orb: &'a Orb,
    tx: &'a mut Writer,
    version: GiopVersion,
    request_id: u32,
    response_expected: bool,
    operation: &'a str,
    object_id: &'a [u8],
    args: peregrine_cdr::Reader<'a>,
) -> ServerRequest<'a> {
    ServerRequest {
        operation,
        args,
        reply: tx,
        state: ReplyState::Empty,
        pending: None,
        version,
        request_id,
        response_expected,
        object_id,
        orb,
    }
}

/// `finish` for a reply begun with `start_reply_1_2` (or a skeleton's
/// USER_EXCEPTION, the same fixed header): the size patched in place.
#[inline(always)]
fn finish_fixed(req: &mut ServerRequest<'_>) -> Result<(), SystemException> {
    if !req.response_expected {
        // A oneway's reply is never sent: complete none.
        return Ok(());
    }
    if req.state != ReplyState::Empty
        && matches!(req.pending, Some(ReplyStart::Fixed))
        && patch_size(req.reply)
    {
        req.pending = None;
        return Ok(());
    }
    finish(req)
}

/// Completes the reply in the request's writer.
#[inline]
fn finish(req: &mut ServerRequest<'_>) -> Result<(), SystemException> {
    if !req.response_expected {
        // A oneway's reply is never sent: complete none.
        return Ok(());
    }
    if req.state == ReplyState::Empty {
        req.reply();
    }
    match req.pending.take() {
        Some(p) => p.finish(&mut *req.reply).map_err(|e| {
            raise_giop(&e, CompletionStatus::Yes, || {
                Cause::new(Phase::Dispatch)
                    .with_operation(req.operation)
                    .with_detail(format_args!("finishing the reply: {e}"))
            })
        }),
        None => Err(raise(K::Internal, 0, CompletionStatus::Maybe, || {
            Cause::new(Phase::Dispatch)
                .with_operation(req.operation)
                .with_detail("no reply header")
        })),
    }
}
