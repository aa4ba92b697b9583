//! What both ends of a connection share: messages cut from the byte
//! stream and reassembled, the queue of outgoing bytes, the idle timer
//! and the lifecycle from open to closed.

use std::time::Instant;

use peregrine_cdr::{ByteOrder, GiopVersion, Writer};

use super::config::Config;
use super::input::Deframer;
use super::pool::BufPool;
use super::timers::Idle;
use super::transmit::{OutQueue, Tag, Transmit};
use super::CloseReason;
use crate::error::GiopError;
use crate::fragment::{Assembled, Reassembler};
use crate::header::{MsgType, HEADER_LEN};
use crate::message::{encode_close_connection, encode_message_error};

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Carrying messages.
    Open,
    /// The server is shutting down: it answers what it has, accepts
    /// nothing new, and then sends CloseConnection.
    Closing,
    /// The last message (CloseConnection or MessageError) is queued;
    /// closed once the driver takes it.
    Draining,
    /// Done: input is ignored, nothing more is sent.
    Closed,
}

#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) config: Config,
    rx: Deframer,
    reassembler: Reassembler,
    pub(crate) out: OutQueue,
    /// Buffers the driver gave back, for the next messages.
    pub(crate) pool: BufPool,
    pub(crate) idle: Idle,
    pub(crate) state: State,
    /// Why the connection closes, once that is decided.
    pub(crate) reason: Option<CloseReason>,
}

impl Link {
    pub(crate) fn new(config: Config, now: Instant) -> Self {
        Self {
            rx: Deframer::default(),
            reassembler: Reassembler::new(config.limits),
            out: OutQueue::default(),
            pool: BufPool::default(),
            idle: Idle::new(config.idle_timeout, now),
            state: State::Open,
            reason: None,
            config,
        }
    }

    /// The next whole message from `input` (reassembled if it came in
    /// fragments), or an error that breaks the stream.
    #[inline]
    pub(crate) fn next_message(&mut self, input: &mut &[u8]) -> Option<Result<Vec<u8>, GiopError>> {
        loop {
            let msg = match self.rx.next(input, &self.config.limits, &mut self.pool)? {
                Ok(m) => m,
                Err(e) => return Some(Err(e)),
            };
            // A whole message while nothing is in reassembly needs no
            // look from the reassembler (the deframer checked its header).
            let fragment = msg.get(6).is_some_and(|f| f & 2 != 0)
                || msg.get(7) == Some(&(MsgType::Fragment as u8));
            if !fragment && self.reassembler.pending() == 0 {
                return Some(Ok(msg));
            }
            match self.reassembler.push(&msg) {
                Ok(Assembled::Whole(_)) => return Some(Ok(msg)),
                Ok(Assembled::Reassembled(m)) => return Some(Ok(m)),
                Ok(Assembled::Incomplete) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// True while a message is partly received.
    pub(crate) fn receiving(&self) -> bool {
        self.rx.buffered() > 0 || self.reassembler.pending() > 0
    }

    /// A writer for a message this end starts, with room for `len`
    /// bytes so the usual message is written without growing (in a
    /// recycled buffer when there is one).
    #[inline]
    pub(crate) fn writer(&mut self, len: usize) -> Writer {
        Writer::from_vec(self.pool.take(len), self.config.order)
    }

    /// Queues an encoded message.
    #[inline]
    pub(crate) fn queue(&mut self, msg: Vec<u8>, tag: Tag) -> Result<(), GiopError> {
        self.out.push(msg, self.config.max_fragment_size, tag)
    }

    /// Drops what is queued, sends MessageError and closes: the peer's
    /// stream can no longer be trusted.
    pub(crate) fn protocol_error(&mut self, err: GiopError, version: GiopVersion) {
        self.out.clear();
        self.reassembler.clear();
        self.last_message(
            CloseReason::ProtocolError(err),
            version,
            encode_message_error,
        );
    }

    /// Queues CloseConnection, in `version`, as the last message.
    pub(crate) fn close_connection(&mut self, reason: CloseReason, version: GiopVersion) {
        self.last_message(reason, version, encode_close_connection);
    }

    fn last_message(
        &mut self,
        reason: CloseReason,
        version: GiopVersion,
        encode: fn(&mut Writer, GiopVersion) -> Result<(), GiopError>,
    ) {
        if matches!(self.state, State::Draining | State::Closed) {
            return;
        }
        let mut w = self.writer(HEADER_LEN);
        self.reason = Some(reason);
        self.state = State::Draining;
        // Header-only messages encode in any version and order.
        if encode(&mut w, version).is_ok() {
            self.out.push(w.into_vec(), None, Tag::Last).ok();
        } else {
            self.state = State::Closed;
        }
    }

    /// Closes at once, sending nothing more.
    pub(crate) fn abort(&mut self, reason: CloseReason) {
        if self.state == State::Closed {
            return;
        }
        self.out.clear();
        self.reassembler.clear();
        self.pool.clear();
        self.reason.get_or_insert(reason);
        self.state = State::Closed;
    }

    /// The next piece to write.
    #[inline]
    pub(crate) fn poll_transmit(&mut self, now: Instant) -> Option<(Transmit, Tag)> {
        if self.state == State::Closed {
            return None;
        }
        let (t, tag) = self.out.pop()?;
        self.idle.touch(now);
        if tag == Tag::Last {
            self.out.clear();
            self.reassembler.clear();
            self.state = State::Closed;
        }
        Some((t, tag))
    }

    /// True once nothing more will be sent or received.
    pub(crate) fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// Byte order for messages this end starts.
    pub(crate) fn order(&self) -> ByteOrder {
        self.config.order
    }
}
