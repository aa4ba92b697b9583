//! Fragmentation (GIOP 1.1 and 1.2), sans I/O: a [`Reassembler`] that
//! turns a first message plus its Fragment messages back into one
//! contiguous unfragmented message, and [`fragment`], which splits an
//! encoded message into pieces ready for a vectored write.
//!
//! Alignment: in GIOP 1.2 every fragment but the last has a total length
//! that is a multiple of 8, and a Fragment's data starts at offset 16, so
//! concatenating the data after each header continues the first message's
//! CDR stream exactly. GIOP 1.1 Fragments carry no request id and their
//! data starts at offset 12; the 1.1 text is ambiguous about alignment
//! after a cut. omniORB (the reference peer) treats a 1.1 message as one
//! CDR stream cut anywhere (its own 1.1 fragments are 8192 bytes long)
//! and, receiving, mishandles non-final 1.1 fragments whose length is not
//! a multiple of 8 (4.2.5 loops forever on the 4 bytes past the last
//! multiple of 8). So [`fragment`] cuts 1.1 messages like 1.2 ones: every
//! non-final piece's total length is a multiple of 8, and the
//! [`Reassembler`] concatenates the data, which is exactly omniORB's
//! view (tested both ways with 1 MB `sequence<double>` arguments in
//! `tests/interop`).

use peregrine_cdr::{ByteOrder, GiopVersion};

use crate::error::GiopError;
use crate::header::{set_more_fragments, set_size, MessageHeader, MsgType, HEADER_LEN};
use crate::limits::Limits;
use crate::service_context::ServiceContexts;

/// Length of a GIOP 1.2 Fragment's header: message header plus request id.
const FRAGMENT_HEADER_1_2: usize = HEADER_LEN + 4;

/// The smallest piece [`fragment`] cuts (a 1.2 fragment header plus 16
/// bytes of data), so tiny limits cannot explode a message into headers.
pub const MIN_FRAGMENT_LEN: usize = 32;

/// What [`Reassembler::push`] made of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assembled<'a> {
    /// An unfragmented message (or a CancelRequest, after dropping any
    /// partial message it cancels), passed through unchanged.
    Whole(&'a [u8]),
    /// A message rebuilt from its fragments: the first message's header
    /// with the more-fragments bit cleared and the size patched, then all
    /// the data, ready for [`crate::decode_message`].
    Reassembled(Vec<u8>),
    /// A fragment was kept; the message is not complete yet.
    Incomplete,
}

#[derive(Debug)]
struct Partial {
    /// GIOP 1.2 request id; `None` for the (single) 1.1 partial message.
    key: Option<u32>,
    /// Request id of a 1.1 Request whose header fit in the first piece,
    /// so a CancelRequest can find it.
    cancel_id: Option<u32>,
    version: GiopVersion,
    order: ByteOrder,
    buf: Vec<u8>,
    fragments: usize,
}

/// Reassembles fragmented messages of one connection: keyed by request
/// id in GIOP 1.2, one at a time in GIOP 1.1. Limits on the number of
/// partial messages, their total bytes, their fragment count and the
/// reassembled size are checked before anything is copied.
#[derive(Debug, Default)]
pub struct Reassembler {
    limits: Limits,
    partials: Vec<Partial>,
    held: usize,
}

impl Reassembler {
    /// A reassembler enforcing `limits`.
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            partials: Vec::new(),
            held: 0,
        }
    }

    /// Number of messages in reassembly.
    pub fn pending(&self) -> usize {
        self.partials.len()
    }

    /// Bytes held by messages in reassembly.
    pub fn held_bytes(&self) -> usize {
        self.held
    }

    /// Drops every partial message (connection closed).
    pub fn clear(&mut self) {
        self.partials.clear();
        self.held = 0;
    }

    /// Drops the partial message of `request_id`; true if there was one.
    pub fn cancel(&mut self, request_id: u32) -> bool {
        match self
            .partials
            .iter()
            .position(|p| p.key == Some(request_id) || p.cancel_id == Some(request_id))
        {
            Some(i) => {
                self.remove(i);
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, i: usize) -> Partial {
        let p = self.partials.swap_remove(i);
        self.held -= p.buf.len();
        p
    }

    /// Takes one complete GIOP message (header plus `message_size` bytes).
    pub fn push<'a>(&mut self, msg: &'a [u8]) -> Result<Assembled<'a>, GiopError> {
        let h = MessageHeader::decode(msg, &self.limits)?;
        if msg.len() != h.message_len() {
            return Err(GiopError::SizeMismatch {
                declared: h.size,
                actual: msg.len().saturating_sub(HEADER_LEN),
            });
        }
        match h.msg_type {
            MsgType::Fragment => self.continue_partial(&h, msg),
            MsgType::CancelRequest => {
                if let Some(id) = read_u32_at(msg, HEADER_LEN, h.order) {
                    self.cancel(id);
                }
                Ok(Assembled::Whole(msg))
            }
            _ if h.more_fragments => self.start_partial(&h, msg),
            _ => Ok(Assembled::Whole(msg)),
        }
    }

    fn start_partial<'a>(
        &mut self,
        h: &MessageHeader,
        msg: &'a [u8],
    ) -> Result<Assembled<'a>, GiopError> {
        let (key, cancel_id) = if h.version >= GiopVersion::V1_2 {
            if msg.len() % 8 != 0 {
                return Err(GiopError::MisalignedFragment { len: msg.len() });
            }
            let id =
                read_u32_at(msg, HEADER_LEN, h.order).ok_or(GiopError::FragmentWithoutRequestId)?;
            (Some(id), None)
        } else {
            (None, legacy_request_id(h, msg, &self.limits))
        };
        if self.partials.iter().any(|p| p.key == key) {
            return Err(GiopError::DuplicateFragmentedMessage { request_id: key });
        }
        if self.partials.len() >= self.limits.max_partial_messages {
            return Err(GiopError::TooManyPartialMessages {
                limit: self.limits.max_partial_messages,
            });
        }
        self.reserve(msg.len())?;
        self.held += msg.len();
        self.partials.push(Partial {
            key,
            cancel_id,
            version: h.version,
            order: h.order,
            buf: msg.to_vec(),
            fragments: 1,
        });
        Ok(Assembled::Incomplete)
    }

    fn continue_partial<'a>(
        &mut self,
        h: &MessageHeader,
        msg: &'a [u8],
    ) -> Result<Assembled<'a>, GiopError> {
        let (key, data_at) = if h.version >= GiopVersion::V1_2 {
            let id =
                read_u32_at(msg, HEADER_LEN, h.order).ok_or(GiopError::FragmentWithoutRequestId)?;
            (Some(id), FRAGMENT_HEADER_1_2)
        } else {
            (None, HEADER_LEN)
        };
        let i = self
            .partials
            .iter()
            .position(|p| p.key == key)
            .ok_or(GiopError::UnexpectedFragment { request_id: key })?;
        // Any failure past this point poisons the message: drop it so its
        // memory is released at once.
        match self.append(i, h, msg, data_at) {
            Ok(true) => {
                let mut p = self.remove(i);
                finalize(&mut p.buf);
                Ok(Assembled::Reassembled(p.buf))
            }
            Ok(false) => Ok(Assembled::Incomplete),
            Err(e) => {
                self.remove(i);
                Err(e)
            }
        }
    }

    /// Appends a fragment's data; true when it was the last.
    fn append(
        &mut self,
        i: usize,
        h: &MessageHeader,
        msg: &[u8],
        data_at: usize,
    ) -> Result<bool, GiopError> {
        let limits = self.limits;
        let p = self
            .partials
            .get(i)
            .ok_or(GiopError::UnexpectedFragment { request_id: None })?;
        if p.version != h.version || p.order != h.order {
            return Err(GiopError::FragmentMismatch);
        }
        if h.version >= GiopVersion::V1_2 && h.more_fragments && msg.len() % 8 != 0 {
            return Err(GiopError::MisalignedFragment { len: msg.len() });
        }
        if p.fragments >= limits.max_fragments_per_message {
            return Err(GiopError::TooManyFragments {
                limit: limits.max_fragments_per_message,
            });
        }
        let data = msg.get(data_at..).unwrap_or_default();
        let size = (p.buf.len() - HEADER_LEN) as u64 + data.len() as u64;
        if size > u64::from(limits.max_message_size) {
            return Err(GiopError::MessageTooLarge {
                size,
                limit: limits.max_message_size,
            });
        }
        self.reserve(data.len())?;
        self.held += data.len();
        let p = self
            .partials
            .get_mut(i)
            .ok_or(GiopError::UnexpectedFragment { request_id: None })?;
        p.buf.extend_from_slice(data);
        p.fragments += 1;
        Ok(!h.more_fragments)
    }

    fn reserve(&self, more: usize) -> Result<(), GiopError> {
        if self.held.saturating_add(more) > self.limits.max_fragments_bytes {
            return Err(GiopError::FragmentsTooLarge {
                limit: self.limits.max_fragments_bytes,
            });
        }
        Ok(())
    }
}

/// Turns the first piece's header into an unfragmented message's header.
fn finalize(buf: &mut [u8]) {
    let size = buf.len().saturating_sub(HEADER_LEN);
    if let Some(h) = buf.first_chunk_mut::<HEADER_LEN>() {
        set_more_fragments(h, false);
        // Fits: reassembly stops at `max_message_size`, a u32.
        set_size(h, u32::try_from(size).unwrap_or(u32::MAX));
    }
}

pub(crate) fn read_u32_at(msg: &[u8], at: usize, order: ByteOrder) -> Option<u32> {
    let b: [u8; 4] = msg.get(at..at + 4)?.try_into().ok()?;
    Some(match order {
        ByteOrder::Big => u32::from_be_bytes(b),
        ByteOrder::Little => u32::from_le_bytes(b),
    })
}

/// The request id of a 1.1 Request, which follows its service contexts,
/// if the first piece holds it.
pub(crate) fn legacy_request_id(h: &MessageHeader, msg: &[u8], limits: &Limits) -> Option<u32> {
    if h.msg_type != MsgType::Request {
        return None;
    }
    let body = msg.get(HEADER_LEN..)?;
    let mut r = peregrine_cdr::Reader::with_offset(body, h.order, HEADER_LEN);
    ServiceContexts::decode(&mut r, limits.max_service_contexts).ok()?;
    r.read_u32().ok()
}

/// One piece of a fragmented message: a header (the first message's, or a
/// Fragment's) and a slice of the original message's data, so it can be
/// sent with one vectored write and no copy of the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece<'a> {
    header: [u8; FRAGMENT_HEADER_1_2],
    header_len: usize,
    /// The data this piece carries.
    pub payload: &'a [u8],
}

impl Piece<'_> {
    /// The header bytes (12, or 16 for a GIOP 1.2 Fragment).
    pub fn header(&self) -> &[u8] {
        self.header.get(..self.header_len).unwrap_or_default()
    }

    /// Total length on the wire.
    pub fn len(&self) -> usize {
        self.header_len + self.payload.len()
    }

    /// Always false: a piece has at least a header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Appends the piece's bytes to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.header());
        out.extend_from_slice(self.payload);
    }

    /// The piece's bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len());
        self.write_to(&mut v);
        v
    }
}

/// Iterator over the pieces of a message, from [`fragment`].
#[derive(Debug, Clone)]
pub struct Fragments<'a> {
    header: MessageHeader,
    /// The message's data (after its 12-byte header) not yet handed out.
    rest: &'a [u8],
    first: bool,
    max_len: usize,
    request_id: Option<u32>,
}

/// Splits an encoded message so no piece is longer than `max_len` (at
/// least [`MIN_FRAGMENT_LEN`]): the first piece is the message with the
/// more-fragments bit set, the others are Fragment messages. A message that
/// fits is returned as a single piece. Every non-final piece is a multiple
/// of 8 long (as CORBA requires for GIOP 1.2, and as omniORB expects for
/// 1.1; see the module notes).
pub fn fragment(msg: &[u8], max_len: usize) -> Result<Fragments<'_>, GiopError> {
    let limits = Limits::default().with_max_message_size(u32::MAX);
    let header = MessageHeader::decode(msg, &limits)?;
    let rest = msg.get(HEADER_LEN..).unwrap_or_default();
    if rest.len() != header.size as usize {
        return Err(GiopError::SizeMismatch {
            declared: header.size,
            actual: rest.len(),
        });
    }
    let max_len = max_len.max(MIN_FRAGMENT_LEN);
    let mut request_id = None;
    if msg.len() > max_len {
        let fragmentable = header.msg_type != MsgType::Fragment
            && !header.more_fragments
            && header.msg_type.may_fragment(header.version);
        if !fragmentable {
            return Err(GiopError::NotFragmentable {
                msg_type: header.msg_type,
                version: header.version,
            });
        }
        if header.version >= GiopVersion::V1_2 {
            request_id = Some(
                read_u32_at(msg, HEADER_LEN, header.order)
                    .ok_or(GiopError::FragmentWithoutRequestId)?,
            );
        }
    }
    Ok(Fragments {
        header,
        rest,
        first: true,
        max_len,
        request_id,
    })
}

impl<'a> Iterator for Fragments<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        if !self.first && self.rest.is_empty() {
            return None;
        }
        let v12 = self.header.version >= GiopVersion::V1_2;
        let header_len = if self.first || !v12 {
            HEADER_LEN
        } else {
            FRAGMENT_HEADER_1_2
        };
        let room = self.max_len - header_len;
        let (payload, more) = if self.rest.len() <= room {
            (self.rest, false)
        } else {
            // Cut so the piece's total length is 0 mod 8: the next
            // piece's data continues the CDR stream at an 8-aligned
            // position (1.2 rule; what omniORB does and expects in 1.1).
            let total = self.max_len & !7;
            (self.rest.get(..total - header_len)?, true)
        };
        self.rest = self.rest.get(payload.len()..).unwrap_or_default();
        let mut header = [0u8; FRAGMENT_HEADER_1_2];
        let mut h = self.header;
        h.more_fragments = more;
        if !self.first {
            h.msg_type = MsgType::Fragment;
        }
        let extra = header_len - HEADER_LEN;
        h.size = u32::try_from(payload.len() + extra).unwrap_or(u32::MAX);
        header[..HEADER_LEN].copy_from_slice(&h.encode());
        if extra > 0 {
            let id = self.request_id.unwrap_or(0);
            let b = match h.order {
                ByteOrder::Big => id.to_be_bytes(),
                ByteOrder::Little => id.to_le_bytes(),
            };
            header[HEADER_LEN..FRAGMENT_HEADER_1_2].copy_from_slice(&b);
        }
        self.first = false;
        Some(Piece {
            header,
            header_len,
            payload,
        })
    }
}

#[cfg(test)]
mod tests;
