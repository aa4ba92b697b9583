//! Outgoing bytes: encoded messages queued whole or cut into fragments,
//! handed to the driver one [`Transmit`] at a time.

use std::collections::VecDeque;
use std::io::IoSlice;
use std::ops::Range;
use std::sync::Arc;

use crate::error::GiopError;
use crate::fragment::fragment;
use crate::header::{MessageHeader, HEADER_LEN};
use crate::limits::Limits;

/// Longest header a piece carries: a GIOP 1.2 Fragment's (message header
/// plus request id).
const MAX_HEAD: usize = HEADER_LEN + 4;

/// The bytes of one GIOP message or fragment for the driver to write, in
/// order, before the next: a short header and a payload that is the
/// encoded message itself (whole messages) or a slice of it shared by
/// all of its fragments, so a large body is never copied to be cut.
#[derive(Debug, Clone)]
pub struct Transmit {
    head: [u8; MAX_HEAD],
    head_len: u8,
    data: Data,
    range: Range<usize>,
}

#[derive(Debug, Clone)]
enum Data {
    Owned(Vec<u8>),
    Shared(Arc<Vec<u8>>),
}

impl Data {
    fn bytes(&self) -> &[u8] {
        match self {
            Data::Owned(v) => v,
            Data::Shared(v) => v,
        }
    }
}

impl Transmit {
    #[inline]
    fn whole(msg: Vec<u8>) -> Self {
        Self {
            head: [0; MAX_HEAD],
            head_len: 0,
            range: 0..msg.len(),
            data: Data::Owned(msg),
        }
    }

    /// The header bytes written before [`Transmit::payload`] (empty for a
    /// whole message, whose header is part of its payload).
    #[inline]
    pub fn head(&self) -> &[u8] {
        self.head
            .get(..usize::from(self.head_len))
            .unwrap_or_default()
    }

    /// The bytes after [`Transmit::head`].
    #[inline]
    pub fn payload(&self) -> &[u8] {
        self.data
            .bytes()
            .get(self.range.clone())
            .unwrap_or_default()
    }

    /// Both parts, for one vectored write.
    pub fn io_slices(&self) -> [IoSlice<'_>; 2] {
        [IoSlice::new(self.head()), IoSlice::new(self.payload())]
    }

    /// Total length.
    pub fn len(&self) -> usize {
        usize::from(self.head_len) + self.range.len()
    }

    /// Always false: a transmit holds at least a message header.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends both parts to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.head());
        out.extend_from_slice(self.payload());
    }

    /// The message buffer, to hand back to the connection
    /// (`recycle`) once written: the whole message's, or a fragmented
    /// message's once its last piece is dropped; `None` while other
    /// pieces still share it.
    #[inline]
    pub fn into_buffer(self) -> Option<Vec<u8>> {
        match self.data {
            Data::Owned(v) => Some(v),
            Data::Shared(v) => Arc::try_unwrap(v).ok(),
        }
    }

    /// The bytes as one vector: the message itself, without a copy, when
    /// it was not fragmented.
    pub fn into_vec(self) -> Vec<u8> {
        match self.data {
            Data::Owned(v) if self.head_len == 0 && self.range == (0..v.len()) => v,
            _ => {
                let mut out = Vec::with_capacity(self.len());
                self.write_to(&mut out);
                out
            }
        }
    }
}

/// What happens once a queued piece has been handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    /// Nothing.
    Plain,
    /// A piece of the request with this id left.
    Request(u32),
    /// The last message of the connection (CloseConnection or
    /// MessageError) left: the connection is closed.
    Last,
}

/// Messages waiting to be written, in order; a fragmented message's
/// pieces are queued together, so messages never interleave (GIOP 1.1
/// forbids it, and nothing is gained by it here).
#[derive(Debug, Default)]
pub(crate) struct OutQueue {
    queue: VecDeque<(Transmit, Tag)>,
}

impl OutQueue {
    /// Queues an encoded message, cut into pieces of at most `max` bytes
    /// when given and the message type allows it.
    #[inline]
    pub(crate) fn push(
        &mut self,
        msg: Vec<u8>,
        max: Option<usize>,
        tag: Tag,
    ) -> Result<(), GiopError> {
        match max.filter(|&m| msg.len() > m) {
            None => {
                self.queue.push_back((Transmit::whole(msg), tag));
                Ok(())
            }
            Some(max) => self.push_fragmented(msg, max, tag),
        }
    }

    /// [`OutQueue::push`] for a message longer than `max`.
    #[inline(never)]
    fn push_fragmented(&mut self, msg: Vec<u8>, max: usize, tag: Tag) -> Result<(), GiopError> {
        let unlimited = Limits::DEFAULT.with_max_message_size(u32::MAX);
        let h = MessageHeader::decode(&msg, &unlimited)?;
        if !h.msg_type.may_fragment(h.version) {
            self.queue.push_back((Transmit::whole(msg), tag));
            return Ok(());
        }
        let shared = Arc::new(msg);
        // The pieces carry consecutive slices of the data after the
        // message header.
        let mut at = HEADER_LEN;
        for piece in fragment(&shared, max)? {
            let mut head = [0; MAX_HEAD];
            let h = piece.header();
            head[..h.len()].copy_from_slice(h);
            let t = Transmit {
                head,
                head_len: h.len() as u8,
                data: Data::Shared(Arc::clone(&shared)),
                range: at..at + piece.payload.len(),
            };
            at += piece.payload.len();
            self.queue.push_back((t, tag));
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(Transmit, Tag)> {
        self.queue.pop_front()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Drops everything queued (the connection failed).
    pub(crate) fn clear(&mut self) {
        self.queue.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{encode_request, RequestHeader, ResponseFlags};
    use crate::{Assembled, Reassembler, ServiceContexts, TargetAddress};
    use peregrine_cdr::{ByteOrder, GiopVersion, Writer};

    fn request(version: GiopVersion, body: usize) -> Vec<u8> {
        let mut w = Writer::new(ByteOrder::Big);
        let h = RequestHeader {
            request_id: 7,
            response_flags: ResponseFlags::SyncWithTarget,
            target: TargetAddress::Key(b"key"),
            operation: "op",
            service_contexts: ServiceContexts::EMPTY,
            requesting_principal: &[],
        };
        let p = encode_request(&mut w, version, &h).unwrap();
        for i in 0..body {
            w.write_u8(i as u8);
        }
        p.finish(&mut w).unwrap();
        w.into_vec()
    }

    #[test]
    fn whole_message_is_not_copied() {
        let msg = request(GiopVersion::V1_2, 100);
        let copy = msg.clone();
        let ptr = msg.as_ptr();
        let mut q = OutQueue::default();
        q.push(msg, None, Tag::Plain).unwrap();
        let (t, _) = q.pop().unwrap();
        assert!(t.head().is_empty());
        assert_eq!(t.payload(), copy);
        let back = t.into_vec();
        assert_eq!(back.as_ptr(), ptr);
        assert!(q.pop().is_none());
    }

    #[test]
    fn fragments_share_the_message_and_reassemble() {
        for version in [GiopVersion::V1_1, GiopVersion::V1_2] {
            let msg = request(version, 1000);
            let mut q = OutQueue::default();
            q.push(msg.clone(), Some(64), Tag::Request(7)).unwrap();
            let mut re = Reassembler::new(Limits::DEFAULT);
            let mut n = 0;
            let mut out = None;
            while let Some((t, tag)) = q.pop() {
                assert_eq!(tag, Tag::Request(7));
                assert!(t.len() <= 64);
                n += 1;
                let bytes = t.into_vec();
                if let Assembled::Reassembled(v) = re.push(&bytes).unwrap() {
                    out = Some(v);
                }
            }
            assert!(n > 15, "{n}");
            assert_eq!(out.unwrap(), msg);
        }
    }

    #[test]
    fn giop_1_0_goes_whole() {
        let msg = request(GiopVersion::V1_0, 1000);
        let mut q = OutQueue::default();
        q.push(msg.clone(), Some(64), Tag::Plain).unwrap();
        assert_eq!(q.pop().unwrap().0.payload(), msg);
        assert!(q.is_empty());
    }
}
