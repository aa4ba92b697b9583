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

use peregrine_cdr::{ByteOrder, CdrError, GiopVersion, Writer};

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

/// Reads `msg` as a [`FastRequest`], or `None` for the full decoder.
#[inline]
pub fn read_request<'a>(msg: &'a [u8], limits: &Limits) -> Option<FastRequest<'a>> {
    let order = whole_1_2(msg, MsgType::Request, limits)?;
    let request_id = u32_at(msg, 12, order)?;
    let response_flags = ResponseFlags::from_u8(*msg.get(16)?).ok()?;
    // TargetAddress: KeyAddr (a zero short at 20).
    if msg.get(20..22)? != [0, 0] {
        return None;
    }
    let key_len = u32_at(msg, 24, order)? as usize;
    let key_end = KEY_AT.checked_add(key_len)?;
    let object_key = msg.get(KEY_AT..key_end)?;
    let at = (key_end + 3) & !3;
    let op_len = u32_at(msg, at, order)? as usize;
    let op_at = at + 4;
    let op_end = op_at.checked_add(op_len)?;
    // A string: non-empty, NUL-terminated, no NUL inside, UTF-8.
    let (&0, op) = msg.get(op_at..op_end)?.split_last()? else {
        return None;
    };
    if op.contains(&0) {
        return None;
    }
    let operation = utf8(op)?;
    let at = (op_end + 3) & !3;
    // No service contexts.
    if u32_at(msg, at, order)? != 0 {
        return None;
    }
    let mut body_at = at + 4;
    if body_at < msg.len() {
        body_at = (body_at + 7) & !7;
    }
    let body = msg.get(body_at..)?;
    Some(FastRequest {
        request_id,
        response_flags,
        object_key,
        operation,
        body: Body {
            bytes: body,
            offset: body_at,
            order,
            version: GiopVersion::V1_2,
        },
    })
}

/// `bytes` as a string if UTF-8. Operation names are ASCII identifiers:
/// checked as such first, which for a short name costs a few
/// instructions where the general UTF-8 validation costs ~70.
#[inline(always)]
fn utf8(bytes: &[u8]) -> Option<&str> {
    if bytes.is_ascii() {
        // SAFETY: ASCII is valid UTF-8.
        return Some(unsafe { core::str::from_utf8_unchecked(bytes) });
    }
    core::str::from_utf8(bytes).ok()
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
