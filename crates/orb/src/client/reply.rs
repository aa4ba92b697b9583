//! Replies as they reach a caller: the fixed-offset reader of the common
//! GIOP 1.2 reply header, the message held until the caller is done, and
//! the parsed reply.

use std::sync::Arc;

use peregrine_cdr::{ByteOrder, CodeSets, GiopVersion, Reader};
use peregrine_giop::{decode_message, GiopError, Limits, Message, ReplyStatus};

use super::conn::*;
use crate::error::raise_giop;
use crate::runtime::{Cause, Phase};
use crate::runtime::{CompletionStatus, SystemException};

/// The summary of a reply read at fixed offsets
/// ([`peregrine_giop::fast::read_reply`]) that outlives the borrow of
/// the receive buffer: its body starts at
/// [`peregrine_giop::fast::REPLY_BODY_AT`].
#[derive(Clone, Copy, Debug)]
pub(super) struct FastHead {
    pub(super) id: u32,
    pub(super) status: ReplyStatus,
    pub(super) order: ByteOrder,
}

/// The common reply (a whole GIOP 1.2 Reply without service contexts)
/// read at fixed offsets; anything else, malformed included, is `None`
/// and takes the full decode.
#[inline(always)]
pub(super) fn fast_reply(m: &[u8], limits: &Limits) -> Option<FastHead> {
    let r = peregrine_giop::fast::read_reply(m, limits)?;
    Some(FastHead {
        id: r.request_id,
        status: r.status,
        order: r.body.order,
    })
}

/// True if `msg` (starting with its GIOP header) is a Reply.
pub(super) fn is_reply(msg: &[u8]) -> bool {
    msg.get(7) == Some(&(peregrine_giop::MsgType::Reply as u8))
}

/// A received message held until its receiver is done with it (then
/// released: see [`Arrived`]).
pub(super) struct Held {
    pub(super) conn: Arc<ClientConn>,
    pub(super) arrived: Arrived,
}

impl Held {
    #[inline(always)]
    pub(super) fn new(conn: Arc<ClientConn>, arrived: Arrived) -> Held {
        Held { conn, arrived }
    }

    /// Runs `f` on the message's bytes.
    pub(super) fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let len = self.arrived.len;
        match &self.arrived.own {
            Some(b) => f(b.message(len)),
            // SAFETY: a held message without its own buffer keeps its
            // receiver the leader until it is released (`finish` or drop,
            // which need `&mut self`, so this borrow has ended by then).
            None => f(unsafe { self.conn.rx.get() }.message(len)),
        }
    }

    /// Runs `f` on the message's bytes, then releases it. Only the call
    /// of `f` is generic (instantiated once per stub operation); the
    /// release is [`Held::release`], one copy for all of them.
    pub(super) fn finish<R>(self, f: impl FnOnce(&[u8], &ClientConn) -> R) -> R {
        let out = self.with_bytes(|b| f(b, &self.conn));
        self.release();
        out
    }

    /// Releases the message (consumed from the receive buffer and the
    /// leadership handed back, or its own buffer returned): what dropping
    /// it does, out of line.
    #[inline(never)]
    pub(super) fn release(self) {
        drop(self);
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.conn.release(&mut self.arrived);
    }
}

/// A received Reply, its header parsed once, decoded in place.
pub(crate) struct ReplyMsg {
    pub(super) held: Held,
    pub(super) codesets: CodeSets,
    pub(super) status: ReplyStatus,
    /// Index of the body in the message, its stream offset (alignment
    /// origin), byte order and GIOP version.
    body_at: usize,
    body_offset: usize,
    pub(super) order: ByteOrder,
    pub(super) version: GiopVersion,
}

impl ReplyMsg {
    /// Parses the reply header of `held` (fixed offsets for the common
    /// GIOP 1.2 reply, else the full decode); `MARSHAL` if it is not a
    /// well-formed Reply.
    #[inline(always)]
    pub(super) fn new(held: Held, codesets: CodeSets) -> Result<ReplyMsg, SystemException> {
        if let Some(h) = held.arrived.head {
            return Ok(Self::fast(held, codesets, h));
        }
        Self::parse(held, codesets)
    }

    /// A reply whose header `h` the leader parsed.
    #[inline(always)]
    pub(super) fn fast(held: Held, codesets: CodeSets, h: FastHead) -> ReplyMsg {
        ReplyMsg {
            held,
            codesets,
            status: h.status,
            body_at: peregrine_giop::fast::REPLY_BODY_AT,
            body_offset: peregrine_giop::fast::REPLY_BODY_AT,
            order: h.order,
            version: GiopVersion::V1_2,
        }
    }

    /// `new` for a reply whose header the leader did not parse.
    #[cold]
    #[inline(never)]
    pub(super) fn parse(held: Held, codesets: CodeSets) -> Result<ReplyMsg, SystemException> {
        let parsed = held.with_bytes(|bytes| {
            let (status, b) = match decode_message(bytes, &held.conn.limits) {
                Ok((_, Message::Reply { header, body })) => (header.status, body),
                Ok((_, other)) => return Err(GiopError::UnexpectedMessage(other.msg_type())),
                Err(e) => return Err(e),
            };
            Ok((
                status,
                bytes.len() - b.bytes.len(),
                b.offset,
                b.order,
                b.version,
            ))
        });
        let (status, body_at, body_offset, order, version) = parsed.map_err(|e| {
            raise_giop(&e, CompletionStatus::Maybe, || {
                Cause::new(Phase::Decode)
                    .with_peer(&held.conn.ep)
                    .with_detail(format_args!("not a well-formed Reply: {e}"))
            })
        })?;
        Ok(ReplyMsg {
            held,
            codesets,
            status,
            body_at,
            body_offset,
            order,
            version,
        })
    }

    /// A reader over the body of `bytes` (this reply's message), with
    /// the call's code sets.
    pub(super) fn reader<'b>(&self, bytes: &'b [u8]) -> Reader<'b> {
        let body = &bytes[self.body_at..];
        let mut r = Reader::with_offset(body, self.order, self.body_offset);
        r.set_version(self.version);
        r.set_codesets(self.codesets);
        r
    }

    /// Runs `f` on a reader over the body.
    pub(super) fn with_reader<R>(&self, f: impl FnOnce(&mut Reader<'_>) -> R) -> R {
        self.held.with_bytes(|b| f(&mut self.reader(b)))
    }

    /// Runs `f` on a reader over the body and the connection, then
    /// releases the reply (see [`Held::finish`]).
    pub(super) fn finish<R>(self, f: impl FnOnce(&mut Reader<'_>, &ClientConn) -> R) -> R {
        let ReplyMsg {
            held,
            codesets,
            status: _,
            body_at,
            body_offset,
            order,
            version,
        } = self;
        held.finish(|b, conn| {
            let mut r = Reader::with_offset(&b[body_at..], order, body_offset);
            r.set_version(version);
            r.set_codesets(codesets);
            let out = f(&mut r, conn);
            r.done();
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use peregrine_cdr::{ByteOrder, GiopVersion, Writer};
    use peregrine_giop::conn::{ClientConnection, ClientEvent, Config};
    use peregrine_giop::{
        encode_reply, Limits, ReplyHeader, ReplyStatus, ServiceContext, ServiceContexts,
    };

    use super::fast_reply;

    fn reply(
        order: ByteOrder,
        version: GiopVersion,
        id: u32,
        status: ReplyStatus,
        contexts: &[ServiceContext<'_>],
        body: &[u8],
    ) -> Vec<u8> {
        let mut w = Writer::new(order);
        let h = ReplyHeader {
            request_id: id,
            status,
            service_contexts: ServiceContexts::from_slice(contexts),
        };
        let p = encode_reply(&mut w, version, &h).unwrap();
        w.write_bytes(body);
        p.finish(&mut w).unwrap();
        w.into_vec()
    }

    /// What a driver-matched machine reports for `m`.
    fn machine_events(m: &[u8]) -> (Vec<ClientEvent>, bool) {
        let now = Instant::now();
        let mut machine = ClientConnection::matched_by_driver(Config::default(), now);
        machine.handle_input(m, now);
        let ev = std::iter::from_fn(|| machine.poll_event()).collect();
        (ev, machine.poll_transmit(now).is_some())
    }

    /// The common reply is the machine's prefix: every message
    /// `fast_reply` takes, the connection's machine (matched by the
    /// driver, as the client runs it) reports as the same reply — id,
    /// status, byte order, body where the fast path reads it, version
    /// 1.2, no service contexts — and sends nothing back.
    #[test]
    fn fast_reply_takes_only_what_the_machine_reports_the_same() {
        let limits = Limits::default();
        let statuses = [
            ReplyStatus::NoException,
            ReplyStatus::UserException,
            ReplyStatus::SystemException,
            ReplyStatus::LocationForward,
            ReplyStatus::LocationForwardPerm,
            ReplyStatus::NeedsAddressingMode,
        ];
        let mut taken = 0;
        for order in [ByteOrder::Little, ByteOrder::Big] {
            for status in statuses {
                for (id, body) in [(1, &[][..]), (7, &[1, 2, 3][..]), (u32::MAX, &[9; 17][..])] {
                    let m = reply(order, GiopVersion::V1_2, id, status, &[], body);
                    let h = fast_reply(&m, &limits).expect("the common reply");
                    taken += 1;
                    let (ev, answered) = machine_events(&m);
                    assert!(!answered, "nothing to answer");
                    let [ClientEvent::Reply(r)] = &ev[..] else {
                        panic!("the machine reports one reply: {ev:?}")
                    };
                    assert_eq!((r.id.0, r.status), (h.id, h.status));
                    assert!(r.service_contexts.is_empty());
                    let b = r.message.body();
                    assert_eq!(b.offset, peregrine_giop::fast::REPLY_BODY_AT);
                    assert_eq!(b.order, h.order);
                    assert_eq!(b.version, GiopVersion::V1_2);
                    assert_eq!(b.bytes, &m[peregrine_giop::fast::REPLY_BODY_AT..]);
                }
            }
        }
        assert_eq!(taken, 36);
    }

    /// Everything else is the machine's: a reply with service contexts,
    /// of another version, or with more fragments to come, and what is
    /// not a well-formed reply.
    #[test]
    fn fast_reply_leaves_the_rest_to_the_machine() {
        let limits = Limits::default();
        let o = ByteOrder::Little;
        let ctx = [ServiceContext {
            id: 1,
            data: &[0, 0, 0, 0][..],
        }];
        let with_ctx = reply(o, GiopVersion::V1_2, 3, ReplyStatus::NoException, &ctx, &[]);
        let v11 = reply(o, GiopVersion::V1_1, 3, ReplyStatus::NoException, &[], &[]);
        let mut more = reply(o, GiopVersion::V1_2, 3, ReplyStatus::NoException, &[], &[]);
        more[6] |= 2;
        let mut bad_status = reply(o, GiopVersion::V1_2, 3, ReplyStatus::NoException, &[], &[]);
        bad_status[16] = 9;
        for m in [&with_ctx, &v11, &more, &bad_status] {
            assert!(fast_reply(m, &limits).is_none(), "{m:?}");
        }
        // The machine decodes the first two, keeps the fragment's start,
        // fails the reply it cannot decode by its id.
        for m in [&with_ctx, &v11] {
            let (ev, _) = machine_events(m);
            assert!(
                matches!(&ev[..], [ClientEvent::Reply(r)] if r.id.0 == 3),
                "{ev:?}"
            );
        }
        assert!(machine_events(&more).0.is_empty());
        let (ev, _) = machine_events(&bad_status);
        assert!(
            matches!(&ev[..], [ClientEvent::Failed { id, .. }] if id.0 == 3),
            "{ev:?}"
        );
    }
}
