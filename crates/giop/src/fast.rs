//! The common GIOP 1.2 headers read and written at fixed offsets.
//!
//! Almost every message of a busy connection is a whole (unfragmented)
//! GIOP 1.2 Request addressed by object key with no service contexts
//! (only the first request carries the code sets), or the Reply to one
//! with no service contexts. Their fields sit at offsets that follow from
//! two lengths, so they are read without a CDR reader and written
//! without per-field bookkeeping.
//!
//! The readers return exactly what [`crate::decode_message`] returns for
//! the same bytes, or `None` for anything else (another version, type or
//! addressing, service contexts, fragments, anything malformed): the
//! caller then takes the full decoder, which also reports the error. The
//! `fast_header` fuzz target holds them to that.

use peregrine_cdr::{ByteOrder, CdrError, GiopVersion, Reader, Writer};

use crate::error::GiopError;
use crate::header::{MessageHeader, MsgType, HEADER_LEN};
use crate::limits::Limits;
use crate::message::{Body, Pending, ReplyStatus, ResponseFlags};

/// A whole GIOP 1.2 Request addressed by key with no service contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastRequest<'a> {
    /// `request_id`.
    pub request_id: u32,
    /// `response_flags`.
    pub response_flags: ResponseFlags,
    /// The object key.
    pub object_key: &'a [u8],
    /// The operation.
    pub operation: &'a str,
    /// The arguments.
    pub body: Body<'a>,
}

/// A whole GIOP 1.2 Reply with no service contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastReply<'a> {
    /// `request_id`.
    pub request_id: u32,
    /// `reply_status`.
    pub status: ReplyStatus,
    /// The results (or what `status` says is there).
    pub body: Body<'a>,
}

/// Where the object key of a [`FastRequest`] starts.
const KEY_AT: usize = 28;
/// Where the body of a [`FastReply`] starts (8-aligned).
pub const REPLY_BODY_AT: usize = 24;

/// The first 8 bytes of a GIOP 1.2 message of type `t`, flags masked out,
/// as a little-endian word.
const fn magic_word(t: MsgType) -> u64 {
    u64::from_le_bytes([b'G', b'I', b'O', b'P', 1, 2, 0, t as u8])
}

/// Checks magic, version 1.2, type, no more-fragments bit and that the
/// size field covers exactly `msg`; the byte order.
#[inline(always)]
fn whole_1_2(msg: &[u8], t: MsgType, limits: &Limits) -> Option<ByteOrder> {
    let head: &[u8; HEADER_LEN] = msg.first_chunk()?;
    let word = u64::from_le_bytes(*msg.first_chunk()?);
    if word & !(0xff << 48) != magic_word(t) {
        return None;
    }
    let flags = head[6];
    let order = ByteOrder::from_flag(flags & 1 != 0);
    let size = u32_at(msg, 8, order)?;
    if flags & 2 != 0 || size as usize != msg.len() - HEADER_LEN || size > limits.max_message_size {
        return None;
    }
    Some(order)
}

#[inline(always)]
fn u32_at(m: &[u8], at: usize, order: ByteOrder) -> Option<u32> {
    let b: [u8; 4] = *m.get(at..)?.first_chunk()?;
    Some(match order {
        ByteOrder::Big => u32::from_be_bytes(b),
        ByteOrder::Little => u32::from_le_bytes(b),
    })
}

/// Where the parts of a [`FastRequest`] sit in its message: offsets
/// only, so that a caller can split the message into the header it reads
/// (key and operation) and the body it lends exclusively to an argument
/// reader, which may then decode in place.
///
/// [`request_layout`] checks everything [`read_request`] does but the
/// size limit (the caller framed the message under its limits) and the
/// operation's text, which [`RequestLayout::key_and_operation`] checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLayout {
    /// `request_id`.
    pub request_id: u32,
    /// `response_flags`.
    pub response_flags: ResponseFlags,
    /// The byte order of the message.
    pub order: ByteOrder,
    /// The object key is `KEY_AT..key_end`.
    key_end: usize,
    /// The operation, without its NUL, is `op_at..op_end`.
    op_at: usize,
    op_end: usize,
    /// Where the body starts (8-aligned unless the body is empty).
    pub body_at: usize,
}

/// Reads where the parts of `msg` sit if it is a [`FastRequest`] (but
/// for the size limit and the operation's text), or `None` for the full
/// decoder.
#[inline(always)]
pub fn request_layout(msg: &[u8]) -> Option<RequestLayout> {
    // The fixed part as an array: one length check for its fields.
    let h: &[u8; KEY_AT] = msg.first_chunk()?;
    let word = u64::from_le_bytes(*msg.first_chunk()?);
    if word & !(0xff << 48) != magic_word(MsgType::Request) {
        return None;
    }
    let flags = h[6];
    let order = ByteOrder::from_flag(flags & 1 != 0);
    let field = |at: usize| {
        let b = [h[at], h[at + 1], h[at + 2], h[at + 3]];
        match order {
            ByteOrder::Big => u32::from_be_bytes(b),
            ByteOrder::Little => u32::from_le_bytes(b),
        }
    };
    if flags & 2 != 0 || field(8) as usize != msg.len() - HEADER_LEN {
        return None;
    }
    let response_flags = match h[16] {
        0x00 => ResponseFlags::None,
        0x01 => ResponseFlags::SyncWithServer,
        0x03 => ResponseFlags::SyncWithTarget,
        _ => return None,
    };
    // TargetAddress: KeyAddr (discriminator 0, two bytes of padding).
    if h[20] != 0 || h[21] != 0 {
        return None;
    }
    let key_end = KEY_AT.checked_add(field(24) as usize)?;
    msg.get(KEY_AT..key_end)?;
    let at = (key_end + 3) & !3;
    let op_len = u32_at(msg, at, order)? as usize;
    let op_at = at + 4;
    let op_end = op_at.checked_add(op_len)?;
    // A string: non-empty and NUL-terminated (no NUL inside is checked
    // with the text, by `key_and_operation`).
    let [.., 0] = msg.get(op_at..op_end)? else {
        return None;
    };
    let at = (op_end + 3) & !3;
    // No service contexts.
    if u32_at(msg, at, order)? != 0 {
        return None;
    }
    let mut body_at = at + 4;
    if body_at < msg.len() {
        body_at = (body_at + 7) & !7;
    }
    if body_at > msg.len() {
        return None;
    }
    Some(RequestLayout {
        request_id: field(12),
        response_flags,
        order,
        key_end,
        op_at,
        op_end: op_end - 1,
        body_at,
    })
}

impl RequestLayout {
    /// True when the client waits for a reply.
    #[inline(always)]
    pub fn response_expected(&self) -> bool {
        self.response_flags != ResponseFlags::None
    }

    /// The object key and the operation, from `head` (the message, or
    /// its first [`body_at`](Self::body_at) bytes); `None` if the
    /// operation is not UTF-8 or holds a NUL, which the full decoder
    /// refuses.
    #[inline(always)]
    pub fn key_and_operation<'a>(&self, head: &'a [u8]) -> Option<(&'a [u8], &'a str)> {
        Some((
            head.get(KEY_AT..self.key_end)?,
            operation_text(head.get(self.op_at..self.op_end)?)?,
        ))
    }

    /// The argument reader over `body`, the message from
    /// [`body_at`](Self::body_at) on, lent exclusively (so it may decode
    /// sequences of plain data in place).
    #[inline(always)]
    pub fn args<'a>(&self, body: &'a mut [u8]) -> Reader<'a> {
        let mut args = Reader::with_offset_mut(body, self.order, self.body_at);
        args.set_version(GiopVersion::V1_2);
        args
    }
}

/// Reads `msg` as a [`FastRequest`], or `None` for the full decoder.
#[inline]
pub fn read_request<'a>(msg: &'a [u8], limits: &Limits) -> Option<FastRequest<'a>> {
    let at = request_layout(msg)?;
    // The layout checked that the size field is the length after the
    // header.
    if (msg.len() - HEADER_LEN) as u64 > u64::from(limits.max_message_size) {
        return None;
    }
    let (object_key, operation) = at.key_and_operation(msg)?;
    Some(FastRequest {
        request_id: at.request_id,
        response_flags: at.response_flags,
        object_key,
        operation,
        body: Body {
            bytes: msg.get(at.body_at..)?,
            offset: at.body_at,
            order: at.order,
            version: GiopVersion::V1_2,
        },
    })
}

/// The operation name as text, as the full decoder reads it: UTF-8 with
/// no NUL inside. IDL identifiers are ASCII, checked a word at a time
/// together with the NUL (~20 instructions for a 17-byte name where
/// `str::from_utf8` alone takes ~50); anything else gets the full check.
#[inline(always)]
fn operation_text(op: &[u8]) -> Option<&str> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW: u64 = 0x0101_0101_0101_0101;
    let n = op.len();
    // A byte of 1..=0x7f has neither its own high bit nor, less one, the
    // high bit; without a zero byte nothing borrows, so a word is flagged
    // exactly when it holds a zero or a byte of 0x80 and above.
    let word = |at: usize| {
        let w = u64::from_ne_bytes(op[at..at + 8].try_into().expect("8 bytes"));
        w | w.wrapping_sub(LOW)
    };
    let plain = if n >= 8 {
        // Whole words, the last one overlapping the one before; names of
        // up to 24 bytes (most) without a loop.
        let mut acc = word(0) | word(n - 8);
        if n > 16 {
            acc |= word(8);
            let mut at = 16;
            while at + 8 < n {
                acc |= word(at);
                at += 8;
            }
        }
        acc & HIGH == 0
    } else {
        op.iter().all(|&b| b.wrapping_sub(1) < 0x7f)
    };
    if plain {
        // SAFETY: every byte is below 0x80, and ASCII is valid UTF-8.
        Some(unsafe { core::str::from_utf8_unchecked(op) })
    } else {
        operation_text_general(op)
    }
}

/// [`operation_text`] of a name that is not plain ASCII: out of line, so
/// the common check stays small enough to inline.
#[cold]
#[inline(never)]
fn operation_text_general(op: &[u8]) -> Option<&str> {
    if op.contains(&0) {
        None
    } else {
        core::str::from_utf8(op).ok()
    }
}

/// Reads `msg` as a [`FastReply`], or `None` for the full decoder.
#[inline]
pub fn read_reply<'a>(msg: &'a [u8], limits: &Limits) -> Option<FastReply<'a>> {
    let order = whole_1_2(msg, MsgType::Reply, limits)?;
    let request_id = u32_at(msg, 12, order)?;
    let status = ReplyStatus::from_u32(u32_at(msg, 16, order)?, GiopVersion::V1_2).ok()?;
    if u32_at(msg, 20, order)? != 0 {
        return None;
    }
    Some(FastReply {
        request_id,
        status,
        body: Body {
            bytes: msg.get(REPLY_BODY_AT..)?,
            offset: REPLY_BODY_AT,
            order,
            version: GiopVersion::V1_2,
        },
    })
}

fn order_bytes(v: u32, order: ByteOrder) -> [u8; 4] {
    match order {
        ByteOrder::Big => v.to_be_bytes(),
        ByteOrder::Little => v.to_le_bytes(),
    }
}

/// Writes the header of a GIOP 1.2 Request addressed by key with no
/// service contexts, in `w`'s byte order: the same bytes as
/// [`crate::encode_request`], in a few copies. Append the arguments, then
/// [`Pending::finish`].
pub fn write_request(
    w: &mut Writer,
    request_id: u32,
    response_flags: ResponseFlags,
    object_key: &[u8],
    operation: &str,
) -> Result<Pending, GiopError> {
    if operation.as_bytes().contains(&0) {
        return Err(CdrError::Unrepresentable('\0').into());
    }
    let too_long = |n: usize| CdrError::TooLong(n);
    let key_len = u32::try_from(object_key.len()).map_err(|_| too_long(object_key.len()))?;
    let op_len = u32::try_from(operation.len() + 1).map_err(|_| too_long(operation.len()))?;
    let order = w.order();
    w.clear();
    w.set_version(GiopVersion::V1_2);
    let mut fixed = [0u8; KEY_AT];
    let header = MessageHeader::new(GiopVersion::V1_2, order, MsgType::Request);
    fixed[..HEADER_LEN].copy_from_slice(&header.encode());
    fixed[12..16].copy_from_slice(&order_bytes(request_id, order));
    fixed[16] = response_flags as u8;
    fixed[24..28].copy_from_slice(&order_bytes(key_len, order));
    // The layout follows from the two lengths: computed once, written
    // in five copies (the writer's per-field alignment costs more).
    let op_len_at = (KEY_AT + object_key.len() + 3) & !3;
    let op_at = op_len_at + 4;
    let header_end = ((op_at + operation.len() + 1 + 3) & !3) + 4;
    let body_at = (header_end + 7) & !7;
    let key_end = KEY_AT + object_key.len();
    let op_end = op_at + operation.len();
    // The usual header fits a block on the stack, zeroed (the NUL,
    // paddings and the empty service context list are zeros) and handed
    // to the writer in one copy.
    let mut block = [0u8; 128];
    if let Some(h) = block.get_mut(..body_at) {
        h[..KEY_AT].copy_from_slice(&fixed);
        h[KEY_AT..key_end].copy_from_slice(object_key);
        h[op_len_at..op_at].copy_from_slice(&order_bytes(op_len, order));
        h[op_at..op_end].copy_from_slice(operation.as_bytes());
        w.write_bytes(h);
    } else {
        w.reserve(body_at);
        w.write_bytes(&fixed);
        w.write_bytes(object_key);
        let mut op_len_field = [0u8; 8];
        let pad = op_len_at - key_end;
        op_len_field[pad..pad + 4].copy_from_slice(&order_bytes(op_len, order));
        w.write_bytes(&op_len_field[..pad + 4]);
        w.write_bytes(operation.as_bytes());
        w.write_bytes(&[0u8; 16][..body_at - op_end]);
    }
    Ok(Pending::new(header_end, body_at))
}

/// Writes the header of a GIOP 1.2 Reply with no service contexts, in
/// `w`'s byte order: the same bytes as [`crate::encode_reply`]. Append the
/// body, then [`Pending::finish`].
pub fn write_reply(w: &mut Writer, request_id: u32, status: ReplyStatus) -> Pending {
    let order = w.order();
    w.clear();
    w.set_version(GiopVersion::V1_2);
    let mut fixed = [0u8; REPLY_BODY_AT];
    let header = MessageHeader::new(GiopVersion::V1_2, order, MsgType::Reply);
    fixed[..HEADER_LEN].copy_from_slice(&header.encode());
    fixed[12..16].copy_from_slice(&order_bytes(request_id, order));
    fixed[16..20].copy_from_slice(&order_bytes(status as u32, order));
    w.write_bytes(&fixed);
    Pending::new(REPLY_BODY_AT, REPLY_BODY_AT)
}

#[cfg(test)]
mod tests;
