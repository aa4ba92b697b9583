//! Incoming bytes: a deframer that cuts the byte stream into whole GIOP
//! messages however it was split, and the owned message buffers that
//! events hand to the driver.

use core::mem;

use peregrine_cdr::{ByteOrder, GiopVersion};

use super::pool::BufPool;
use crate::error::GiopError;
use crate::header::{MessageHeader, MsgType, HEADER_LEN};
use crate::limits::Limits;
use crate::message::Body;

/// Cuts a byte stream into messages. The header is checked (magic,
/// version, type, size limit) as soon as its 12 bytes are in, and the
/// buffer for the rest grows only as bytes arrive, so a header that
/// announces a large message costs nothing until the peer sends it.
#[derive(Debug, Default)]
pub(crate) struct Deframer {
    buf: Vec<u8>,
    /// Length of the message in `buf` once its header is decoded.
    need: Option<usize>,
}

impl Deframer {
    /// Takes bytes from the front of `input` until a message is complete
    /// (returned) or `input` is empty (`None`).
    #[inline]
    pub(crate) fn next(
        &mut self,
        input: &mut &[u8],
        limits: &Limits,
        pool: &mut BufPool,
    ) -> Option<Result<Vec<u8>, GiopError>> {
        if input.is_empty() {
            return None;
        }
        let need = match self.need {
            Some(n) => n,
            // The whole header is in the input: one buffer of the right
            // size (what arrived, up to the message's end), one copy.
            None if self.buf.is_empty() && input.len() >= HEADER_LEN => {
                match MessageHeader::decode(input, limits) {
                    Ok(h) => {
                        let need = h.message_len();
                        self.buf = pool.take(need.min(input.len()));
                        *self.need.insert(need)
                    }
                    Err(e) => return Some(Err(e)),
                }
            }
            None => {
                if self.buf.capacity() == 0 {
                    self.buf = pool.take(HEADER_LEN);
                }
                let take = (HEADER_LEN - self.buf.len()).min(input.len());
                let (head, rest) = input.split_at(take);
                self.buf.extend_from_slice(head);
                *input = rest;
                if self.buf.len() < HEADER_LEN {
                    return None;
                }
                match MessageHeader::decode(&self.buf, limits) {
                    Ok(h) => *self.need.insert(h.message_len()),
                    Err(e) => return Some(Err(e)),
                }
            }
        };
        let take = (need - self.buf.len()).min(input.len());
        let (body, rest) = input.split_at(take);
        // Grow geometrically (bytes may come one at a time) but never
        // past twice what arrived, nor past the announced size.
        let len = self.buf.len();
        if self.buf.capacity() - len < take {
            self.buf.reserve_exact(take.max(len).min(need - len));
        }
        self.buf.extend_from_slice(body);
        *input = rest;
        if self.buf.len() < need {
            return None;
        }
        self.need = None;
        Some(Ok(mem::take(&mut self.buf)))
    }

    /// Bytes of a message not complete yet.
    pub(crate) fn buffered(&self) -> usize {
        self.buf.len()
    }
}

/// The type of a message the deframer returned (its header is valid).
pub(crate) fn msg_type(msg: &[u8]) -> Option<MsgType> {
    MsgType::from_u8(*msg.get(7)?)
}

/// A received message the driver owns: the whole message (header
/// included) and where its body starts, so the ORB decodes the body in
/// place with the right alignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming {
    buf: Vec<u8>,
    body_at: usize,
    order: ByteOrder,
    version: GiopVersion,
}

impl Incoming {
    pub(crate) fn from_parts(
        buf: Vec<u8>,
        body_at: usize,
        order: ByteOrder,
        version: GiopVersion,
    ) -> Self {
        Self {
            buf,
            body_at,
            order,
            version,
        }
    }

    /// The body (arguments, results, exception or IOR) with its stream
    /// offset, byte order and version.
    #[inline]
    pub fn body(&self) -> Body<'_> {
        Body {
            bytes: self.buf.get(self.body_at..).unwrap_or_default(),
            offset: self.body_at,
            order: self.order,
            version: self.version,
        }
    }

    /// The whole message, header included (reassembled if it came in
    /// fragments).
    pub fn message(&self) -> &[u8] {
        &self.buf
    }

    /// The message buffer, to reuse.
    #[inline]
    pub fn into_message(self) -> Vec<u8> {
        self.buf
    }

    /// GIOP version of the message.
    pub fn version(&self) -> GiopVersion {
        self.version
    }

    /// Byte order of the message.
    pub fn byte_order(&self) -> ByteOrder {
        self.order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(size: u32) -> Vec<u8> {
        let mut h = MessageHeader::new(
            GiopVersion::V1_2,
            ByteOrder::Big,
            crate::MsgType::CloseConnection,
        );
        h.size = size;
        let mut v = h.encode().to_vec();
        v.resize(HEADER_LEN + size as usize, 0xAA);
        v
    }

    #[test]
    fn any_split_yields_the_same_messages() {
        let mut stream = msg(0);
        stream.extend(msg(5));
        stream.extend(msg(0));
        for chunk in 1..=stream.len() {
            let mut d = Deframer::default();
            let mut got = Vec::new();
            for mut c in stream.chunks(chunk) {
                while let Some(m) = d.next(&mut c, &Limits::DEFAULT, &mut BufPool::default()) {
                    got.push(m.unwrap());
                }
                assert!(c.is_empty());
            }
            assert_eq!(got, [msg(0), msg(5), msg(0)], "chunk {chunk}");
            assert_eq!(d.buffered(), 0);
        }
    }

    #[test]
    fn announced_size_allocates_nothing_until_sent() {
        let limits = Limits::DEFAULT;
        let mut d = Deframer::default();
        let head = MessageHeader {
            size: limits.max_message_size,
            ..MessageHeader::new(GiopVersion::V1_2, ByteOrder::Big, crate::MsgType::Request)
        }
        .encode();
        let mut input = &head[..];
        assert!(d
            .next(&mut input, &limits, &mut BufPool::default())
            .is_none());
        let mut more: &[u8] = &[1, 2, 3];
        assert!(d
            .next(&mut more, &limits, &mut BufPool::default())
            .is_none());
        assert!(d.buf.capacity() < 64, "{}", d.buf.capacity());
    }

    #[test]
    fn oversized_header_is_an_error() {
        let limits = Limits::DEFAULT.with_max_message_size(4);
        let mut d = Deframer::default();
        let m = msg(5);
        let mut input = &m[..];
        assert_eq!(
            d.next(&mut input, &limits, &mut BufPool::default()),
            Some(Err(GiopError::MessageTooLarge { size: 5, limit: 4 }))
        );
    }
}
