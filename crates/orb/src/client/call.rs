//! The general call: target, connection, request, reply wait, forwards
//! and re-sends, and decoding the reply.

use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_cdr::{CdrError, CodeSets, GiopVersion, Reader, Writer};
use peregrine_giop::system_exception::minor;
use peregrine_giop::{
    encode_locate_request, encode_request, CodeSetContext, Endpoint, Ior, LocateRequestHeader,
    ReplyStatus, RequestHeader, ResponseFlags, ServiceContext, ServiceContexts, TargetAddress,
};
use tracing::Level;

use super::{conn::*, fast::*, header::*, orb_shut_down, reply::*, route::*};
use super::{Deadline, LONG_WRITE, MAX_FORWARDS, MAX_RESENDS};
use crate::error::{raise, raise_cdr, raise_giop};
use crate::runtime::{Cause, Phase};
use crate::runtime::{
    CompletionStatus, DecodeResult, DecodeUserException, EncodeArgs, ObjectRef, SystemException,
    SystemExceptionKind as K,
};
use crate::trace;

/// One call in progress.
pub(super) struct Call<'o> {
    pub(super) obj: &'o ObjectRef,
    pub(super) op: &'o str,
    pub(super) st: CallState,
    /// The end of the request body, sent from the caller's memory after
    /// the writer's bytes (a large last `in` sequence, see
    /// [`invoke_with_tail`]); empty for most calls. It stays with the
    /// call, so a re-send after a failed write, a forward or an orderly
    /// close sends it again.
    pub(super) tail: &'o [u8],
}

/// Everything about a call in flight but the reference and the operation
/// name, so a deferred call can keep it while its caller goes on.
pub(super) struct CallState {
    pub(super) twoway: bool,
    /// Read its own reply as the connection's leader from the start when
    /// nobody else reads it (synchronous twoways; a deferred call must not
    /// hold the connection while its caller goes on).
    pub(super) lead: bool,
    /// When the call started (the idle-connection check's clock).
    pub(super) started: Instant,
    /// The latest clock reading (`started`, or after a send that may have
    /// waited): where the leader's read timeout is counted from.
    pub(super) clock: Instant,
    /// The call's timeout, counted from `started`.
    pub(super) timeout: Duration,
    /// This call leads the connection (and will read its reply).
    pub(super) led: bool,
    pub(super) conn: Option<Arc<ClientConn>>,
    pub(super) request_id: u32,
    pub(super) codesets: CodeSets,
    pub(super) version: GiopVersion,
    pub(super) args_start: usize,
    pub(super) pending: Option<Framing>,
    /// The `pending` marker of the message last sent (a re-send rewrites
    /// the header in front of the same arguments).
    pub(super) sent_pending: Option<Framing>,
    pub(super) forwards: usize,
    pub(super) resends: usize,
    /// A LocateRequest rather than a Request (see [`super::locate`]): no
    /// arguments, a LocateReply, and nothing the server does with it, so
    /// it is always safe to ask again.
    pub(super) locate: bool,
}

impl CallState {
    /// When the call times out.
    pub(super) fn deadline(&self) -> Deadline {
        Deadline {
            from: self.started,
            after: self.timeout,
        }
    }

    /// Gives up the connection's leadership or the pending entry (the
    /// request will not be waited for on this connection).
    fn abandon(&mut self) {
        if let Some(c) = &self.conn {
            give_up(c, self.request_id, std::mem::take(&mut self.led));
        }
    }
}

impl Drop for CallState {
    fn drop(&mut self) {
        // A call unwound while leading (e.g. a panicking argument
        // encoder) must not leave the connection without a reader.
        if self.led {
            self.abandon();
        }
    }
}

impl<'o> Call<'o> {
    /// A call not yet bound to a connection (infallible, so that the
    /// sizeable `Call` is built in place rather than moved out of a
    /// `Result`).
    #[inline(always)]
    pub(super) fn new(obj: &'o ObjectRef, op: &'o str, twoway: bool, lead: bool) -> Self {
        let orb = &obj.inner.orb;
        let timeout = obj.inner.timeout.unwrap_or(orb.inner().config.call_timeout);
        let started = Instant::now();
        Call {
            obj,
            op,
            tail: &[],
            st: CallState {
                twoway,
                lead,
                started,
                clock: started,
                timeout,
                led: false,
                conn: None,
                request_id: 0,
                codesets: CodeSets::default(),
                version: GiopVersion::V1_2,
                args_start: 0,
                pending: None,
                sent_pending: None,
                forwards: 0,
                resends: 0,
                locate: false,
            },
        }
    }

    /// Checks the ORB is up, binds to a connection, writes the request
    /// header and the arguments into `w` (not yet finished or sent).
    pub(super) fn start(
        &mut self,
        w: &mut Writer,
        encode_args: impl EncodeArgs,
    ) -> Result<(), SystemException> {
        if self.obj.inner.orb.is_shut_down() {
            return Err(orb_shut_down(self.op));
        }
        self.prepare(w, None)?;
        if let Err(e) = encode_args(w) {
            self.st.abandon();
            return Err(cdr_to_sys(&e, CompletionStatus::No, || {
                self.cause(Phase::Encode)
            }));
        }
        Ok(())
    }

    /// `e`, the exception this call ends in, reported (WARN) with the
    /// call's operation and peer.
    #[cold]
    #[inline(never)]
    pub(super) fn failed(&self, e: SystemException) -> SystemException {
        trace::call_failed(self.st.conn.as_ref().map(|c| &c.ep), self.op, &e);
        e
    }

    /// A cause in `phase` naming this call's operation and, once it has
    /// a connection, its peer.
    #[cold]
    #[inline(never)]
    pub(super) fn cause(&self, phase: Phase) -> Cause {
        let c = Cause::new(phase).with_operation(self.op);
        match &self.st.conn {
            Some(conn) => c.with_peer(&conn.ep),
            None => c,
        }
    }

    /// Binds to a connection and writes the request header into `w`. When
    /// `align` is given (re-sending), the body is made to start at that
    /// position modulo 8, so already-encoded arguments stay aligned.
    pub(super) fn prepare(
        &mut self,
        w: &mut Writer,
        align: Option<usize>,
    ) -> Result<(), SystemException> {
        let inner = &self.obj.inner;
        let mut tries = 0;
        let (target, conn, Begun { id, cs, ctx, led }) = loop {
            let target = inner.target()?;
            let conn = match target.conn(&inner.orb, self.st.deadline()) {
                Ok(c) => c,
                Err(e) if target.forwarded => {
                    // A forwarded target that fails: back to the original.
                    inner.set_target(None);
                    tries += 1;
                    if tries > 2 {
                        return Err(self.failed(e.with_operation(self.op)));
                    }
                    continue;
                }
                // Raised below the call (connecting), which did not know
                // the operation.
                Err(e) => return Err(self.failed(e.with_operation(self.op))),
            };
            let prefer = align.map(|_| self.st.codesets);
            let lead = self.st.lead;
            let now = Now::Precise(self.st.started);
            match conn.begin(&target, prefer, self.st.twoway, lead, now) {
                Ok(b) => break (target, conn, b),
                Err(_) if tries < 2 => {
                    target.drop_conn(&conn);
                    tries += 1;
                    continue;
                }
                Err(c) => {
                    target.drop_conn(&conn);
                    return Err(self.failed(raise(
                        K::Transient,
                        minor::TRANSIENT_CONNECTION_CLOSED,
                        CompletionStatus::No,
                        || {
                            Cause::new(Phase::Connect)
                                .with_peer(&conn.ep)
                                .with_operation(self.op)
                                .with_detail(format_args!("connection closed: {c:?}"))
                        },
                    )));
                }
            }
        };
        if trace::on(Level::DEBUG) {
            trace::request(&conn.ep, self.op, id, self.st.twoway);
        }
        if self.st.locate {
            return self.prepare_locate(w, &target, id, cs, conn, led);
        }
        let mut version = target.version;
        if let Some(old) = &self.st.conn {
            if let Some(p) = &self.st.pending {
                // Re-sending already-encoded arguments is only sound when
                // they would encode the same way.
                let has_args = w.len() > p.body_start;
                let same_cs = self.st.codesets.char == cs.char
                    && (self.st.codesets.wchar.is_none() || self.st.codesets.wchar == cs.wchar);
                if has_args && self.st.version < version {
                    // Forwarded to a profile of a higher GIOP version
                    // (e.g. `corbaloc::` is 1.0, the object's IOR 1.2):
                    // the target speaks every lower version too, so the
                    // arguments go as encoded, in the request's version.
                    version = self.st.version;
                }
                if has_args && (!same_cs || self.st.version != version) {
                    give_up(&conn, id, led);
                    return Err(raise(
                        K::Transient,
                        minor::TRANSIENT_CANNOT_RESEND,
                        CompletionStatus::No,
                        || {
                            Cause::new(Phase::Forward)
                            .with_peer(&conn.ep)
                            .with_operation(self.op)
                            .with_detail(format_args!(
                                "re-sending needs other code sets or GIOP version than {} (not re-marshaled)",
                                old.ep
                            ))
                        },
                    ));
                }
            }
        }
        w.set_codesets(cs);
        // The common case (GIOP 1.2, no CodeSets context, not a re-send)
        // copies the header encoded for the last such call.
        let cacheable = !ctx && align.is_none() && target.version == GiopVersion::V1_2;
        if cacheable {
            if let Some(f) = target.write_header(self.op, self.st.twoway, id, w) {
                self.finish_prepare(w, f, id, cs, target.version, conn, led);
                return Ok(());
            }
        }
        let ctx_data;
        let contexts_arr;
        let contexts = if ctx {
            ctx_data = CodeSetContext {
                char_data: cs.char.id(),
                wchar_data: cs.wchar.unwrap_or(peregrine_cdr::WcharCodeSet::Utf16).id(),
            }
            .encode_data(w.order());
            contexts_arr = [ServiceContext {
                id: peregrine_giop::service_context::ids::CODE_SETS,
                data: &ctx_data,
            }];
            ServiceContexts::from_slice(&contexts_arr)
        } else {
            ServiceContexts::EMPTY
        };
        let flags = if self.st.twoway {
            ResponseFlags::SyncWithTarget
        } else {
            ResponseFlags::None
        };
        let pad = [0u8; 8];
        let mut principal: &[u8] = &[];
        let mut led = led;
        let pending = loop {
            let h = RequestHeader {
                request_id: id,
                response_flags: flags,
                target: TargetAddress::Key(&target.key),
                operation: self.op,
                service_contexts: contexts,
                requesting_principal: principal,
            };
            let p = encode_request(w, version, &h)
                .and_then(|p| Framing::of(p, w))
                .map_err(|e| {
                    give_up(&conn, id, std::mem::take(&mut led));
                    raise_giop(&e, CompletionStatus::No, || {
                        Cause::new(Phase::Encode)
                            .with_peer(&conn.ep)
                            .with_operation(self.op)
                            .with_detail(format_args!("request header: {e}"))
                    })
                })?;
            match align {
                Some(a) if version < GiopVersion::V1_2 && w.len() % 8 != a % 8 => {
                    // Pad with the (ignored) requesting principal.
                    let n = (a % 8 + 8 - w.len() % 8) % 8;
                    principal = &pad[..n];
                }
                _ => break p,
            }
        };
        if cacheable {
            target.store_header(self.op, self.st.twoway, w, pending);
        }
        self.finish_prepare(w, pending, id, cs, version, conn, led);
        Ok(())
    }

    /// [`Call::prepare`] for a LocateRequest: the whole message (it has
    /// no body) addressed by key.
    #[cold]
    #[inline(never)]
    fn prepare_locate(
        &mut self,
        w: &mut Writer,
        target: &Target,
        id: u32,
        cs: CodeSets,
        conn: Arc<ClientConn>,
        led: bool,
    ) -> Result<(), SystemException> {
        let h = LocateRequestHeader {
            request_id: id,
            target: TargetAddress::Key(&target.key),
        };
        if let Err(e) = encode_locate_request(w, target.version, &h) {
            give_up(&conn, id, led);
            return Err(raise_giop(&e, CompletionStatus::No, || {
                Cause::new(Phase::Encode)
                    .with_peer(&conn.ep)
                    .with_operation(self.op)
                    .with_detail(&e)
            }));
        }
        self.st.led = led;
        self.st.args_start = w.len();
        self.st.pending = None;
        self.st.request_id = id;
        self.st.codesets = cs;
        self.st.version = target.version;
        self.st.conn = Some(conn);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn finish_prepare(
        &mut self,
        w: &Writer,
        pending: Framing,
        id: u32,
        cs: CodeSets,
        version: GiopVersion,
        conn: Arc<ClientConn>,
        led: bool,
    ) {
        self.st.led = led;
        self.st.args_start = w.len();
        self.st.pending = Some(pending);
        self.st.request_id = id;
        self.st.codesets = cs;
        self.st.version = version;
        self.st.conn = Some(conn);
    }

    /// Re-binds (after a forward or a CloseConnection) and rewrites the
    /// header in front of the already-encoded arguments.
    fn relocate(&mut self, w: &mut Writer) -> Result<(), SystemException> {
        // A request without arguments was truncated to its header fields
        // (`Framing::finish`): nothing to keep then.
        let args = w
            .as_slice()
            .get(self.st.args_start..)
            .unwrap_or_default()
            .to_vec();
        let align = self.st.args_start % 8;
        self.prepare(w, Some(align))?;
        w.write_bytes(&args);
        Ok(())
    }

    #[inline(always)]
    pub(super) fn finish_message(&mut self, w: &mut Writer) -> Result<(), SystemException> {
        if let Some(p) = self.st.pending.take() {
            p.finish(w, self.tail.len()).map_err(|e| {
                raise_cdr(&e, CompletionStatus::No, || {
                    self.cause(Phase::Encode).with_detail(&e)
                })
            })?;
        }
        Ok(())
    }

    /// Sends and (for twoway) waits, following forwards and re-sending
    /// when the server provably did not process the request.
    pub(super) fn run(&mut self, w: &mut Writer) -> Result<Option<ReplyMsg>, SystemException> {
        loop {
            self.send(w)?;
            if !self.st.twoway {
                return Ok(None);
            }
            if let Some(reply) = self.await_reply(w)? {
                return Ok(Some(reply));
            }
        }
    }

    /// Sends the prepared request (`w` holds it), re-sending on a fresh
    /// connection when the write fails.
    #[inline(always)]
    pub(super) fn send(&mut self, w: &mut Writer) -> Result<(), SystemException> {
        loop {
            let pending = self.st.pending.take();
            self.st.sent_pending = pending;
            let conn = self.st.conn.as_ref().expect("prepared");
            self.tail = match frame_request(conn, w, pending, self.tail) {
                Ok(tail) => tail,
                Err(e) => {
                    return Err(raise_cdr(&e, CompletionStatus::No, || {
                        self.cause(Phase::Encode).with_detail(&e)
                    }))
                }
            };
            match conn.send(w.as_slice(), self.tail) {
                Ok(waited) if clock_stale(waited, w.len() + self.tail.len()) => {
                    self.st.clock = Instant::now()
                }
                Ok(_) => {}
                Err(e) => {
                    if self.st.resends < MAX_RESENDS {
                        trace::resend(&conn.ep, self.op, "the write failed");
                        self.restore_pending(pending);
                        self.resend(w)?;
                        continue;
                    }
                    let e = raise(
                        K::CommFailure,
                        peregrine_giop::system_exception::minor::COMM_FAILURE_SEND_FAILED,
                        CompletionStatus::No,
                        || self.cause(Phase::Send).with_io(e),
                    );
                    let e = self.failed(e);
                    self.st.abandon();
                    return Err(e);
                }
            }
            return Ok(());
        }
    }

    /// After a failed write (the connection marked failed): gives the
    /// connection up and rewrites the request for another, ready for
    /// [`Call::send`].
    pub(super) fn resend(&mut self, w: &mut Writer) -> Result<(), SystemException> {
        self.st.abandon();
        self.st.resends += 1;
        self.relocate(w)
    }

    /// Waits for the reply to the request just sent. `Ok(None)` means the
    /// request was re-targeted (forward, orderly close) and `w` holds it
    /// again, ready for [`Call::send`].
    #[inline(always)]
    pub(super) fn await_reply(
        &mut self,
        w: &mut Writer,
    ) -> Result<Option<ReplyMsg>, SystemException> {
        // The reply keeps the connection (one count, moved into it).
        let conn = self.st.conn.clone().expect("sent");
        let (id, deadline) = (self.st.request_id, self.st.deadline());
        // Nothing waited since the call started: its whole timeout is left.
        let left = (self.st.clock == self.st.started).then_some(self.st.timeout);
        let led = std::mem::take(&mut self.st.led);
        let cs = self.st.codesets;
        let mut ready = Ok(None);
        match await_reply_on(conn, id, led, deadline, self.st.clock, left, cs, &mut ready) {
            None => {
                if let (true, Ok(Some(reply))) = (trace::on(Level::TRACE), &ready) {
                    trace::reply(&reply.held.conn.ep, self.op, id);
                }
                ready
            }
            Some((conn, got)) => self.on_arrival(w, conn, got),
        }
    }

    /// What [`Call::await_reply`] makes of what arrived on `conn` (or
    /// why nothing did).
    #[inline(always)]
    pub(super) fn on_arrival(
        &mut self,
        w: &mut Writer,
        conn: Arc<ClientConn>,
        got: Result<Arrived, WaitError>,
    ) -> Result<Option<ReplyMsg>, SystemException> {
        let pending = self.st.sent_pending;
        let Some(arrived) = self.arrival(w, &conn, got)? else {
            return Ok(None);
        };
        let reply = ReplyMsg::new(Held::new(conn, arrived), self.st.codesets)
            .map_err(|e| e.with_operation(self.op))?;
        let conn = &reply.held.conn;
        if trace::on(Level::TRACE) {
            trace::reply(&conn.ep, self.op, self.st.request_id);
        }
        match reply.status {
            ReplyStatus::NoException | ReplyStatus::UserException => Ok(Some(reply)),
            ReplyStatus::SystemException => {
                // The closure is not redundant: `decode` alone is not
                // general over the reader's lifetime.
                #[allow(clippy::redundant_closure)]
                let e = reply
                    .with_reader(|r| <SystemException as peregrine_cdr::Decode>::decode(r))
                    .map_err(|e| {
                        raise_cdr(&e, CompletionStatus::Maybe, || {
                            Cause::new(Phase::Decode)
                                .with_peer(&conn.ep)
                                .with_operation(self.op)
                                .with_detail(format_args!("malformed system exception: {e}"))
                        })
                    })?;
                trace::exception(&conn.ep, self.op, &e);
                Err(raised_by_peer(e, &conn.ep, self.op))
            }
            ReplyStatus::LocationForward | ReplyStatus::LocationForwardPerm => {
                #[allow(clippy::redundant_closure)] // As above.
                let ior = reply.with_reader(|r| <Ior as peregrine_cdr::Decode>::decode(r));
                let ep = conn.ep.clone();
                drop(reply);
                self.follow_forward(w, &ep, ior, pending)?;
                Ok(None)
            }
            ReplyStatus::NeedsAddressingMode => Err(needs_addressing(&conn.ep, self.op)),
        }
    }

    /// The message that arrived for the request just sent, or why none
    /// did: `Ok(None)` when the request was re-targeted (the server closed
    /// the connection in order, or, for a LocateRequest, at all) and `w`
    /// holds it again, ready for [`Call::send`].
    #[inline(always)]
    pub(super) fn arrival(
        &mut self,
        w: &mut Writer,
        conn: &ClientConn,
        got: Result<Arrived, WaitError>,
    ) -> Result<Option<Arrived>, SystemException> {
        let pending = self.st.sent_pending;
        // A LocateRequest has no effect: it did not run, whatever
        // happened to it, and asking again is always safe.
        let completed = if self.st.locate {
            CompletionStatus::No
        } else {
            CompletionStatus::Maybe
        };
        match got {
            Ok(a) => Ok(Some(a)),
            Err(WaitError::TimedOut) => Err(self.failed(raise(
                K::Timeout,
                peregrine_giop::system_exception::minor::TIMEOUT_CALL_TIMED_OUT,
                completed,
                || {
                    Cause::new(Phase::Receive)
                        .with_peer(&conn.ep)
                        .with_operation(self.op)
                        .with_detail(format_args!(
                            "deadline of {:?} expired waiting for the reply",
                            self.st.timeout
                        ))
                },
            ))),
            Err(WaitError::Closed(c))
                if (matches!(c, Closed::Orderly) || self.st.locate)
                    && self.st.resends < MAX_RESENDS =>
            {
                trace::resend(&conn.ep, self.op, "the server closed the connection");
                self.st.resends += 1;
                self.restore_pending(pending);
                self.relocate(w)?;
                Ok(None)
            }
            Err(WaitError::Closed(c)) => {
                let why = match c {
                    Closed::Orderly => "the server closed the connection".to_string(),
                    Closed::Broken(s) => s,
                    Closed::Idle => "the connection was closed as idle".to_string(),
                };
                Err(self.failed(raise(
                    K::CommFailure,
                    peregrine_giop::system_exception::minor::COMM_FAILURE_WAITING_FOR_REPLY,
                    completed,
                    || {
                        Cause::new(Phase::Receive)
                            .with_peer(&conn.ep)
                            .with_operation(self.op)
                            .with_detail(why)
                    },
                )))
            }
        }
    }

    /// Follows a forward (LOCATION_FORWARD or, for a LocateRequest,
    /// OBJECT_FORWARD) from `peer` to `ior`: re-targets the reference and
    /// rewrites the request for the new target, ready for [`Call::send`].
    #[cold]
    #[inline(never)]
    pub(super) fn follow_forward(
        &mut self,
        w: &mut Writer,
        peer: &Endpoint,
        ior: peregrine_cdr::Result<Ior>,
        pending: Option<Framing>,
    ) -> Result<(), SystemException> {
        trace::forward(peer, self.op);
        let ior = ior.map_err(|e| {
            raise_cdr(&e, CompletionStatus::No, || {
                Cause::new(Phase::Decode)
                    .with_peer(peer)
                    .with_operation(self.op)
                    .with_detail(format_args!("malformed forward: {e}"))
            })
        })?;
        self.st.forwards += 1;
        if self.st.forwards > MAX_FORWARDS {
            return Err(raise(
                K::Transient,
                minor::TRANSIENT_TOO_MANY_FORWARDS,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Forward)
                        .with_operation(self.op)
                        .with_detail(format_args!("more than {MAX_FORWARDS} forwards"))
                },
            ));
        }
        let max = self.obj.inner.orb.inner().config.max_giop;
        let t = Target::from_ior(&ior, true, max, |p| Arc::new(Route::new(p)))?;
        self.obj.inner.set_target(Some(Arc::new(t)));
        self.restore_pending(pending);
        self.relocate(w)
    }

    /// `finish` consumed the pending marker; a re-send writes a new header,
    /// so only the body start matters (kept for the re-marshal check).
    fn restore_pending(&mut self, p: Option<Framing>) {
        self.st.pending = p;
    }
}

/// The steps every request takes once its header and arguments are in
/// `w`, shared by the lean call ([`super::fast`]) and [`Call`]: framing,
/// the clock after the write, the reply wait.
///
/// Frames the request in `w` for `conn`: a `tail` too long for the
/// message to go whole joins the arguments (fragmenting needs the message
/// in one piece), then `framing` (`None`: nothing to finish) gets the
/// message size.
///
/// The tail still to send after `w` comes back.
#[inline(always)]
pub(super) fn frame_request<'t>(
    conn: &ClientConn,
    w: &mut Writer,
    framing: Option<Framing>,
    mut tail: &'t [u8],
) -> Result<&'t [u8], peregrine_cdr::CdrError> {
    if !tail.is_empty() && w.len() + tail.len() > conn.fragment_limit() {
        w.write_bytes(tail);
        tail = &[];
    }
    if let Some(f) = framing {
        f.finish(w, tail.len())?;
    }
    Ok(tail)
}

/// Whether the reply wait must take a fresh clock reading after a write
/// of `sent` bytes that `waited` (see [`ClientConn::send`]): the write may
/// have blocked (a contended lock, or a message large enough to fill the
/// socket buffer), so the wait counts from then, not from the call's
/// start.
#[inline(always)]
pub(super) fn clock_stale(waited: bool, sent: usize) -> bool {
    waited || sent > LONG_WRITE
}

/// Waits for the reply to request `id` on `conn`: read by this thread
/// as the connection's leader (`led`), or filed by the leader. The common
/// reply (NO_EXCEPTION or USER_EXCEPTION with the fixed header, read in
/// place) is written to `ready`, ready to decode (`None` returned);
/// anything else comes back as what arrived, or why nothing did, for
/// [`Call::on_arrival`].
///
/// `ready` is the caller's outcome, written in place (as the lean path
/// keeps its outcome where its caller has it; see `fast_call`).
/// `clock` is the caller's latest clock reading and `left`, when it knows
/// it, the time from there to `deadline` (see [`ClientConn::lead`]).
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn await_reply_on(
    conn: Arc<ClientConn>,
    id: u32,
    led: bool,
    deadline: Deadline,
    clock: Instant,
    left: Option<Duration>,
    cs: CodeSets,
    ready: &mut Result<Option<ReplyMsg>, SystemException>,
) -> Option<(Arc<ClientConn>, Result<Arrived, WaitError>)> {
    let got = if led {
        // SAFETY: the caller leads the connection (`led`, from `begin`);
        // leadership is handed back by `after_lead`, the reply's release
        // or, if this thread unwinds, the reply's drop; the borrow ends
        // with `lead`.
        let got = conn.lead(unsafe { conn.rx.get() }, id, deadline, clock, left);
        if let Lead::Mine(Got::InPlace(len, Some(head))) = got {
            if matches!(
                head.status,
                ReplyStatus::NoException | ReplyStatus::UserException
            ) {
                let arrived = Arrived {
                    own: None,
                    len,
                    head: Some(head),
                };
                *ready = Ok(Some(ReplyMsg::fast(Held::new(conn, arrived), cs, head)));
                return None;
            }
        }
        conn.after_lead(got).map_err(|(_, e)| e)
    } else {
        conn.wait(id, deadline.instant(), None)
    };
    Some((conn, got))
}

/// The exception for CDR error `e` (see `SystemException::from_cdr`),
/// with `cause` and `e` as its detail.
#[cold]
#[inline(never)]
pub(super) fn cdr_to_sys(
    e: &peregrine_cdr::CdrError,
    completed: CompletionStatus,
    cause: impl FnOnce() -> Cause,
) -> SystemException {
    SystemException::from_cdr(e, completed).with_cause(cause().with_detail(e))
}

/// `e`, raised by the peer, with the client's side of the story: the
/// reply phase, the peer and the operation (the wire carries none).
#[cold]
#[inline(never)]
pub(super) fn raised_by_peer(e: SystemException, peer: &Endpoint, op: &str) -> SystemException {
    e.with_cause(Cause::new(Phase::Reply).with_peer(peer).with_operation(op))
}

/// The exception for a server that needs another addressing mode than
/// the object key (the only one this client sends).
#[cold]
#[inline(never)]
pub(super) fn needs_addressing(peer: &Endpoint, op: &str) -> SystemException {
    raise(
        K::NoImplement,
        minor::NO_IMPLEMENT_ADDRESSING_MODE,
        CompletionStatus::No,
        || {
            Cause::new(Phase::Reply)
                .with_peer(peer)
                .with_operation(op)
                .with_detail("needs an addressing mode other than KeyAddr")
        },
    )
}

/// Why a connect was not even tried: the endpoint failed recently. The
/// cause carries the last attempt's I/O error.
#[cold]
#[inline(never)]
pub(super) fn backoff_cause(
    ep: &Endpoint,
    left: Duration,
    failures: u32,
    last: Option<Arc<std::io::Error>>,
) -> Cause {
    let c = Cause::new(Phase::Connect)
        .with_peer(ep)
        .with_detail(format_args!(
            "endpoint in backoff for {left:?} after {failures} failure(s)"
        ));
    match last {
        Some(io) => c.with_shared_io(io),
        None => c,
    }
}

pub(crate) fn invoke<T, E: From<SystemException>>(
    obj: &ObjectRef,
    op: &str,
    encode_args: impl EncodeArgs,
    decode_result: impl DecodeResult<T>,
    decode_user_exception: impl DecodeUserException<E>,
) -> Result<T, E> {
    invoke_with_tail(
        obj,
        op,
        encode_args,
        None,
        decode_result,
        decode_user_exception,
    )
}

/// The results or user exception of a NO_EXCEPTION / USER_EXCEPTION reply.
pub(super) fn decode_reply<T, E: From<SystemException>>(
    reply: ReplyMsg,
    op: &str,
    decode_result: impl DecodeResult<T>,
    decode_user_exception: impl DecodeUserException<E>,
) -> Result<T, E> {
    let no_exception = reply.status == ReplyStatus::NoException;
    reply.finish(|r, conn| {
        decode_body(
            r,
            &conn.ep,
            no_exception,
            op,
            decode_result,
            decode_user_exception,
        )
    })
}

/// [`decode_reply`] on the body's reader `r`. Generic (one copy per stub
/// operation) only where the stub's decoders are called: each failure is
/// built by a function shared by every stub.
fn decode_body<T, E: From<SystemException>>(
    r: &mut Reader<'_>,
    peer: &Endpoint,
    no_exception: bool,
    op: &str,
    decode_result: impl DecodeResult<T>,
    decode_user_exception: impl DecodeUserException<E>,
) -> Result<T, E> {
    if no_exception {
        return decode_result(r).map_err(|e| E::from(results_failed(&e, peer, op)));
    }
    // USER_EXCEPTION: repository id, then members.
    let id = user_exception_id(r, peer, op)?;
    match decode_user_exception(id, r) {
        Some(Ok(e)) => Err(e),
        Some(Err(e)) => Err(E::from(user_exception_failed(&e, id, peer, op))),
        None => Err(E::from(unknown_user_exception(id, peer, op))),
    }
}

/// The results of `op` could not be decoded.
#[cold]
#[inline(never)]
fn results_failed(e: &CdrError, peer: &Endpoint, op: &str) -> SystemException {
    cdr_to_sys(e, CompletionStatus::Yes, || {
        Cause::new(Phase::Decode).with_peer(peer).with_operation(op)
    })
}

/// The repository id that starts a USER_EXCEPTION reply's body.
#[inline(never)]
fn user_exception_id<'a>(
    r: &mut Reader<'a>,
    peer: &Endpoint,
    op: &str,
) -> Result<&'a str, SystemException> {
    match r.read_string_bytes().map(std::str::from_utf8) {
        Ok(Ok(id)) => Ok(id),
        bad => {
            // An id that is not UTF-8 is text the code set cannot carry,
            // as in a system exception's id.
            let e = bad.err().unwrap_or(CdrError::InvalidText);
            Err(raise_cdr(&e, CompletionStatus::Yes, || {
                Cause::new(Phase::Decode)
                    .with_peer(peer)
                    .with_operation(op)
                    .with_detail(format_args!("user exception id: {e}"))
            }))
        }
    }
}

/// The members of user exception `id` could not be decoded.
#[cold]
#[inline(never)]
fn user_exception_failed(e: &CdrError, id: &str, peer: &Endpoint, op: &str) -> SystemException {
    cdr_to_sys(e, CompletionStatus::Yes, || {
        Cause::new(Phase::Decode)
            .with_peer(peer)
            .with_operation(op)
            .with_detail(format_args!("user exception {id}"))
    })
}

/// The stub of `op` does not know user exception `id`.
#[cold]
#[inline(never)]
fn unknown_user_exception(id: &str, peer: &Endpoint, op: &str) -> SystemException {
    raise(
        K::Unknown,
        peregrine_giop::system_exception::minor::UNKNOWN_USER_EXCEPTION,
        CompletionStatus::Yes,
        || {
            Cause::new(Phase::Reply)
                .with_peer(peer)
                .with_operation(op)
                .with_detail(format_args!("user exception {id}, unknown to the stub"))
        },
    )
}
