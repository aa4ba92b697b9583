//! The client end: sends requests, matches answers to them, follows the
//! rules for forwards, cancellation, deadlines and closing.

use std::collections::VecDeque;
use std::time::Instant;

use peregrine_cdr::{CdrError, GiopVersion, Writer};

use super::config::Config;
use super::event::{owned_contexts, ClientEvent, CloseReason, ConnError, IncomingReply, RequestId};
use super::input::{msg_type, Incoming};
use super::link::{Link, State};
use super::pending::{Kind, PendingCall, PendingTable};
use super::transmit::{Tag, Transmit};
use crate::error::GiopError;
use crate::fast;
use crate::fragment::read_u32_at;
use crate::header::{MessageHeader, MsgType, HEADER_LEN};
use crate::message::{
    decode_message, encode_cancel_request, encode_locate_request, encode_request, Body,
    LocateRequestHeader, LocateStatus, Message, ReplyStatus, RequestHeader, ResponseFlags,
};
use crate::service_context::OwnedServiceContext;
use crate::service_context::{ServiceContext, ServiceContexts};
use crate::system_exception::{CompletionStatus, SystemException, SystemExceptionKind as K};
use crate::target::TargetAddress;

/// A request to send: its target, operation and how it is answered.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    target: TargetAddress<'a>,
    operation: &'a str,
    response: ResponseFlags,
    service_contexts: &'a [ServiceContext<'a>],
    deadline: Option<Instant>,
    hops: u32,
}

impl<'a> Call<'a> {
    /// A twoway call of `operation` on the object with `object_key`.
    pub fn new(object_key: &'a [u8], operation: &'a str) -> Self {
        Self {
            target: TargetAddress::Key(object_key),
            operation,
            response: ResponseFlags::SyncWithTarget,
            service_contexts: &[],
            deadline: None,
            hops: 0,
        }
    }

    /// Addresses the target otherwise than by key (GIOP 1.2).
    #[must_use]
    pub fn with_target(mut self, target: TargetAddress<'a>) -> Self {
        self.target = target;
        self
    }

    /// A oneway call (`response_flags` 0: no reply, nothing pending).
    #[must_use]
    pub fn oneway(self) -> Self {
        self.with_response(ResponseFlags::None)
    }

    /// Sets the response flags.
    #[must_use]
    pub fn with_response(mut self, response: ResponseFlags) -> Self {
        self.response = response;
        self
    }

    /// Service contexts to send (the machine adds the code sets to the
    /// first request).
    #[must_use]
    pub fn with_service_contexts(mut self, contexts: &'a [ServiceContext<'a>]) -> Self {
        self.service_contexts = contexts;
        self
    }

    /// Fails the call with `TIMEOUT` if it has no answer by `deadline`.
    #[must_use]
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Forwards already followed to get here (from
    /// [`ClientEvent::Forward`]).
    #[must_use]
    pub fn with_hops(mut self, hops: u32) -> Self {
        self.hops = hops;
        self
    }
}

/// The client end of a GIOP connection, sans I/O.
///
/// Feed it the bytes the transport reads ([`handle_input`]), write what
/// [`poll_transmit`] returns, act on [`poll_event`], and call
/// [`handle_timeout`] when [`poll_timeout`] passes. See the
/// [module documentation](super) for a driving loop.
///
/// [`handle_input`]: ClientConnection::handle_input
/// [`poll_transmit`]: ClientConnection::poll_transmit
/// [`poll_event`]: ClientConnection::poll_event
/// [`handle_timeout`]: ClientConnection::handle_timeout
/// [`poll_timeout`]: ClientConnection::poll_timeout
#[derive(Debug)]
pub struct ClientConnection {
    link: Link,
    pending: PendingTable,
    events: VecDeque<ClientEvent>,
    codesets_sent: bool,
    requests_sent: u64,
    /// The driver keeps the requests awaiting answers
    /// ([`ClientConnection::matched_by_driver`]).
    driver_matches: bool,
    /// The version of the last message received (the configured one
    /// before any): MessageError goes in it.
    peer_version: GiopVersion,
}

impl ClientConnection {
    /// A connection that opened at `now`.
    pub fn new(config: Config, now: Instant) -> Self {
        let peer_version = config.version;
        Self {
            link: Link::new(config, now),
            pending: PendingTable::default(),
            events: VecDeque::new(),
            codesets_sent: false,
            requests_sent: 0,
            driver_matches: false,
            peer_version,
        }
    }

    /// A connection that opened at `now` whose driver keeps the requests
    /// awaiting answers itself (an ORB that sends its requests and reads
    /// its common replies without the machine, and gives the machine only
    /// the other messages).
    ///
    /// The machine then reports every answer by its id, whether or not
    /// it knows the request, and leaves the matching to the driver:
    /// [`ClientEvent::Reply`] for every Reply, forwards included (their
    /// body holds the IOR), [`ClientEvent::LocateReply`] for every
    /// LocateReply, forwards included, and [`ClientEvent::Failed`]
    /// (`MARSHAL`) for a reply or locate reply whose id can be read but
    /// whose header cannot be decoded. Everything else is as on
    /// [`ClientConnection::new`]: fragments are reassembled,
    /// CloseConnection and MessageError close the connection, and
    /// malformed or unexpected input is answered with MessageError.
    pub fn matched_by_driver(config: Config, now: Instant) -> Self {
        Self {
            driver_matches: true,
            ..Self::new(config, now)
        }
    }

    /// Sends a request whose arguments are `body`, already marshalled for
    /// the stream position where the body starts (8-aligned in GIOP 1.2;
    /// for GIOP 1.0/1.1 prefer [`send_request_with`](Self::send_request_with)).
    pub fn send_request(&mut self, call: Call<'_>, body: &[u8]) -> Result<RequestId, ConnError> {
        self.send(call, body.len(), |w| {
            w.write_bytes(body);
            Ok(())
        })
    }

    /// Sends a request whose arguments `marshal` writes straight after
    /// the header, into the message itself (no copy, and the alignment of
    /// every version is right).
    pub fn send_request_with(
        &mut self,
        call: Call<'_>,
        marshal: impl FnOnce(&mut Writer) -> Result<(), CdrError>,
    ) -> Result<RequestId, ConnError> {
        self.send(call, 64, marshal)
    }

    /// Sends a request, reserving room for a body of about `body_len`.
    fn send(
        &mut self,
        call: Call<'_>,
        body_len: usize,
        marshal: impl FnOnce(&mut Writer) -> Result<(), CdrError>,
    ) -> Result<RequestId, ConnError> {
        if self.link.state != State::Open {
            return Err(ConnError::Closed);
        }
        let id = self.pending.next_id();
        let version = self.link.config.version;
        // The code sets go once, with the first request (GIOP 1.0 has no
        // negotiation).
        let codesets_due = self.link.config.codesets.is_some()
            && !self.codesets_sent
            && version >= GiopVersion::V1_1;
        let (mut w, p) = match call.target {
            // The common request: its header at fixed offsets.
            TargetAddress::Key(key)
                if version == GiopVersion::V1_2
                    && !codesets_due
                    && call.service_contexts.is_empty() =>
            {
                let len = 64 + key.len() + call.operation.len() + body_len;
                let mut w = self.link.writer(len);
                let p = fast::write_request(&mut w, id, call.response, key, call.operation)?;
                (w, p)
            }
            _ => self.encode_header(&call, id, codesets_due, body_len)?,
        };
        marshal(&mut w)?;
        p.finish(&mut w)?;
        let expects_reply = call.response.response_expected();
        let tag = if expects_reply {
            Tag::Request(id)
        } else {
            Tag::Plain
        };
        self.link.queue(w.into_vec(), tag)?;
        if expects_reply {
            self.pending.insert(
                id,
                PendingCall {
                    kind: Kind::Request,
                    sent: false,
                    deadline: call.deadline,
                    hops: call.hops,
                },
            );
        }
        self.codesets_sent |= codesets_due;
        self.requests_sent += 1;
        Ok(RequestId(id))
    }

    /// A request header in any version, with service contexts (the code
    /// sets first when `codesets` says they are due).
    #[inline(never)]
    fn encode_header(
        &mut self,
        call: &Call<'_>,
        id: u32,
        codesets: bool,
        body_len: usize,
    ) -> Result<(Writer, crate::message::Pending), ConnError> {
        let codesets = self
            .link
            .config
            .codesets
            .filter(|_| codesets)
            .map(|cs| cs.to_context(self.link.order()));
        let mut list = Vec::new();
        let contexts = match &codesets {
            Some(cs) => {
                list.reserve(call.service_contexts.len() + 1);
                list.push(cs.as_context());
                list.extend_from_slice(call.service_contexts);
                ServiceContexts::from_slice(&list)
            }
            None => ServiceContexts::from_slice(call.service_contexts),
        };
        let header = RequestHeader {
            request_id: id,
            response_flags: call.response,
            target: call.target.clone(),
            operation: call.operation,
            service_contexts: contexts,
            requesting_principal: &[],
        };
        // Header fields, the key and name, padding, and a little room for
        // contexts.
        let key_len = header.target.object_key().map_or(64, <[u8]>::len);
        let mut w = self
            .link
            .writer(64 + key_len + call.operation.len() + body_len);
        let p = encode_request(&mut w, self.link.config.version, &header)?;
        Ok((w, p))
    }

    /// Asks whether the server has the object at `target`; answered by
    /// [`ClientEvent::LocateReply`] or [`ClientEvent::Forward`].
    pub fn send_locate_request(
        &mut self,
        target: TargetAddress<'_>,
        deadline: Option<Instant>,
    ) -> Result<RequestId, ConnError> {
        if self.link.state != State::Open {
            return Err(ConnError::Closed);
        }
        let id = self.pending.next_id();
        let mut w = self
            .link
            .writer(64 + target.object_key().map_or(64, <[u8]>::len));
        let h = LocateRequestHeader {
            request_id: id,
            target,
        };
        encode_locate_request(&mut w, self.link.config.version, &h)?;
        self.link.queue(w.into_vec(), Tag::Request(id))?;
        self.pending.insert(
            id,
            PendingCall {
                kind: Kind::Locate,
                sent: false,
                deadline,
                hops: 0,
            },
        );
        self.requests_sent += 1;
        Ok(RequestId(id))
    }

    /// Cancels a pending request: the server is told (CancelRequest) and
    /// its reply, if one still comes, is dropped. False if `id` was not
    /// pending.
    pub fn cancel(&mut self, id: RequestId) -> bool {
        let Some(call) = self.pending.remove(id.0) else {
            return false;
        };
        if call.kind == Kind::Request {
            self.send_cancel(id.0);
        }
        true
    }

    fn send_cancel(&mut self, id: u32) {
        let mut w = self.link.writer(HEADER_LEN + 4);
        if encode_cancel_request(&mut w, self.link.config.version, id).is_ok() {
            self.link.queue(w.into_vec(), Tag::Plain).ok();
        }
    }

    /// Takes bytes read from the transport at `now`: any part of the
    /// stream, down to one byte at a time.
    pub fn handle_input(&mut self, bytes: &[u8], now: Instant) {
        if self.link.state != State::Open {
            return;
        }
        self.link.idle.touch(now);
        let mut input = bytes;
        // Nothing comes out of no input: stop once it is all taken.
        while !input.is_empty() && self.link.state == State::Open {
            match self.link.next_message(&mut input) {
                None => break,
                Some(Ok(msg)) => self.on_message(msg),
                Some(Err(e)) => self.protocol_error(e),
            }
        }
    }

    /// Reports traffic the driver carried itself (a request it framed
    /// and wrote, a reply it matched on its fast path) by `now`: the idle
    /// timer starts again from there. A driver may report it late and in
    /// bulk (say, from a periodic scan that found the connection used
    /// since the last one); an earlier instant than one already reported
    /// changes nothing.
    pub fn note_activity(&mut self, now: Instant) {
        self.link.idle.touch(now);
    }

    /// The transport ended (end of stream or an error).
    pub fn handle_eof(&mut self) {
        if self.link.state != State::Open {
            // Closed already reported; only stop sending.
            self.link.abort(CloseReason::TransportClosed);
            return;
        }
        self.close(CloseReason::TransportClosed, false);
        self.link.abort(CloseReason::TransportClosed);
    }

    /// The next bytes to write, at `now`.
    #[inline]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        let (t, tag) = self.link.poll_transmit(now)?;
        if let Tag::Request(id) = tag {
            self.pending.mark_sent(id);
        }
        Some(t)
    }

    /// Gives a message buffer back for reuse: a written [`Transmit`]'s
    /// ([`Transmit::into_buffer`]) or a received message's
    /// ([`Incoming::into_message`]). A driver that does so allocates
    /// nothing per message once the connection is warm.
    ///
    /// [`Incoming::into_message`]: super::Incoming::into_message
    #[inline]
    pub fn recycle(&mut self, buf: Vec<u8>) {
        self.link.pool.put(buf);
    }

    /// The next thing that happened.
    #[inline]
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) should next run.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.link.is_closed() {
            return None;
        }
        let idle = self.link.idle.deadline(self.outstanding());
        match (self.pending.next_deadline(), idle) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Expires the deadlines at or before `now` (`TIMEOUT`, and a
    /// CancelRequest for a request that left), then the idle timer.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.link.is_closed() {
            return;
        }
        while let Some((id, call)) = self.pending.pop_expired(now) {
            if call.sent && call.kind == Kind::Request {
                self.send_cancel(id);
            }
            self.fail(id, K::Timeout, call.completion());
        }
        if self.link.state == State::Open && self.link.idle.expired(self.outstanding(), now) {
            self.close(CloseReason::Idle, true);
            self.link.abort(CloseReason::Idle);
        }
    }

    /// Closes the connection from this end: pending requests fail
    /// (`TRANSIENT` if they never left, `COMM_FAILURE` maybe-completed if
    /// they did) and nothing more is sent.
    pub fn abort(&mut self) {
        if self.link.state != State::Open {
            self.link.abort(CloseReason::Shutdown);
            return;
        }
        self.close(CloseReason::Shutdown, false);
        self.link.abort(CloseReason::Shutdown);
    }

    /// Requests awaiting an answer.
    pub fn pending_requests(&self) -> usize {
        self.pending.len()
    }

    /// Requests (and locate requests) sent so far.
    pub fn requests_sent(&self) -> u64 {
        self.requests_sent
    }

    /// True once the connection is closed and everything queued was
    /// taken.
    pub fn is_closed(&self) -> bool {
        self.link.is_closed()
    }

    fn outstanding(&self) -> bool {
        !self.pending.is_empty() || self.link.receiving() || !self.link.out.is_empty()
    }

    fn on_message(&mut self, msg: Vec<u8>) {
        // The deframer checked the header: the minor version is known.
        if let Some(&minor) = msg.get(5) {
            self.peer_version = GiopVersion::from_minor(minor);
        }
        if let Some(t @ (MsgType::Request | MsgType::LocateRequest | MsgType::CancelRequest)) =
            msg_type(&msg)
        {
            return self.protocol_error(GiopError::UnexpectedMessage(t));
        }
        let limits = self.link.config.limits;
        if let Some(r) = fast::read_reply(&msg, &limits) {
            let (id, status, order, body_at) =
                (r.request_id, r.status, r.body.order, r.body.offset);
            let message = Incoming::from_parts(msg, body_at, order, GiopVersion::V1_2);
            return self.on_reply(id, status, Vec::new(), message);
        }
        let decoded = decode_message(&msg, &limits);
        let (h, m) = match decoded {
            Ok(d) => d,
            Err(e) => return self.malformed(&msg, e),
        };
        match m {
            Message::Reply { header, body } => {
                let id = header.request_id;
                let status = header.status;
                let contexts = owned_contexts(&header.service_contexts);
                let body_at = body.offset;
                let message = Incoming::from_parts(msg, body_at, h.order, h.version);
                self.on_reply(id, status, contexts, message);
            }
            Message::LocateReply { header, body } => {
                let id = header.request_id;
                if self.driver_matches {
                    self.pending.remove(id);
                    let body_at = body.offset;
                    self.events.push_back(ClientEvent::LocateReply {
                        id: RequestId(id),
                        status: header.status,
                        message: Incoming::from_parts(msg, body_at, h.order, h.version),
                    });
                    return;
                }
                let Some(call) = self.take_call(id, Kind::Locate) else {
                    return;
                };
                match header.status {
                    LocateStatus::ObjectForward => self.forward(id, call, &body, false),
                    LocateStatus::ObjectForwardPerm => self.forward(id, call, &body, true),
                    status => {
                        let body_at = body.offset;
                        self.events.push_back(ClientEvent::LocateReply {
                            id: RequestId(id),
                            status,
                            message: Incoming::from_parts(msg, body_at, h.order, h.version),
                        });
                    }
                }
            }
            Message::CloseConnection => {
                // The server did not and will not process what it has not
                // answered: every pending request may be sent again.
                self.close(CloseReason::PeerClosed, true);
                self.link.abort(CloseReason::PeerClosed);
            }
            Message::MessageError => {
                self.close(CloseReason::PeerMessageError, false);
                self.link.abort(CloseReason::PeerMessageError);
            }
            other => self.protocol_error(GiopError::UnexpectedMessage(other.msg_type())),
        }
    }

    #[inline]
    fn on_reply(
        &mut self,
        id: u32,
        status: ReplyStatus,
        service_contexts: Vec<OwnedServiceContext>,
        message: Incoming,
    ) {
        if self.driver_matches {
            self.pending.remove(id);
            return self.events.push_back(ClientEvent::Reply(IncomingReply {
                id: RequestId(id),
                status,
                service_contexts,
                message,
            }));
        }
        let Some(call) = self.take_call(id, Kind::Request) else {
            return;
        };
        match status {
            ReplyStatus::LocationForward => self.forward(id, call, &message.body(), false),
            ReplyStatus::LocationForwardPerm => self.forward(id, call, &message.body(), true),
            status => self.events.push_back(ClientEvent::Reply(IncomingReply {
                id: RequestId(id),
                status,
                service_contexts,
                message,
            })),
        }
    }

    /// Removes the call an answer is for; `None` (answer dropped) if it
    /// is not pending (cancelled, timed out, never sent). An answer of
    /// the wrong kind fails the call.
    fn take_call(&mut self, id: u32, kind: Kind) -> Option<PendingCall> {
        let call = self.pending.remove(id)?;
        if call.kind != kind {
            self.fail(id, K::Marshal, CompletionStatus::Maybe);
            return None;
        }
        Some(call)
    }

    fn forward(&mut self, id: u32, call: PendingCall, body: &Body<'_>, permanent: bool) {
        let ior = match body.forward_ior() {
            Ok(ior) => ior,
            Err(e) => {
                let ex = e.to_system_exception(CompletionStatus::No);
                self.events.push_back(ClientEvent::Failed {
                    id: RequestId(id),
                    exception: ex,
                });
                return;
            }
        };
        let hops = call.hops.saturating_add(1);
        if hops > self.link.config.max_forwards {
            return self.fail(id, K::Transient, CompletionStatus::No);
        }
        self.events.push_back(ClientEvent::Forward {
            id: RequestId(id),
            ior,
            permanent,
            hops,
        });
    }

    /// A well-framed message whose content is malformed: a reply whose id
    /// can be read fails its call with `MARSHAL`; anything else breaks
    /// the stream.
    fn malformed(&mut self, msg: &[u8], e: GiopError) {
        if !e.is_message_error() {
            let id = MessageHeader::decode(msg, &self.link.config.limits)
                .ok()
                .and_then(|h| {
                    let reply = matches!(h.msg_type, MsgType::Reply | MsgType::LocateReply);
                    (reply && h.version >= GiopVersion::V1_2)
                        .then(|| read_u32_at(msg, HEADER_LEN, h.order))
                        .flatten()
                });
            if let Some(id) = id {
                if self.pending.remove(id).is_some() || self.driver_matches {
                    let ex = e.to_system_exception(CompletionStatus::Maybe);
                    self.events.push_back(ClientEvent::Failed {
                        id: RequestId(id),
                        exception: ex,
                    });
                }
                return;
            }
        }
        self.protocol_error(e);
    }

    fn protocol_error(&mut self, e: GiopError) {
        self.close(CloseReason::ProtocolError(e.clone()), false);
        self.link.protocol_error(e, self.peer_version);
    }

    fn fail(&mut self, id: u32, kind: K, completed: CompletionStatus) {
        self.events.push_back(ClientEvent::Failed {
            id: RequestId(id),
            exception: SystemException::new(kind, 0, completed),
        });
    }

    /// Fails every pending request and reports the close. `orderly`: the
    /// server said it processed none of them (CloseConnection), or none
    /// left; otherwise those that left may have run.
    fn close(&mut self, reason: CloseReason, orderly: bool) {
        let calls: Vec<_> = self.pending.drain().collect();
        for (id, call) in calls {
            let (kind, completed) = if orderly || !call.sent {
                (K::Transient, CompletionStatus::No)
            } else {
                (K::CommFailure, CompletionStatus::Maybe)
            };
            self.fail(id, kind, completed);
        }
        self.events.push_back(ClientEvent::Closed { reason });
    }
}
