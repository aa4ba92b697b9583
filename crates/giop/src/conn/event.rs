//! What the machines report to their driver.

use core::fmt;
use core::ops::Range;

use super::input::Incoming;
use crate::error::GiopError;
use crate::ior::Ior;
use crate::message::{Body, LocateStatus, ReplyStatus, ResponseFlags};
use crate::service_context::{OwnedServiceContext, ServiceContexts};
use crate::system_exception::SystemException;
use crate::target::TargetAddress;

/// A GIOP request id on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u32);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Why a connection closed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// This end shut down in order (the server sent CloseConnection).
    Shutdown,
    /// Nothing was outstanding for the idle timeout.
    Idle,
    /// The peer sent CloseConnection.
    PeerClosed,
    /// The peer sent MessageError: it could not parse what this end sent.
    PeerMessageError,
    /// The peer broke the protocol; this end sent MessageError.
    ProtocolError(GiopError),
    /// The transport ended (the driver called `handle_eof`).
    TransportClosed,
}

/// The service contexts of a received message, copied out of it (they
/// are few and small; usually there are none and nothing is allocated).
pub(crate) fn owned_contexts(sc: &ServiceContexts<'_>) -> Vec<OwnedServiceContext> {
    sc.iter()
        .map(|c| OwnedServiceContext {
            id: c.id,
            data: c.data.to_vec(),
        })
        .collect()
}

/// Where `sub` (borrowed from `buf`) sits in `buf`.
pub(crate) fn range_in(buf: &[u8], sub: &[u8]) -> Range<usize> {
    let at = (sub.as_ptr() as usize).wrapping_sub(buf.as_ptr() as usize);
    debug_assert!(at + sub.len() <= buf.len());
    at..at + sub.len()
}

/// How a received request names its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// By object key, at this range of the message.
    Key(Range<usize>),
    /// By profile or by reference (owned already; boxed, as it is rare
    /// and large, so that every request event stays small to move).
    Other(Box<TargetAddress<'static>>),
}

impl Target {
    pub(crate) fn new(buf: &[u8], target: TargetAddress<'_>) -> Self {
        match target {
            TargetAddress::Key(k) => Target::Key(range_in(buf, k)),
            TargetAddress::Profile(p) => Target::Other(Box::new(TargetAddress::Profile(p))),
            TargetAddress::Reference(r) => Target::Other(Box::new(TargetAddress::Reference(r))),
        }
    }

    pub(crate) fn get<'a>(&'a self, buf: &'a [u8]) -> TargetAddress<'a> {
        match self {
            Target::Key(r) => TargetAddress::Key(buf.get(r.clone()).unwrap_or_default()),
            Target::Other(t) => (**t).clone(),
        }
    }
}

/// A Request the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncomingRequest {
    /// Its id, to answer with.
    pub id: RequestId,
    /// Whether and how the client waits for a reply.
    pub response_flags: ResponseFlags,
    /// Its service contexts.
    pub service_contexts: Vec<OwnedServiceContext>,
    pub(crate) target: Target,
    pub(crate) operation: Range<usize>,
    pub(crate) message: Incoming,
}

impl IncomingRequest {
    /// The target.
    pub fn target(&self) -> TargetAddress<'_> {
        self.target.get(self.message.message())
    }

    /// The object key, when addressed by key.
    pub fn object_key(&self) -> Option<&[u8]> {
        match &self.target {
            Target::Key(r) => self.message.message().get(r.clone()),
            Target::Other(_) => None,
        }
    }

    /// The operation name (checked to be UTF-8 when decoded).
    pub fn operation(&self) -> &str {
        let raw = self
            .message
            .message()
            .get(self.operation.clone())
            .unwrap_or_default();
        core::str::from_utf8(raw).unwrap_or_default()
    }

    /// The arguments.
    pub fn body(&self) -> Body<'_> {
        self.message.body()
    }

    /// The whole message.
    pub fn message(&self) -> &Incoming {
        &self.message
    }

    /// The message, to keep or to give back
    /// ([`super::ServerConnection::recycle`]).
    #[inline]
    pub fn into_message(self) -> Incoming {
        self.message
    }
}

/// A LocateRequest the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncomingLocate {
    /// Its id, to answer with.
    pub id: RequestId,
    pub(crate) target: Target,
    pub(crate) message: Vec<u8>,
}

impl IncomingLocate {
    /// The target asked about.
    pub fn target(&self) -> TargetAddress<'_> {
        self.target.get(&self.message)
    }

    /// The object key, when addressed by key.
    pub fn object_key(&self) -> Option<&[u8]> {
        self.target().object_key()
    }
}

/// A Reply the client received for one of its requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncomingReply {
    /// The request answered.
    pub id: RequestId,
    /// What the body holds.
    pub status: ReplyStatus,
    /// Its service contexts.
    pub service_contexts: Vec<OwnedServiceContext>,
    /// The message; [`Incoming::body`] holds results, a user or system
    /// exception, or (`NEEDS_ADDRESSING_MODE`) an addressing disposition.
    pub message: Incoming,
}

/// What a [`super::ClientConnection`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientEvent {
    /// A request was answered (anything but a forward; forwards too when
    /// the driver matches replies, see
    /// [`super::ClientConnection::matched_by_driver`]).
    Reply(IncomingReply),
    /// A LocateRequest was answered (anything but a forward; forwards too
    /// when the driver matches replies).
    LocateReply {
        /// The LocateRequest answered.
        id: RequestId,
        /// The answer.
        status: LocateStatus,
        /// The message (its body holds a system exception or an addressing
        /// disposition when the status says so).
        message: Incoming,
    },
    /// The server forwarded a request (a `LOCATION_FORWARD[_PERM]` reply or
    /// an `OBJECT_FORWARD[_PERM]` locate reply) and the call may follow it:
    /// send it again to `ior` with [`super::Call::with_hops`]`(hops)`.
    Forward {
        /// The request forwarded (no longer pending).
        id: RequestId,
        /// Where to send it.
        ior: Ior,
        /// A `_PERM` forward: the client may replace its reference.
        permanent: bool,
        /// Forwards followed including this one.
        hops: u32,
    },
    /// A request ended without an answer: deadline passed (`TIMEOUT`),
    /// connection closed (`TRANSIENT` when the server provably did not
    /// run it, `COMM_FAILURE` otherwise), too many forwards (`TRANSIENT`),
    /// an answer that could not be decoded (`MARSHAL`).
    Failed {
        /// The request.
        id: RequestId,
        /// Why; its completion status says whether it may have run.
        exception: SystemException,
    },
    /// The connection is closed; every pending request has failed first.
    Closed {
        /// Why.
        reason: CloseReason,
    },
}

/// What a [`super::ServerConnection`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent {
    /// A request to dispatch.
    Request(IncomingRequest),
    /// A LocateRequest to answer with
    /// [`super::ServerConnection::send_locate_reply`].
    LocateRequest(IncomingLocate),
    /// The client cancelled a request: it will ignore the reply.
    Cancelled {
        /// The request.
        id: RequestId,
    },
    /// The connection is closed.
    Closed {
        /// Why.
        reason: CloseReason,
    },
}

/// Why a call into a machine was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnError {
    /// The connection is closed (or closing, for new requests).
    Closed,
    /// No request with this id awaits an answer.
    UnknownRequest(RequestId),
    /// The message could not be encoded.
    Encode(GiopError),
}

impl From<GiopError> for ConnError {
    fn from(e: GiopError) -> Self {
        ConnError::Encode(e)
    }
}

impl From<peregrine_cdr::CdrError> for ConnError {
    fn from(e: peregrine_cdr::CdrError) -> Self {
        ConnError::Encode(e.into())
    }
}

impl fmt::Display for ConnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnError::Closed => f.write_str("the connection is closed"),
            ConnError::UnknownRequest(id) => write!(f, "no request {id} awaits an answer"),
            ConnError::Encode(e) => write!(f, "cannot encode the message: {e}"),
        }
    }
}

impl std::error::Error for ConnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConnError::Encode(e) => Some(e),
            _ => None,
        }
    }
}
