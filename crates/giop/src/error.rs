//! The error type of the GIOP layer.

use core::fmt;

use peregrine_cdr::{CdrError, GiopVersion};

use crate::header::MsgType;

/// Everything that can go wrong while decoding, encoding, fragmenting or
/// reassembling GIOP messages.
///
/// Errors fall in two families that call for different answers:
/// [`GiopError::is_message_error`] is true for a broken message framing or
/// fragment protocol (answer with a GIOP `MessageError` and close the
/// connection, since the stream can no longer be trusted), false for a
/// well-framed message whose content is malformed (answer with a `MARSHAL`
/// system exception where the request id is known, see
/// [`GiopError::to_system_exception`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GiopError {
    /// Fewer than the 12 bytes of a message header.
    ShortHeader {
        /// Bytes available.
        len: usize,
    },
    /// The first four bytes are not `GIOP`.
    BadMagic([u8; 4]),
    /// A GIOP version other than 1.0 to 1.3.
    UnsupportedVersion {
        /// Major version on the wire.
        major: u8,
        /// Minor version on the wire.
        minor: u8,
    },
    /// The GIOP 1.0 byte-order boolean has the fragment bit set: GIOP 1.0
    /// has no fragmentation.
    FragmentBitInGiop10,
    /// The GIOP 1.0 byte-order octet is neither 0 nor 1 (nor 2/3, see
    /// [`GiopError::FragmentBitInGiop10`]).
    BadByteOrder(u8),
    /// A message type octet above 7.
    UnknownMessageType(u8),
    /// A message type that this GIOP version does not have (Fragment in 1.0).
    MessageTypeNotInVersion {
        /// The message type.
        msg_type: MsgType,
        /// The version of the message.
        version: GiopVersion,
    },
    /// The more-fragments bit on a message type that this version does not
    /// allow to be fragmented.
    NotFragmentable {
        /// The message type.
        msg_type: MsgType,
        /// The version of the message.
        version: GiopVersion,
    },
    /// A message larger than [`crate::Limits::max_message_size`].
    MessageTooLarge {
        /// The size announced or reached, in bytes after the header.
        size: u64,
        /// The limit.
        limit: u32,
    },
    /// The buffer handed to the decoder is not exactly header + `message_size`.
    SizeMismatch {
        /// `message_size` from the header.
        declared: u32,
        /// Body bytes actually present.
        actual: usize,
    },
    /// The body is malformed CDR.
    Cdr(CdrError),
    /// A reply status outside the version's `ReplyStatusType`.
    BadReplyStatus(u32),
    /// A locate status outside the version's `LocateStatusType`.
    BadLocateStatus(u32),
    /// A `TargetAddress` discriminator other than 0, 1, 2.
    BadAddressingDisposition(i16),
    /// GIOP 1.2 `response_flags` other than 0x00, 0x01, 0x03.
    BadResponseFlags(u8),
    /// A `CompletionStatus` other than 0, 1, 2.
    BadCompletionStatus(u32),
    /// A service context list longer than [`crate::Limits::max_service_contexts`].
    TooManyServiceContexts {
        /// Entries announced.
        count: u32,
        /// The limit.
        limit: u32,
    },
    /// A GIOP 1.0/1.1 Request or LocateRequest to encode whose target is
    /// not an object key (those versions have no other addressing).
    TargetNotKey,
    /// A Fragment that continues no message in reassembly.
    UnexpectedFragment {
        /// Its request id (GIOP 1.2), if any.
        request_id: Option<u32>,
    },
    /// A fragmented message whose 1.2 header does not hold a request id.
    FragmentWithoutRequestId,
    /// A second fragmented message with the request id of one still in
    /// reassembly (or a second 1.1 fragmented message on the connection).
    DuplicateFragmentedMessage {
        /// Its request id (GIOP 1.2), if any.
        request_id: Option<u32>,
    },
    /// A Fragment whose version or byte order differs from the message it
    /// continues.
    FragmentMismatch,
    /// A GIOP 1.2 fragment other than the last whose length is not a
    /// multiple of 8.
    MisalignedFragment {
        /// Total length of the fragment including its header.
        len: usize,
    },
    /// More messages in reassembly than [`crate::Limits::max_partial_messages`].
    TooManyPartialMessages {
        /// The limit.
        limit: usize,
    },
    /// More fragments for one message than
    /// [`crate::Limits::max_fragments_per_message`].
    TooManyFragments {
        /// The limit.
        limit: usize,
    },
    /// A message type this end does not accept: a Request, LocateRequest
    /// or CancelRequest sent to a client, a Reply or LocateReply sent to a
    /// server.
    UnexpectedMessage(MsgType),
    /// Partial messages would hold more than
    /// [`crate::Limits::max_fragments_bytes`].
    FragmentsTooLarge {
        /// The limit.
        limit: usize,
    },
}

impl GiopError {
    /// True when the framing or the fragment protocol is broken, which
    /// GIOP answers with a `MessageError` message (and the connection is
    /// closed); false for a malformed body, answered with `MARSHAL`.
    pub fn is_message_error(&self) -> bool {
        !matches!(
            self,
            GiopError::Cdr(_)
                | GiopError::BadReplyStatus(_)
                | GiopError::BadLocateStatus(_)
                | GiopError::BadAddressingDisposition(_)
                | GiopError::BadResponseFlags(_)
                | GiopError::BadCompletionStatus(_)
                | GiopError::TooManyServiceContexts { .. }
                | GiopError::TargetNotKey
        )
    }

    /// The system exception that reports this error to a peer whose
    /// request id is known: `IMP_LIMIT` for a configured limit, the
    /// CDR mapping (see [`crate::SystemException::from_cdr`]) for CDR
    /// errors, `MARSHAL` otherwise; each with its minor code (see
    /// [`crate::system_exception::minor`]).
    pub fn to_system_exception(
        &self,
        completed: crate::CompletionStatus,
    ) -> crate::SystemException {
        use crate::system_exception::minor;
        use crate::{SystemException, SystemExceptionKind as K};
        let (kind, minor) = match self {
            GiopError::Cdr(e) => return SystemException::from_cdr(e, completed),
            GiopError::MessageTooLarge { .. } => (K::ImpLimit, minor::IMP_LIMIT_MESSAGE_TOO_LARGE),
            GiopError::TooManyServiceContexts { .. } => {
                (K::ImpLimit, minor::IMP_LIMIT_TOO_MANY_SERVICE_CONTEXTS)
            }
            GiopError::TooManyPartialMessages { .. }
            | GiopError::TooManyFragments { .. }
            | GiopError::FragmentsTooLarge { .. } => {
                (K::ImpLimit, minor::IMP_LIMIT_FRAGMENT_LIMIT_EXCEEDED)
            }
            GiopError::BadReplyStatus(_)
            | GiopError::BadLocateStatus(_)
            | GiopError::BadAddressingDisposition(_)
            | GiopError::BadResponseFlags(_)
            | GiopError::BadCompletionStatus(_)
            | GiopError::TargetNotKey => (K::Marshal, minor::MARSHAL_INVALID_HEADER),
            _ => (K::Marshal, minor::MARSHAL_INVALID_MESSAGE),
        };
        SystemException::new(kind, minor, completed)
    }
}

impl From<CdrError> for GiopError {
    fn from(e: CdrError) -> Self {
        GiopError::Cdr(e)
    }
}

impl fmt::Display for GiopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GiopError::ShortHeader { len } => {
                write!(f, "GIOP header needs 12 bytes, got {len}")
            }
            GiopError::BadMagic(m) => write!(f, "bad GIOP magic {m:02x?}"),
            GiopError::UnsupportedVersion { major, minor } => {
                write!(f, "unsupported GIOP version {major}.{minor}")
            }
            GiopError::FragmentBitInGiop10 => f.write_str("fragment bit set in a GIOP 1.0 header"),
            GiopError::BadByteOrder(b) => write!(f, "bad GIOP 1.0 byte order octet {b:#04x}"),
            GiopError::UnknownMessageType(t) => write!(f, "unknown GIOP message type {t}"),
            GiopError::MessageTypeNotInVersion { msg_type, version } => {
                write!(
                    f,
                    "{msg_type:?} does not exist in GIOP 1.{}",
                    version.minor()
                )
            }
            GiopError::NotFragmentable { msg_type, version } => write!(
                f,
                "{msg_type:?} cannot be fragmented in GIOP 1.{}",
                version.minor()
            ),
            GiopError::MessageTooLarge { size, limit } => {
                write!(
                    f,
                    "GIOP message of {size} bytes exceeds the limit of {limit}"
                )
            }
            GiopError::SizeMismatch { declared, actual } => write!(
                f,
                "GIOP header announces {declared} body bytes, {actual} present"
            ),
            GiopError::Cdr(e) => write!(f, "malformed GIOP body: {e}"),
            GiopError::BadReplyStatus(s) => write!(f, "bad reply status {s}"),
            GiopError::BadLocateStatus(s) => write!(f, "bad locate status {s}"),
            GiopError::BadAddressingDisposition(d) => {
                write!(f, "bad addressing disposition {d}")
            }
            GiopError::BadResponseFlags(b) => write!(f, "bad response flags {b:#04x}"),
            GiopError::BadCompletionStatus(s) => write!(f, "bad completion status {s}"),
            GiopError::TooManyServiceContexts { count, limit } => {
                write!(f, "{count} service contexts exceed the limit of {limit}")
            }
            GiopError::TargetNotKey => {
                f.write_str("GIOP 1.0/1.1 can address a target only by object key")
            }
            GiopError::UnexpectedFragment {
                request_id: Some(id),
            } => {
                write!(f, "fragment for request {id}, which is not in reassembly")
            }
            GiopError::UnexpectedFragment { request_id: None } => {
                f.write_str("GIOP 1.1 fragment with no message in reassembly")
            }
            GiopError::FragmentWithoutRequestId => {
                f.write_str("GIOP 1.2 fragmented message too short to hold its request id")
            }
            GiopError::DuplicateFragmentedMessage {
                request_id: Some(id),
            } => {
                write!(f, "request {id} is already in reassembly")
            }
            GiopError::DuplicateFragmentedMessage { request_id: None } => {
                f.write_str("a GIOP 1.1 fragmented message is already in reassembly")
            }
            GiopError::FragmentMismatch => {
                f.write_str("fragment version or byte order differs from its message")
            }
            GiopError::MisalignedFragment { len } => write!(
                f,
                "GIOP 1.2 non-final fragment of {len} bytes is not a multiple of 8"
            ),
            GiopError::TooManyPartialMessages { limit } => {
                write!(f, "more than {limit} fragmented messages in reassembly")
            }
            GiopError::TooManyFragments { limit } => {
                write!(f, "message split into more than {limit} fragments")
            }
            GiopError::FragmentsTooLarge { limit } => {
                write!(f, "fragments in reassembly exceed {limit} bytes")
            }
            GiopError::UnexpectedMessage(t) => {
                write!(
                    f,
                    "{t:?} is not a message this end of the connection accepts"
                )
            }
        }
    }
}

impl std::error::Error for GiopError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GiopError::Cdr(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system_exception::minor;
    use crate::{CompletionStatus, SystemExceptionKind as K};

    #[test]
    fn every_error_reports_a_minor_code() {
        let c = CompletionStatus::No;
        let m = |e: GiopError| {
            let s = e.to_system_exception(c);
            (s.kind, s.minor)
        };
        assert_eq!(
            m(GiopError::Cdr(CdrError::Truncated {
                needed: 4,
                remaining: 0
            })),
            (K::Marshal, minor::MARSHAL_PASS_END_OF_MESSAGE)
        );
        assert_eq!(
            m(GiopError::MessageTooLarge { size: 9, limit: 8 }),
            (K::ImpLimit, minor::IMP_LIMIT_MESSAGE_TOO_LARGE)
        );
        assert_eq!(
            m(GiopError::TooManyServiceContexts { count: 9, limit: 8 }),
            (K::ImpLimit, minor::IMP_LIMIT_TOO_MANY_SERVICE_CONTEXTS)
        );
        for e in [
            GiopError::TooManyPartialMessages { limit: 1 },
            GiopError::TooManyFragments { limit: 1 },
            GiopError::FragmentsTooLarge { limit: 1 },
        ] {
            assert_eq!(
                m(e),
                (K::ImpLimit, minor::IMP_LIMIT_FRAGMENT_LIMIT_EXCEEDED)
            );
        }
        for e in [
            GiopError::BadReplyStatus(9),
            GiopError::BadLocateStatus(9),
            GiopError::BadAddressingDisposition(3),
            GiopError::BadResponseFlags(2),
            GiopError::BadCompletionStatus(3),
            GiopError::TargetNotKey,
        ] {
            assert_eq!(m(e), (K::Marshal, minor::MARSHAL_INVALID_HEADER));
        }
        for e in [
            GiopError::BadMagic(*b"GIOQ"),
            GiopError::ShortHeader { len: 3 },
            GiopError::SizeMismatch {
                declared: 8,
                actual: 4,
            },
            GiopError::UnexpectedMessage(MsgType::Reply),
            GiopError::FragmentMismatch,
        ] {
            assert_eq!(m(e), (K::Marshal, minor::MARSHAL_INVALID_MESSAGE));
        }
    }
}
