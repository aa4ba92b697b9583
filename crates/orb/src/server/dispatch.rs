//! Dispatching one message: demultiplexing a request to its servant
//! (through the thread's resolve cache or the POA), running the upcall,
//! and writing the reply; the other GIOP messages a server receives.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use peregrine_cdr::{ByteOrder, CharCodeSet, CodeSets, GiopVersion, WcharCodeSet, Writer};
use peregrine_giop::{
    decode_message, encode_locate_reply, encode_system_exception_reply, service_context::ids,
    CodeSetContext, LocateReplyHeader, LocateStatus, Message, MessageHeader, MsgType,
    ServiceContexts, TaggedProfile, TargetAddress,
};

use super::connection::Conn;
use super::fast_path::{fast_layout, patch_size, start_reply_1_2, FastLayout, Incoming};
use crate::client::lock;
use crate::error::raise;
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

/// One message's handling on one thread: the connection it came on and
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

impl ConnCtx<'_> {
    /// Ends the upcall's count (once).
    #[inline]
    pub(super) fn upcall_done(&mut self) {
        if let Some(n) = self.upcall.take() {
            n.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Handles one whole message (lent exclusively: the argument reader
    /// may decode in place).
    pub(super) fn handle(&mut self, m: &mut [u8]) -> Next {
        let at = fast_layout(m);
        self.handle_laid_out(m, at.as_ref())
    }

    /// [`ConnCtx::handle`] of a message whose fixed-offset layout the
    /// caller already read (`None`: not a plain GIOP 1.2 Request).
    pub(super) fn handle_laid_out(&mut self, m: &mut [u8], at: Option<&FastLayout>) -> Next {
        if let Some(at) = at {
            return self.fast(m, at);
        }
        let m: &[u8] = m;
        let limits = self.orb.inner().config.limits;
        let (h, msg) = match decode_message(m, &limits) {
            Ok(x) => x,
            Err(e) => return self.undecodable(m, &e),
        };
        match msg {
            Message::Request { header, body } => {
                let key: &[u8] = match &header.target {
                    TargetAddress::Key(k) => k,
                    TargetAddress::Profile(TaggedProfile::Iiop(p)) => &p.object_key,
                    TargetAddress::Reference(info) => {
                        match info.ior.profiles.get(info.selected_profile_index as usize) {
                            Some(TaggedProfile::Iiop(p)) => &p.object_key,
                            _ => &[],
                        }
                    }
                    _ => &[],
                };
                let req = Incoming {
                    request_id: header.request_id,
                    expected: header.response_flags.response_expected(),
                    key,
                    operation: header.operation,
                    args: body.reader(),
                    missed: false,
                };
                self.request(h.version, req, header.service_contexts)
            }
            msg => {
                self.slot.note_version(h.version);
                self.other(m, h.version, msg)
            }
        }
    }

    /// `handle` for a message `fast_layout` read as `at`.
    #[inline(always)]
    fn fast(&mut self, m: &mut [u8], at: &FastLayout) -> Next {
        let (head, body) = m.split_at_mut(at.body);
        self.fast_request(at, head, body)
    }

    /// Dispatches one request and sends its reply (if one is expected).
    fn request(
        &mut self,
        version: GiopVersion,
        req: Incoming<'_>,
        contexts: ServiceContexts<'_>,
    ) -> Next {
        // Refuse new work once CloseConnection went out: the client
        // re-sends it elsewhere (it was provably not processed).
        self.slot.note_version(version);
        if !self.slot.begin_request() {
            return Next::Continue;
        }
        if crate::trace::on(tracing::Level::DEBUG) {
            crate::trace::server_request(self.slot.peer(), req.operation, req.request_id);
        }
        self.counted_request(version, req, contexts)
    }

    /// The common request whole, without intermediate values: a GIOP 1.2
    /// request read at fixed offsets (`fast_layout`) for an object of an
    /// active object map, found in (or refilled into) this thread's
    /// resolve cache ([`poa::ResolveCache::lookup_or_refill`]). The
    /// `ServerRequest` is built once, in place, with the NO_EXCEPTION
    /// reply header already written; anything else goes the general way.
    #[inline(always)]
    fn fast_request(&mut self, at: &FastLayout, head: &mut [u8], body: &mut [u8]) -> Next {
        let head: &[u8] = head;
        let Some((key, operation)) = at.key_and_operation(head) else {
            // What the full decode reports for such an operation.
            return self.undecodable(
                head,
                &peregrine_giop::GiopError::Cdr(peregrine_cdr::CdrError::InvalidText),
            );
        };
        self.slot.note_version(GiopVersion::V1_2);
        if !self.slot.begin_request() {
            return Next::Continue;
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
                expected: at.expected,
                key,
                operation,
                args,
                missed: true,
            };
            return self.counted_request(GiopVersion::V1_2, req, ServiceContexts::EMPTY);
        };
        args.set_codesets(self.codesets);
        self.tx.set_codesets(self.codesets);
        let (state, pending) = if at.expected {
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
            response_expected: at.expected,
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
        // The upcall is over: release the servant and the POA count
        // before the reply goes out (`req`'s borrows end here too).
        drop(hit);
        self.respond(GiopVersion::V1_2, at.request_id, at.expected, res)
    }

    /// `request` once counted in the connection's busy count.
    fn counted_request(
        &mut self,
        version: GiopVersion,
        req: Incoming<'_>,
        contexts: ServiceContexts<'_>,
    ) -> Next {
        if !contexts.is_empty() {
            if let Some(data) = contexts.get(ids::CODE_SETS) {
                if let Ok(ctx) = CodeSetContext::decode(data) {
                    self.set_codesets(ctx);
                    // For the connection's later requests, on any thread.
                    *lock(&self.slot.codesets) = self.codesets;
                }
            }
        }
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
        self.respond(version, req.request_id, req.expected, res)
    }

    /// Sends the reply in `tx` (or `res`'s exception), if one is
    /// expected, and ends the request's busy count.
    #[inline(always)]
    fn respond(
        &mut self,
        version: GiopVersion,
        request_id: u32,
        expected: bool,
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
        self.slot.end_request();
        if stopping {
            self.slot.send_close();
        }
        out
    }

    /// Handles a message other than a Request.
    fn other(&mut self, m: &[u8], version: GiopVersion, msg: Message<'_>) -> Next {
        match msg {
            Message::Request { .. } => Next::Continue,
            Message::LocateRequest(lh) => {
                let key: &[u8] = match &lh.target {
                    TargetAddress::Key(k) => k,
                    TargetAddress::Profile(TaggedProfile::Iiop(p)) => &p.object_key,
                    _ => &[],
                };
                let (status, forward) = match poa::locate(self.orb.inner(), key) {
                    poa::Located::Here => (LocateStatus::ObjectHere, None),
                    poa::Located::Unknown => (LocateStatus::UnknownObject, None),
                    poa::Located::Forward(ior) => (LocateStatus::ObjectForward, Some(ior)),
                };
                let rh = LocateReplyHeader {
                    request_id: lh.request_id,
                    status,
                };
                let Ok(p) = encode_locate_reply(&mut *self.tx, version, &rh) else {
                    return Next::Close;
                };
                if let Some(ior) = forward {
                    if peregrine_cdr::Encode::encode(&ior, &mut *self.tx).is_err() {
                        return Next::Close;
                    }
                }
                match p.finish(&mut *self.tx) {
                    Ok(()) => self.send_tx(),
                    Err(_) => Next::Close,
                }
            }
            Message::CancelRequest { .. } => Next::Continue,
            Message::CloseConnection | Message::MessageError => Next::Close,
            Message::Reply { .. } | Message::LocateReply { .. } | Message::Fragment { .. } => {
                self.slot.message_error(m);
                Next::Close
            }
        }
    }

    fn set_codesets(&mut self, ctx: CodeSetContext) {
        if let Some(c) = CharCodeSet::from_id(ctx.char_data) {
            self.codesets.char = c;
        }
        self.codesets.wchar = WcharCodeSet::from_id(ctx.wchar_data);
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

    /// A message whose header decoded but whose body did not: a Request
    /// whose id we can read gets a MARSHAL reply; anything else a
    /// MessageError and the connection closes.
    fn undecodable(&mut self, m: &[u8], e: &peregrine_giop::GiopError) -> Next {
        let limits = self.orb.inner().config.limits;
        if let Ok(h) = MessageHeader::decode(m, &limits) {
            if h.msg_type == MsgType::Request && h.version == GiopVersion::V1_2 && m.len() >= 16 {
                let raw: [u8; 4] = m[12..16].try_into().unwrap_or_default();
                let id = match h.order {
                    ByteOrder::Big => u32::from_be_bytes(raw),
                    ByteOrder::Little => u32::from_le_bytes(raw),
                };
                let ex = e.to_system_exception(CompletionStatus::No);
                if encode_system_exception_reply(
                    &mut *self.tx,
                    h.version,
                    id,
                    ServiceContexts::EMPTY,
                    &ex,
                )
                .is_ok()
                {
                    return self.send_tx();
                }
            }
        }
        self.slot.message_error(m);
        Next::Close
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
                return Err(raise(K::NoImplement, 0, CompletionStatus::No, || {
                    Cause::new(Phase::Dispatch)
                        .with_operation("_interface")
                        .with_detail("no interface repository")
                }))
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
    raise(K::Unknown, 0, CompletionStatus::Maybe, || {
        Cause::new(Phase::Dispatch)
            .with_operation(operation)
            .with_detail("the servant panicked")
    })
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
    let fail = |e: &dyn std::fmt::Display| {
        raise(K::Marshal, 0, CompletionStatus::No, || {
            Cause::new(Phase::Forward)
                .with_operation(operation)
                .with_detail(e)
        })
    };
    let p = peregrine_giop::encode_reply(tx, version, &h).map_err(|e| fail(&e))?;
    peregrine_cdr::Encode::encode(to, tx).map_err(|e| fail(&e))?;
    p.finish(tx).map_err(|e| fail(&e))?;
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
            raise(K::Marshal, 0, CompletionStatus::Yes, || {
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
