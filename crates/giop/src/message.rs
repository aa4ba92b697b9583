//! GIOP message bodies (CORBA 3.x Part 2, GIOP message formats) for all
//! eight message types in GIOP 1.0, 1.1 and 1.2: decoding that borrows
//! from the message buffer, and encoding into a reusable [`Writer`].
//!
//! Decoding yields the message header fields plus a [`Body`]: the bytes
//! after them with their stream offset, so arguments decode with the
//! alignment they were encoded with. Encoding writes the 12-byte header
//! and the message header fields, hands back a [`Pending`] message so the
//! caller appends the arguments to the same writer, and
//! [`Pending::finish`] patches the size.

use peregrine_cdr::{ByteOrder, CdrError, Decode, Encode, GiopVersion, Reader, Writer};

use crate::error::GiopError;
use crate::header::{MessageHeader, MsgType, HEADER_LEN, SIZE_AT};
use crate::ior::Ior;
use crate::limits::Limits;
use crate::service_context::ServiceContexts;
use crate::system_exception::SystemException;
use crate::target::{AddressingDisposition, TargetAddress};

/// The arguments, results or exception of a message: the bytes after its
/// header fields, borrowed from the message, and where they start in the
/// CDR stream (which begins at the GIOP header), so alignment continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Body<'a> {
    /// The body bytes.
    pub bytes: &'a [u8],
    /// Stream position of `bytes[0]`, counted from the start of the GIOP
    /// header.
    pub offset: usize,
    /// Byte order of the message.
    pub order: ByteOrder,
    /// Version of the message (decides wide-character encoding).
    pub version: GiopVersion,
}

impl<'a> Body<'a> {
    /// A reader over the body, aligned as in the message. Set its code
    /// sets (`Reader::set_codesets`) to the connection's negotiated ones.
    pub fn reader(&self) -> Reader<'a> {
        let mut r = Reader::with_offset(self.bytes, self.order, self.offset);
        r.set_version(self.version);
        r
    }

    /// True when the body holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Decodes the body of a `SYSTEM_EXCEPTION` reply or a
    /// `LOC_SYSTEM_EXCEPTION` locate reply.
    pub fn system_exception(&self) -> Result<SystemException, GiopError> {
        Ok(SystemException::decode(&mut self.reader())?)
    }

    /// Decodes the body of a `LOCATION_FORWARD[_PERM]` reply or an
    /// `OBJECT_FORWARD[_PERM]` locate reply.
    pub fn forward_ior(&self) -> Result<Ior, GiopError> {
        Ok(Ior::decode(&mut self.reader())?)
    }

    /// Decodes the body of a `NEEDS_ADDRESSING_MODE` reply or a
    /// `LOC_NEEDS_ADDRESSING_MODE` locate reply.
    pub fn addressing_disposition(&self) -> Result<AddressingDisposition, GiopError> {
        AddressingDisposition::decode(&mut self.reader())
    }

    /// The repository id of a `USER_EXCEPTION` reply body (which the
    /// exception's members follow), borrowed from the message.
    pub fn user_exception_id(&self) -> Result<&'a str, GiopError> {
        let raw = self.reader().read_string_bytes()?;
        Ok(core::str::from_utf8(raw).map_err(|_| CdrError::InvalidText)?)
    }
}

/// Whether and how the client waits for a reply: the GIOP 1.2
/// `response_flags` octet (GIOP 1.0/1.1 have a `response_expected`
/// boolean, which maps to [`ResponseFlags::None`] and
/// [`ResponseFlags::SyncWithTarget`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ResponseFlags {
    /// 0x00: no reply (oneway with `SYNC_NONE` or `SYNC_WITH_TRANSPORT`).
    None = 0x00,
    /// 0x01: an empty reply once the server has the request
    /// (`SYNC_WITH_SERVER`).
    SyncWithServer = 0x01,
    /// 0x03: a full reply (twoway, or `SYNC_WITH_TARGET`).
    SyncWithTarget = 0x03,
}

impl ResponseFlags {
    /// The flags for a GIOP 1.2 octet.
    pub fn from_u8(v: u8) -> Result<Self, GiopError> {
        match v {
            0x00 => Ok(Self::None),
            0x01 => Ok(Self::SyncWithServer),
            0x03 => Ok(Self::SyncWithTarget),
            _ => Err(GiopError::BadResponseFlags(v)),
        }
    }

    /// True when the server sends a Reply (the 1.0/1.1 `response_expected`).
    pub fn response_expected(self) -> bool {
        self != Self::None
    }
}

/// A Request message header (`RequestHeader_1_0`/`_1_1`/`_1_2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHeader<'a> {
    /// `request_id`.
    pub request_id: u32,
    /// `response_flags` (1.2) or `response_expected` (1.0/1.1).
    pub response_flags: ResponseFlags,
    /// The target; always [`TargetAddress::Key`] in GIOP 1.0/1.1.
    pub target: TargetAddress<'a>,
    /// The operation name (`_get_x`/`_set_x` for attributes).
    pub operation: &'a str,
    /// `service_context`.
    pub service_contexts: ServiceContexts<'a>,
    /// `requesting_principal` (GIOP 1.0/1.1; deprecated, normally empty;
    /// not sent in 1.2).
    pub requesting_principal: &'a [u8],
}

/// `ReplyStatusType_1_2` (the first four are also `ReplyStatusType_1_0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ReplyStatus {
    /// `NO_EXCEPTION`: the body holds the results.
    NoException = 0,
    /// `USER_EXCEPTION`: the body holds a repository id and members.
    UserException = 1,
    /// `SYSTEM_EXCEPTION`: the body holds a [`SystemException`].
    SystemException = 2,
    /// `LOCATION_FORWARD`: the body holds an IOR to retry with.
    LocationForward = 3,
    /// `LOCATION_FORWARD_PERM` (1.2): as above, permanently.
    LocationForwardPerm = 4,
    /// `NEEDS_ADDRESSING_MODE` (1.2): the body holds an
    /// [`AddressingDisposition`].
    NeedsAddressingMode = 5,
}

impl ReplyStatus {
    /// The status for a wire value in `version`.
    pub fn from_u32(v: u32, version: GiopVersion) -> Result<Self, GiopError> {
        let s = match v {
            0 => Self::NoException,
            1 => Self::UserException,
            2 => Self::SystemException,
            3 => Self::LocationForward,
            4 => Self::LocationForwardPerm,
            5 => Self::NeedsAddressingMode,
            _ => return Err(GiopError::BadReplyStatus(v)),
        };
        if v > 3 && version < GiopVersion::V1_2 {
            return Err(GiopError::BadReplyStatus(v));
        }
        Ok(s)
    }
}

/// A Reply message header (`ReplyHeader_1_0`/`_1_2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyHeader<'a> {
    /// `request_id` of the request answered.
    pub request_id: u32,
    /// `reply_status`.
    pub status: ReplyStatus,
    /// `service_context`.
    pub service_contexts: ServiceContexts<'a>,
}

/// A LocateRequest message header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocateRequestHeader<'a> {
    /// `request_id`.
    pub request_id: u32,
    /// The target; always [`TargetAddress::Key`] in GIOP 1.0/1.1.
    pub target: TargetAddress<'a>,
}

/// `LocateStatusType_1_2` (the first three are also `LocateStatusType_1_0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum LocateStatus {
    /// `UNKNOWN_OBJECT`.
    UnknownObject = 0,
    /// `OBJECT_HERE`.
    ObjectHere = 1,
    /// `OBJECT_FORWARD`: the body holds an IOR.
    ObjectForward = 2,
    /// `OBJECT_FORWARD_PERM` (1.2): the body holds an IOR.
    ObjectForwardPerm = 3,
    /// `LOC_SYSTEM_EXCEPTION` (1.2): the body holds a [`SystemException`].
    LocSystemException = 4,
    /// `LOC_NEEDS_ADDRESSING_MODE` (1.2): the body holds an
    /// [`AddressingDisposition`].
    LocNeedsAddressingMode = 5,
}

impl LocateStatus {
    /// The status for a wire value in `version`.
    pub fn from_u32(v: u32, version: GiopVersion) -> Result<Self, GiopError> {
        let s = match v {
            0 => Self::UnknownObject,
            1 => Self::ObjectHere,
            2 => Self::ObjectForward,
            3 => Self::ObjectForwardPerm,
            4 => Self::LocSystemException,
            5 => Self::LocNeedsAddressingMode,
            _ => return Err(GiopError::BadLocateStatus(v)),
        };
        if v > 2 && version < GiopVersion::V1_2 {
            return Err(GiopError::BadLocateStatus(v));
        }
        Ok(s)
    }
}

/// A LocateReply message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LocateReplyHeader {
    /// `request_id` of the LocateRequest answered.
    pub request_id: u32,
    /// `locate_status`.
    pub status: LocateStatus,
}

/// A decoded GIOP message, borrowing from its buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    /// Request: header and arguments.
    Request {
        /// The request header.
        header: RequestHeader<'a>,
        /// The `in`/`inout` arguments.
        body: Body<'a>,
    },
    /// Reply: header and results (or exception, or forward).
    Reply {
        /// The reply header.
        header: ReplyHeader<'a>,
        /// What `header.status` says is there.
        body: Body<'a>,
    },
    /// CancelRequest.
    CancelRequest {
        /// The request to cancel.
        request_id: u32,
    },
    /// LocateRequest.
    LocateRequest(LocateRequestHeader<'a>),
    /// LocateReply: header and (depending on status) an IOR, exception or
    /// addressing disposition.
    LocateReply {
        /// The locate reply header.
        header: LocateReplyHeader,
        /// What `header.status` says is there.
        body: Body<'a>,
    },
    /// CloseConnection.
    CloseConnection,
    /// MessageError.
    MessageError,
    /// Fragment: the continuation of a fragmented message.
    Fragment {
        /// The request id of the message continued (GIOP 1.2; none in 1.1).
        request_id: Option<u32>,
        /// The fragment's bytes.
        body: Body<'a>,
    },
}

impl Message<'_> {
    /// The message type.
    pub fn msg_type(&self) -> MsgType {
        match self {
            Self::Request { .. } => MsgType::Request,
            Self::Reply { .. } => MsgType::Reply,
            Self::CancelRequest { .. } => MsgType::CancelRequest,
            Self::LocateRequest(_) => MsgType::LocateRequest,
            Self::LocateReply { .. } => MsgType::LocateReply,
            Self::CloseConnection => MsgType::CloseConnection,
            Self::MessageError => MsgType::MessageError,
            Self::Fragment { .. } => MsgType::Fragment,
        }
    }

    /// The request id the message carries, if any.
    pub fn request_id(&self) -> Option<u32> {
        match self {
            Self::Request { header, .. } => Some(header.request_id),
            Self::Reply { header, .. } => Some(header.request_id),
            Self::CancelRequest { request_id } => Some(*request_id),
            Self::LocateRequest(h) => Some(h.request_id),
            Self::LocateReply { header, .. } => Some(header.request_id),
            Self::Fragment { request_id, .. } => *request_id,
            Self::CloseConnection | Self::MessageError => None,
        }
    }
}

/// Decodes one complete message: `buf` must be exactly the 12-byte header
/// plus `message_size` bytes. A message with the more-fragments bit set
/// decodes only as far as its bytes go; feed such messages to
/// [`crate::Reassembler`] first.
pub fn decode_message<'a>(
    buf: &'a [u8],
    limits: &Limits,
) -> Result<(MessageHeader, Message<'a>), GiopError> {
    let header = MessageHeader::decode(buf, limits)?;
    let body = buf.get(HEADER_LEN..).unwrap_or_default();
    if body.len() != header.size as usize {
        return Err(GiopError::SizeMismatch {
            declared: header.size,
            actual: body.len(),
        });
    }
    let message = decode_body(&header, body, limits)?;
    Ok((header, message))
}

/// Decodes the bytes after the header of a message whose header was
/// already decoded (by a transport that read the header first).
pub fn decode_body<'a>(
    header: &MessageHeader,
    body: &'a [u8],
    limits: &Limits,
) -> Result<Message<'a>, GiopError> {
    let version = header.version;
    let mut r = Reader::with_offset(body, header.order, HEADER_LEN);
    r.set_version(version);
    let legacy = version < GiopVersion::V1_2;
    let max_sc = limits.max_service_contexts;
    Ok(match header.msg_type {
        MsgType::Request if legacy => {
            let service_contexts = ServiceContexts::decode(&mut r, max_sc)?;
            let request_id = r.read_u32()?;
            let response_flags = if r.read_bool()? {
                ResponseFlags::SyncWithTarget
            } else {
                ResponseFlags::None
            };
            if version == GiopVersion::V1_1 {
                r.read_bytes(3)?;
            }
            let target = TargetAddress::Key(r.read_octet_seq()?);
            let operation = read_operation(&mut r)?;
            let requesting_principal = r.read_octet_seq()?;
            let header = RequestHeader {
                request_id,
                response_flags,
                target,
                operation,
                service_contexts,
                requesting_principal,
            };
            Message::Request {
                header,
                body: body_of(&r),
            }
        }
        MsgType::Request => {
            let request_id = r.read_u32()?;
            let response_flags = ResponseFlags::from_u8(r.read_u8()?)?;
            r.read_bytes(3)?;
            let target = TargetAddress::decode(&mut r)?;
            let operation = read_operation(&mut r)?;
            let service_contexts = ServiceContexts::decode(&mut r, max_sc)?;
            align_body(&mut r)?;
            let header = RequestHeader {
                request_id,
                response_flags,
                target,
                operation,
                service_contexts,
                requesting_principal: &[],
            };
            Message::Request {
                header,
                body: body_of(&r),
            }
        }
        MsgType::Reply if legacy => {
            let service_contexts = ServiceContexts::decode(&mut r, max_sc)?;
            let request_id = r.read_u32()?;
            let status = ReplyStatus::from_u32(r.read_u32()?, version)?;
            Message::Reply {
                header: ReplyHeader {
                    request_id,
                    status,
                    service_contexts,
                },
                body: body_of(&r),
            }
        }
        MsgType::Reply => {
            let request_id = r.read_u32()?;
            let status = ReplyStatus::from_u32(r.read_u32()?, version)?;
            let service_contexts = ServiceContexts::decode(&mut r, max_sc)?;
            align_body(&mut r)?;
            Message::Reply {
                header: ReplyHeader {
                    request_id,
                    status,
                    service_contexts,
                },
                body: body_of(&r),
            }
        }
        MsgType::CancelRequest => Message::CancelRequest {
            request_id: r.read_u32()?,
        },
        MsgType::LocateRequest => {
            let request_id = r.read_u32()?;
            let target = if legacy {
                TargetAddress::Key(r.read_octet_seq()?)
            } else {
                TargetAddress::decode(&mut r)?
            };
            Message::LocateRequest(LocateRequestHeader { request_id, target })
        }
        MsgType::LocateReply => {
            let request_id = r.read_u32()?;
            let status = LocateStatus::from_u32(r.read_u32()?, version)?;
            // Unlike Request/Reply bodies, LocateReply bodies follow the
            // header with no 8-byte alignment, in every version.
            Message::LocateReply {
                header: LocateReplyHeader { request_id, status },
                body: body_of(&r),
            }
        }
        MsgType::CloseConnection => Message::CloseConnection,
        MsgType::MessageError => Message::MessageError,
        MsgType::Fragment => {
            let request_id = if legacy { None } else { Some(r.read_u32()?) };
            Message::Fragment {
                request_id,
                body: body_of(&r),
            }
        }
    })
}

fn read_operation<'a>(r: &mut Reader<'a>) -> Result<&'a str, GiopError> {
    let raw = r.read_string_bytes()?;
    Ok(core::str::from_utf8(raw).map_err(|_| CdrError::InvalidText)?)
}

/// GIOP 1.2 Request and Reply bodies start 8-aligned, but a message with
/// no body has no padding after its header.
fn align_body(r: &mut Reader<'_>) -> Result<(), CdrError> {
    if r.is_empty() {
        Ok(())
    } else {
        r.align(8)
    }
}

fn body_of<'a>(r: &Reader<'a>) -> Body<'a> {
    Body {
        bytes: r.rest(),
        offset: r.position(),
        order: r.order(),
        version: r.version(),
    }
}

/// A message whose header is written and whose body the caller may now
/// append to the same writer; [`Pending::finish`] completes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a pending message must be finished to patch its size"]
pub struct Pending {
    /// Writer length at the end of the message header fields.
    header_end: usize,
    /// Writer length where the body starts (after any 8-byte alignment).
    body_start: usize,
}

impl Pending {
    /// A message whose header fields end at `header_end` and whose body
    /// starts at `body_start` (for encoders outside this module).
    pub(crate) fn new(header_end: usize, body_start: usize) -> Self {
        Self {
            header_end,
            body_start,
        }
    }

    /// Patches the message size; drops the body alignment padding if no
    /// body was written (GIOP 1.2 wants none then).
    pub fn finish(self, w: &mut Writer) -> Result<(), GiopError> {
        if w.len() == self.body_start {
            w.truncate(self.header_end);
        }
        let body = w.len().saturating_sub(HEADER_LEN);
        let size = u32::try_from(body).map_err(|_| CdrError::TooLong(body))?;
        w.patch_u32(SIZE_AT, size);
        Ok(())
    }

    /// Writer length where the body starts.
    pub fn body_start(&self) -> usize {
        self.body_start
    }
}

/// Starts a message in `w`: clears it (so stream position 0 is the header),
/// sets its GIOP version and writes the 12-byte header, with the writer's
/// byte order and a size of 0 that [`Pending::finish`] patches.
pub fn begin_message(w: &mut Writer, version: GiopVersion, msg_type: MsgType) -> Pending {
    write_header(w, version, msg_type);
    Pending {
        header_end: HEADER_LEN,
        body_start: HEADER_LEN,
    }
}

fn write_header(w: &mut Writer, version: GiopVersion, msg_type: MsgType) {
    w.clear();
    w.set_version(version);
    w.write_bytes(&MessageHeader::new(version, w.order(), msg_type).encode());
}

/// Marks the header fields complete; aligns the body to 8 when `align`.
fn fields_done(w: &mut Writer, align: bool) -> Pending {
    let header_end = w.len();
    if align {
        w.align(8);
    }
    Pending {
        header_end,
        body_start: w.len(),
    }
}

fn legacy_key<'t>(target: &TargetAddress<'t>) -> Result<&'t [u8], GiopError> {
    target.object_key().ok_or(GiopError::TargetNotKey)
}

/// Writes a Request's header; append the arguments, then
/// [`Pending::finish`]. Allocation-free once `w` has grown to size.
pub fn encode_request(
    w: &mut Writer,
    version: GiopVersion,
    h: &RequestHeader<'_>,
) -> Result<Pending, GiopError> {
    write_header(w, version, MsgType::Request);
    if version < GiopVersion::V1_2 {
        let key = legacy_key(&h.target)?;
        h.service_contexts.encode(w)?;
        w.write_u32(h.request_id);
        w.write_bool(h.response_flags.response_expected());
        if version == GiopVersion::V1_1 {
            w.write_bytes(&[0; 3]);
        }
        w.write_octet_seq(key)?;
        write_operation(w, h.operation)?;
        w.write_octet_seq(h.requesting_principal)?;
        Ok(fields_done(w, false))
    } else {
        w.write_u32(h.request_id);
        w.write_bytes(&[h.response_flags as u8, 0, 0, 0]);
        h.target.encode(w)?;
        write_operation(w, h.operation)?;
        h.service_contexts.encode(w)?;
        Ok(fields_done(w, true))
    }
}

/// Writes a Reply's header; append the results (or exception, or IOR),
/// then [`Pending::finish`].
pub fn encode_reply(
    w: &mut Writer,
    version: GiopVersion,
    h: &ReplyHeader<'_>,
) -> Result<Pending, GiopError> {
    // Validates that the status exists in this version.
    ReplyStatus::from_u32(h.status as u32, version)?;
    write_header(w, version, MsgType::Reply);
    if version < GiopVersion::V1_2 {
        h.service_contexts.encode(w)?;
        w.write_u32(h.request_id);
        w.write_u32(h.status as u32);
        Ok(fields_done(w, false))
    } else {
        w.write_u32(h.request_id);
        w.write_u32(h.status as u32);
        h.service_contexts.encode(w)?;
        Ok(fields_done(w, true))
    }
}

/// Writes a complete `SYSTEM_EXCEPTION` Reply.
pub fn encode_system_exception_reply(
    w: &mut Writer,
    version: GiopVersion,
    request_id: u32,
    service_contexts: ServiceContexts<'_>,
    exception: &SystemException,
) -> Result<(), GiopError> {
    let h = ReplyHeader {
        request_id,
        status: ReplyStatus::SystemException,
        service_contexts,
    };
    let p = encode_reply(w, version, &h)?;
    exception.encode(w)?;
    p.finish(w)
}

/// Writes a complete CancelRequest.
pub fn encode_cancel_request(
    w: &mut Writer,
    version: GiopVersion,
    request_id: u32,
) -> Result<(), GiopError> {
    write_header(w, version, MsgType::CancelRequest);
    w.write_u32(request_id);
    fields_done(w, false).finish(w)
}

/// Writes a complete LocateRequest.
pub fn encode_locate_request(
    w: &mut Writer,
    version: GiopVersion,
    h: &LocateRequestHeader<'_>,
) -> Result<(), GiopError> {
    write_header(w, version, MsgType::LocateRequest);
    w.write_u32(h.request_id);
    if version < GiopVersion::V1_2 {
        w.write_octet_seq(legacy_key(&h.target)?)?;
    } else {
        h.target.encode(w)?;
    }
    fields_done(w, false).finish(w)
}

/// Writes a LocateReply's header; append the body its status calls for
/// (IOR, system exception, addressing disposition), then
/// [`Pending::finish`].
pub fn encode_locate_reply(
    w: &mut Writer,
    version: GiopVersion,
    h: &LocateReplyHeader,
) -> Result<Pending, GiopError> {
    LocateStatus::from_u32(h.status as u32, version)?;
    write_header(w, version, MsgType::LocateReply);
    w.write_u32(h.request_id);
    w.write_u32(h.status as u32);
    Ok(fields_done(w, false))
}

/// Writes a complete CloseConnection.
pub fn encode_close_connection(w: &mut Writer, version: GiopVersion) -> Result<(), GiopError> {
    begin_message(w, version, MsgType::CloseConnection).finish(w)
}

/// Writes a complete MessageError.
pub fn encode_message_error(w: &mut Writer, version: GiopVersion) -> Result<(), GiopError> {
    begin_message(w, version, MsgType::MessageError).finish(w)
}

fn write_operation(w: &mut Writer, op: &str) -> Result<(), GiopError> {
    // Operation names are IDL identifiers (ASCII); writing the raw bytes
    // keeps the header independent of the negotiated char code set.
    if op.as_bytes().contains(&0) {
        return Err(CdrError::Unrepresentable('\0').into());
    }
    w.write_len(op.len() + 1)?;
    w.write_bytes(op.as_bytes());
    w.write_u8(0);
    Ok(())
}

#[cfg(test)]
mod tests;
