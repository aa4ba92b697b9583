//! The server end: receives requests, sends their replies, records the
//! negotiated code sets and shuts down in order.

use std::collections::VecDeque;
use std::time::Instant;

use std::ops::Range;

use peregrine_cdr::{ByteOrder, CdrError, GiopVersion, Writer};

use super::config::Config;
use super::event::{
    owned_contexts, range_in, CloseReason, ConnError, IncomingLocate, IncomingRequest, RequestId,
    ServerEvent, Target,
};
use super::idmap::IdMap;
use super::input::{msg_type, Incoming};
use super::link::{Link, State};
use super::transmit::{Tag, Transmit};
use crate::error::GiopError;
use crate::fast;
use crate::fragment::{legacy_request_id, read_u32_at};
use crate::header::{MessageHeader, MsgType, HEADER_LEN};
use crate::message::{
    decode_message, encode_locate_reply, encode_reply, encode_system_exception_reply,
    LocateReplyHeader, LocateStatus, Message, ReplyHeader, ReplyStatus, ResponseFlags,
};
use crate::service_context::{
    ids, CodeSetContext, OwnedServiceContext, ServiceContext, ServiceContexts,
};
use crate::system_exception::CompletionStatus;

/// What a request in progress is answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Reply,
    LocateReply,
}

/// A request received and not answered yet: the version to answer in.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    answer: Answer,
    version: GiopVersion,
}

/// A received request's fields, as ranges of its message (which moves
/// into the event).
struct Parts {
    id: u32,
    response_flags: ResponseFlags,
    target: Target,
    operation: Range<usize>,
    service_contexts: Vec<OwnedServiceContext>,
    body_at: usize,
    order: ByteOrder,
    version: GiopVersion,
}

/// The server end of a GIOP connection, sans I/O; driven like
/// [`super::ClientConnection`].
#[derive(Debug)]
pub struct ServerConnection {
    link: Link,
    in_flight: IdMap<InFlight>,
    events: VecDeque<ServerEvent>,
    codesets: Option<CodeSetContext>,
    /// Version of the last message received, for the messages this end
    /// starts (CloseConnection, MessageError).
    peer_version: GiopVersion,
    /// A message was received (else `peer_version` is the configured one).
    seen: bool,
}

impl ServerConnection {
    /// A connection accepted at `now`.
    pub fn new(config: Config, now: Instant) -> Self {
        Self {
            peer_version: config.version,
            seen: false,
            link: Link::new(config, now),
            in_flight: IdMap::default(),
            events: VecDeque::new(),
            codesets: None,
        }
    }

    /// The code sets the client chose, from the first request that
    /// carried them (later ones are ignored, as GIOP says).
    pub fn negotiated_codesets(&self) -> Option<CodeSetContext> {
        self.codesets
    }

    /// Requests received and not answered yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// True once the connection is closed and everything queued was
    /// taken.
    pub fn is_closed(&self) -> bool {
        self.link.is_closed()
    }

    /// Answers request `id` with `status` and `body` (marshalled for an
    /// 8-aligned start in GIOP 1.2; see
    /// [`send_reply_with`](Self::send_reply_with)).
    pub fn send_reply(
        &mut self,
        id: RequestId,
        status: ReplyStatus,
        body: &[u8],
    ) -> Result<(), ConnError> {
        self.reply(id, status, &[], body.len(), |w| {
            w.write_bytes(body);
            Ok(())
        })
    }

    /// Answers request `id`, `marshal` writing the body straight into the
    /// message after the header.
    pub fn send_reply_with(
        &mut self,
        id: RequestId,
        status: ReplyStatus,
        service_contexts: &[ServiceContext<'_>],
        marshal: impl FnOnce(&mut Writer) -> Result<(), CdrError>,
    ) -> Result<(), ConnError> {
        self.reply(id, status, service_contexts, 64, marshal)
    }

    /// Sends a reply, reserving room for a body of about `body_len`.
    fn reply(
        &mut self,
        id: RequestId,
        status: ReplyStatus,
        service_contexts: &[ServiceContext<'_>],
        body_len: usize,
        marshal: impl FnOnce(&mut Writer) -> Result<(), CdrError>,
    ) -> Result<(), ConnError> {
        let f = self.awaiting(id, Answer::Reply)?;
        let h = ReplyHeader {
            request_id: id.0,
            status,
            service_contexts: ServiceContexts::from_slice(service_contexts),
        };
        let mut w = self.link.writer(32 + body_len);
        let header = if f.version == GiopVersion::V1_2 && service_contexts.is_empty() {
            Ok(fast::write_reply(&mut w, id.0, status))
        } else {
            encode_reply(&mut w, f.version, &h)
        };
        let encoded = header
            .and_then(|p| marshal(&mut w).map_err(GiopError::from).map(|()| p))
            .and_then(|p| p.finish(&mut w));
        self.answered(id, encoded, w)
    }

    /// Answers LocateRequest `id`; `body` is what `status` calls for (an
    /// IOR, a system exception, an addressing disposition) or empty.
    pub fn send_locate_reply(
        &mut self,
        id: RequestId,
        status: LocateStatus,
        body: &[u8],
    ) -> Result<(), ConnError> {
        let f = self.awaiting(id, Answer::LocateReply)?;
        let h = LocateReplyHeader {
            request_id: id.0,
            status,
        };
        let mut w = self.link.writer(24 + body.len());
        let encoded = encode_locate_reply(&mut w, f.version, &h).and_then(|p| {
            w.write_bytes(body);
            p.finish(&mut w)
        });
        self.answered(id, encoded, w)
    }

    /// The request `id` if it awaits an answer of this kind.
    fn awaiting(&self, id: RequestId, answer: Answer) -> Result<InFlight, ConnError> {
        if matches!(self.link.state, State::Draining | State::Closed) {
            return Err(ConnError::Closed);
        }
        match self.in_flight.get(id.0) {
            Some(f) if f.answer == answer => Ok(*f),
            _ => Err(ConnError::UnknownRequest(id)),
        }
    }

    /// Queues an answer that encoded; one that did not leaves the request
    /// in flight, to be answered otherwise (e.g. with an exception).
    fn answered(
        &mut self,
        id: RequestId,
        encoded: Result<(), GiopError>,
        w: Writer,
    ) -> Result<(), ConnError> {
        encoded?;
        self.link.queue(w.into_vec(), Tag::Plain)?;
        self.in_flight.remove(id.0);
        self.finish_shutdown();
        Ok(())
    }

    /// The driver took a whole plain Request of `version` without passing
    /// it in (its own fast path for the common request, which it answers
    /// itself and holds back at shutdown): the messages this end starts
    /// go in that version if no other message came through the machine.
    ///
    /// A driver with such a fast path may only take requests for which
    /// the machine would report the same plain
    /// [`ServerEvent::Request`] (whole, unfragmented, not while the
    /// connection closes), and must count them itself for an orderly
    /// shutdown; it need only call this once.
    pub fn note_fast_request(&mut self, version: GiopVersion) {
        if !self.seen {
            self.seen = true;
            self.peer_version = version;
        }
    }

    /// Traffic the machine did not see (its driver's fast path) went
    /// through the connection by `now`: the idle timer starts again from
    /// there. A driver may report it late and in bulk (say, from a
    /// periodic scan that found the connection used since the last one).
    pub fn note_activity(&mut self, now: Instant) {
        self.link.idle.touch(now);
    }

    /// Request `id` needs no answer from the machine: the driver wrote
    /// the reply itself (encoded whole, say, on the thread that ran the
    /// request) or dropped the request. The machine stops waiting for
    /// it, so an orderly shutdown may finish; an unknown `id` is ignored.
    pub fn forget_request(&mut self, id: RequestId) {
        if self.in_flight.remove(id.0).is_some() {
            self.finish_shutdown();
        }
    }

    /// Starts an orderly shutdown: new requests are ignored (the client
    /// will send them again elsewhere), those in flight are answered,
    /// then CloseConnection goes out and the connection closes.
    pub fn shutdown(&mut self) {
        if self.link.state == State::Open {
            self.link.state = State::Closing;
            self.finish_shutdown();
        }
    }

    fn finish_shutdown(&mut self) {
        if self.link.state == State::Closing && self.in_flight.is_empty() {
            self.close_orderly(CloseReason::Shutdown);
        }
    }

    fn close_orderly(&mut self, reason: CloseReason) {
        self.link
            .close_connection(reason.clone(), self.peer_version);
        self.in_flight.clear();
        self.events.push_back(ServerEvent::Closed { reason });
    }

    /// Takes bytes read from the transport at `now`.
    pub fn handle_input(&mut self, bytes: &[u8], now: Instant) {
        if !matches!(self.link.state, State::Open | State::Closing) {
            return;
        }
        self.link.idle.touch(now);
        let mut input = bytes;
        // Nothing comes out of no input: stop once it is all taken.
        while !input.is_empty() && matches!(self.link.state, State::Open | State::Closing) {
            match self.link.next_message(&mut input) {
                None => break,
                Some(Ok(msg)) => self.on_message(msg),
                Some(Err(e)) => self.protocol_error(e),
            }
        }
    }

    /// The transport ended.
    pub fn handle_eof(&mut self) {
        if matches!(self.link.state, State::Draining | State::Closed) {
            // Closed already reported; only stop sending.
            self.link.abort(CloseReason::TransportClosed);
            return;
        }
        self.link.abort(CloseReason::TransportClosed);
        self.in_flight.clear();
        self.events.push_back(ServerEvent::Closed {
            reason: CloseReason::TransportClosed,
        });
    }

    /// The next bytes to write, at `now`.
    #[inline]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        self.link.poll_transmit(now).map(|(t, _)| t)
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
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) should next run.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.link.state != State::Open {
            return None;
        }
        self.link.idle.deadline(self.outstanding())
    }

    /// Closes an idle connection (CloseConnection, as GIOP asks of a
    /// server that drops a connection) once the idle timeout passed.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.link.state == State::Open && self.link.idle.expired(self.outstanding(), now) {
            self.close_orderly(CloseReason::Idle);
        }
    }

    fn outstanding(&self) -> bool {
        !self.in_flight.is_empty() || self.link.receiving() || !self.link.out.is_empty()
    }

    fn on_message(&mut self, msg: Vec<u8>) {
        // Checked before the body is decoded: no bidirectional GIOP yet.
        if let Some(t @ (MsgType::Reply | MsgType::LocateReply)) = msg_type(&msg) {
            return self.protocol_error(GiopError::UnexpectedMessage(t));
        }
        let limits = self.link.config.limits;
        self.seen = true;
        if let Some(r) = fast::read_request(&msg, &limits) {
            self.peer_version = GiopVersion::V1_2;
            if self.link.state != State::Open {
                return;
            }
            let parts = Parts {
                id: r.request_id,
                response_flags: r.response_flags,
                target: Target::Key(range_in(&msg, r.object_key)),
                operation: range_in(&msg, r.operation.as_bytes()),
                service_contexts: Vec::new(),
                body_at: r.body.offset,
                order: r.body.order,
                version: GiopVersion::V1_2,
            };
            return self.on_request(msg, parts);
        }
        let (h, m) = match decode_message(&msg, &limits) {
            Ok(d) => d,
            Err(e) => return self.malformed(&msg, e),
        };
        self.peer_version = h.version;
        let accepting = self.link.state == State::Open;
        match m {
            Message::Request { header, body } => {
                if !accepting {
                    return;
                }
                if self.codesets.is_none() {
                    self.codesets = header
                        .service_contexts
                        .get(ids::CODE_SETS)
                        .and_then(|data| CodeSetContext::decode(data).ok());
                }
                let parts = Parts {
                    id: header.request_id,
                    response_flags: header.response_flags,
                    target: Target::new(&msg, header.target),
                    operation: range_in(&msg, header.operation.as_bytes()),
                    service_contexts: owned_contexts(&header.service_contexts),
                    body_at: body.offset,
                    order: h.order,
                    version: h.version,
                };
                self.on_request(msg, parts);
            }
            Message::LocateRequest(lr) => {
                if !accepting {
                    return;
                }
                self.in_flight.insert(
                    lr.request_id,
                    InFlight {
                        answer: Answer::LocateReply,
                        version: h.version,
                    },
                );
                let target = Target::new(&msg, lr.target);
                self.events
                    .push_back(ServerEvent::LocateRequest(IncomingLocate {
                        id: RequestId(lr.request_id),
                        target,
                        message: msg,
                    }));
            }
            Message::CancelRequest { request_id } => {
                if self.in_flight.remove(request_id).is_some() {
                    self.events.push_back(ServerEvent::Cancelled {
                        id: RequestId(request_id),
                    });
                    self.finish_shutdown();
                }
            }
            Message::CloseConnection => self.peer_closed(CloseReason::PeerClosed),
            Message::MessageError => self.peer_closed(CloseReason::PeerMessageError),
            other => self.protocol_error(GiopError::UnexpectedMessage(other.msg_type())),
        }
    }

    #[inline]
    fn on_request(&mut self, msg: Vec<u8>, p: Parts) {
        if p.response_flags.response_expected() {
            self.in_flight.insert(
                p.id,
                InFlight {
                    answer: Answer::Reply,
                    version: p.version,
                },
            );
        }
        self.events.push_back(ServerEvent::Request(IncomingRequest {
            id: RequestId(p.id),
            response_flags: p.response_flags,
            service_contexts: p.service_contexts,
            target: p.target,
            operation: p.operation,
            message: Incoming::from_parts(msg, p.body_at, p.order, p.version),
        }));
    }

    fn peer_closed(&mut self, reason: CloseReason) {
        self.link.abort(reason.clone());
        self.in_flight.clear();
        self.events.push_back(ServerEvent::Closed { reason });
    }

    /// A well-framed message whose content is malformed: a Request whose
    /// id can be read is answered with `MARSHAL` (it did not run);
    /// anything else breaks the stream.
    fn malformed(&mut self, msg: &[u8], e: GiopError) {
        if !e.is_message_error() {
            let limits = self.link.config.limits;
            if let Ok(h) = MessageHeader::decode(msg, &limits) {
                let id = match (h.msg_type, h.version) {
                    (MsgType::Request, GiopVersion::V1_2) => read_u32_at(msg, HEADER_LEN, h.order),
                    (MsgType::Request, _) => legacy_request_id(&h, msg, &limits),
                    _ => None,
                };
                if let Some(id) = id {
                    self.peer_version = h.version;
                    let ex = e.to_system_exception(CompletionStatus::No);
                    let mut w = self.link.writer(96);
                    if encode_system_exception_reply(
                        &mut w,
                        h.version,
                        id,
                        ServiceContexts::EMPTY,
                        &ex,
                    )
                    .is_ok()
                    {
                        self.link.queue(w.into_vec(), Tag::Plain).ok();
                    }
                    return;
                }
            }
        }
        self.protocol_error(e);
    }

    fn protocol_error(&mut self, e: GiopError) {
        self.in_flight.clear();
        self.events.push_back(ServerEvent::Closed {
            reason: CloseReason::ProtocolError(e.clone()),
        });
        self.link.protocol_error(e, self.peer_version);
    }
}
