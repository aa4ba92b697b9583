//! The common request's server side: the request read at fixed offsets
//! ([`peregrine_giop::fast::request_layout`]: a whole GIOP 1.2 Request
//! addressed by object key with no service contexts) goes straight to
//! dispatch, and its reply header is written as three words.
//!
//! This is the prefix of the connection's GIOP machine
//! ([`peregrine_giop::conn::ServerConnection`]): a message it takes is
//! one for which the machine would report the same plain request (the
//! tests below check that), so it goes straight to dispatch, and the
//! machine is only told that such a request came (once per connection,
//! for the version of CloseConnection). Everything else — fragments,
//! service contexts (the code sets of the first request), other
//! versions, LocateRequest, CancelRequest, CloseConnection, malformed
//! input — goes through the machine.

use peregrine_cdr::{ByteOrder, GiopVersion, Reader, Writer};
use peregrine_giop::HEADER_LEN;

/// The parts of a Request the server uses.
pub(super) struct Incoming<'a> {
    pub(super) request_id: u32,
    pub(super) expected: bool,
    pub(super) key: &'a [u8],
    pub(super) operation: &'a str,
    /// The arguments: over the body borrowed exclusively on the fast path
    /// (so skeletons may decode sequences of plain structs in place, see
    /// `Reader::read_plain_slice`), shared after the full decode.
    pub(super) args: Reader<'a>,
    /// Already looked up in the thread's resolve cache, in vain.
    pub(super) missed: bool,
    /// Came through the connection's machine, which waits for it to be
    /// answered (the fast path's requests never do).
    pub(super) tracked: bool,
}

/// Starts a GIOP 1.2 NO_EXCEPTION reply to `request_id` in `tx`: the same
/// 24 bytes as `runtime::reply_header` (which a skeleton's
/// `ServerRequest::reply` would call), written as three words where that
/// assembles them byte by byte; the size is patched by
/// `ReplyStart::finish`.
#[inline]
pub(super) fn start_reply_1_2(tx: &mut Writer, request_id: u32) {
    let little = tx.order() == ByteOrder::Little;
    let (head, id) = if little {
        (*b"GIOP\x01\x02\x01\x01", request_id.to_le_bytes())
    } else {
        (*b"GIOP\x01\x02\x00\x01", request_id.to_be_bytes())
    };
    // Size (patched later), request id; status NO_EXCEPTION (0) and an
    // empty service context list.
    let mut words = [0u8; 24];
    words[..8].copy_from_slice(&head);
    words[12..16].copy_from_slice(&id);
    tx.clear();
    tx.set_version(GiopVersion::V1_2);
    tx.write_bytes(&words);
}

/// Writes the message size into the GIOP header at the start of `w`
/// (what `ReplyStart::Fixed.finish` does, inline); false if it does not
/// fit (left to `finish`, which reports it).
#[inline(always)]
pub(super) fn patch_size(w: &mut Writer) -> bool {
    let body = w.len().wrapping_sub(HEADER_LEN);
    let little = w.order() == ByteOrder::Little;
    let (Ok(size), Some(at)) = (u32::try_from(body), w.as_mut_slice().get_mut(8..12)) else {
        return false;
    };
    at.copy_from_slice(&if little {
        size.to_le_bytes()
    } else {
        size.to_be_bytes()
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_giop::fast::request_layout;
    use peregrine_giop::{
        decode_message, Message, RequestHeader, ResponseFlags, ServiceContext, ServiceContexts,
        TargetAddress,
    };

    fn request(
        order: ByteOrder,
        flags: ResponseFlags,
        key: &[u8],
        op: &str,
        body: &[u8],
    ) -> Vec<u8> {
        let mut w = Writer::new(order);
        let h = RequestHeader {
            request_id: 0x0102_0304,
            response_flags: flags,
            target: TargetAddress::Key(key),
            operation: op,
            service_contexts: ServiceContexts::EMPTY,
            requesting_principal: &[],
        };
        let p = peregrine_giop::encode_request(&mut w, GiopVersion::V1_2, &h).unwrap();
        w.write_bytes(body);
        p.finish(&mut w).unwrap();
        w.into_vec()
    }

    /// The fast path as dispatch takes it: layout, split, request.
    fn fast_request(m: &mut [u8]) -> Option<Incoming<'_>> {
        let at = request_layout(m)?;
        let (head, body) = m.split_at_mut(at.body_at);
        let head: &[u8] = head;
        let (key, operation) = at.key_and_operation(head)?;
        Some(Incoming {
            request_id: at.request_id,
            expected: at.response_expected(),
            key,
            operation,
            args: at.args(body),
            missed: false,
            tracked: false,
        })
    }

    /// The reply header written by `start_reply_1_2` and sized by
    /// `patch_size` is byte for byte what `encode_reply` writes, in both
    /// byte orders, over a writer holding an earlier message.
    #[test]
    fn start_reply_matches_encode_reply() {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            for body in [&[][..], &[1u8, 2, 3][..], &[7; 9][..]] {
                let mut a = Writer::new(order);
                a.write_bytes(b"an earlier, longer message");
                start_reply_1_2(&mut a, 0x0102_0304);
                assert_eq!(a.position(), 24);
                assert_eq!(a.version(), GiopVersion::V1_2);
                a.write_bytes(body);
                assert!(patch_size(&mut a));
                let mut b = Writer::new(order);
                let h = peregrine_giop::ReplyHeader {
                    request_id: 0x0102_0304,
                    status: peregrine_giop::ReplyStatus::NoException,
                    service_contexts: ServiceContexts::EMPTY,
                };
                let p = peregrine_giop::encode_reply(&mut b, GiopVersion::V1_2, &h).unwrap();
                b.write_bytes(body);
                p.finish(&mut b).unwrap();
                assert_eq!(a.as_slice(), b.as_slice());
            }
        }
    }

    /// The fixed-offset read agrees with the full decode wherever it
    /// answers, and leaves everything else to it.
    #[test]
    fn fast_request_matches_full_decode() {
        let limits = peregrine_giop::Limits::default();
        for order in [ByteOrder::Little, ByteOrder::Big] {
            for flags in [ResponseFlags::None, ResponseFlags::SyncWithTarget] {
                for (key, op, body) in [
                    (&b"PGR1\x01\x04\x00ttcpi"[..], "sendNoParams_2way", &[][..]),
                    (b"k", "a", &[1, 2, 3][..]),
                    (b"", "sync", &[9; 17][..]),
                    (b"1234567", "op_", &[7][..]),
                ] {
                    let m = request(order, flags, key, op, body);
                    let mut mc = m.clone();
                    let fast = fast_request(&mut mc).expect("fast path");
                    let Ok((_, Message::Request { header, body: b })) = decode_message(&m, &limits)
                    else {
                        panic!("full decode");
                    };
                    assert_eq!(fast.request_id, header.request_id);
                    assert_eq!(fast.expected, header.response_flags.response_expected());
                    assert!(matches!(header.target, TargetAddress::Key(k) if k == fast.key));
                    assert_eq!(fast.operation, header.operation);
                    assert_eq!(fast.args.rest(), b.bytes);
                    assert_eq!(fast.args.position(), b.offset);
                    assert_eq!(fast.args.order(), b.order);
                    // Every truncation is refused (the full decode reports it).
                    for n in 0..m.len() {
                        assert!(request_layout(&m[..n]).is_none(), "{n}");
                    }
                }
            }
        }
        // Service contexts, other versions and fragments take the full decode.
        let mut w = Writer::new(ByteOrder::Little);
        let sc = [ServiceContext {
            id: 1,
            data: &[0, 0, 0, 0],
        }];
        let h = RequestHeader {
            request_id: 1,
            response_flags: ResponseFlags::SyncWithTarget,
            target: TargetAddress::Key(b"k"),
            operation: "op",
            service_contexts: ServiceContexts::from_slice(&sc),
            requesting_principal: &[],
        };
        let p = peregrine_giop::encode_request(&mut w, GiopVersion::V1_2, &h).unwrap();
        p.finish(&mut w).unwrap();
        assert!(request_layout(w.as_slice()).is_none());
        let mut m = request(ByteOrder::Little, ResponseFlags::None, b"k", "op", &[]);
        m[6] |= 2;
        assert!(request_layout(&m).is_none());
        let mut m = request(ByteOrder::Little, ResponseFlags::None, b"k", "op", &[]);
        m[5] = 1;
        assert!(request_layout(&m).is_none());
    }

    /// The fast path is the machine's prefix: every request it takes,
    /// the connection's machine reports as the same plain request, in
    /// flight until answered (whatever it says of the code sets or the
    /// version is what an untouched connection says).
    #[test]
    fn fast_path_takes_only_what_the_machine_reports_the_same() {
        use peregrine_giop::conn::{Config, ServerConnection, ServerEvent};
        let now = std::time::Instant::now();
        for order in [ByteOrder::Little, ByteOrder::Big] {
            for flags in [ResponseFlags::None, ResponseFlags::SyncWithTarget] {
                for (key, op, body) in [
                    (&b"PGR1\x01\x04\x00ttcpi"[..], "sendNoParams_2way", &[][..]),
                    (b"k", "a", &[1, 2, 3][..]),
                    (b"", "sync", &[9; 17][..]),
                ] {
                    let m = request(order, flags, key, op, body);
                    let mut mc = m.clone();
                    let fast = fast_request(&mut mc).expect("fast path");
                    let mut machine = ServerConnection::new(Config::default(), now);
                    machine.handle_input(&m, now);
                    let Some(ServerEvent::Request(r)) = machine.poll_event() else {
                        panic!("the machine reports a request");
                    };
                    assert!(machine.poll_event().is_none());
                    assert!(machine.poll_transmit(now).is_none(), "nothing to answer");
                    assert!(r.service_contexts.is_empty());
                    assert_eq!(machine.negotiated_codesets(), None);
                    assert_eq!(r.id.0, fast.request_id);
                    assert_eq!(r.response_flags.response_expected(), fast.expected);
                    assert_eq!(r.object_key(), Some(fast.key));
                    assert_eq!(r.operation(), fast.operation);
                    let b = r.body();
                    assert_eq!(fast.args.rest(), b.bytes);
                    assert_eq!(fast.args.position(), b.offset);
                    assert_eq!(b.version, GiopVersion::V1_2);
                    assert_eq!(machine.in_flight(), usize::from(fast.expected));
                }
            }
        }
    }

    /// What the fast path refuses after its layout check (an operation
    /// the full decode refuses) the machine does not report as a request
    /// either: it answers it (MARSHAL).
    #[test]
    fn fast_path_refuses_what_the_machine_refuses() {
        use peregrine_giop::conn::{Config, ServerConnection, ServerEvent};
        let now = std::time::Instant::now();
        for bad in [&b"op\0x"[..], b"\0", b"sendNoParams\0_2way", b"op\xff"] {
            // The name's bytes as they go on the wire (the encoder would
            // refuse them as a &str).
            let placeholder = "#".repeat(bad.len());
            let mut m = request(
                ByteOrder::Little,
                ResponseFlags::SyncWithTarget,
                b"k",
                &placeholder,
                &[1; 8],
            );
            let at = m
                .windows(bad.len())
                .position(|w| w == placeholder.as_bytes())
                .unwrap();
            m[at..at + bad.len()].copy_from_slice(bad);
            assert!(request_layout(&m).is_some(), "{bad:?}");
            assert!(fast_request(&mut m.clone()).is_none(), "{bad:?}");
            let mut machine = ServerConnection::new(Config::default(), now);
            machine.handle_input(&m, now);
            assert!(
                !matches!(machine.poll_event(), Some(ServerEvent::Request(_))),
                "{bad:?}"
            );
            assert!(machine.poll_transmit(now).is_some(), "{bad:?}: answered");
        }
    }

    /// `u16 a; u64 b;` (padding 2..8): its first element after a
    /// sequence length is off its alignment (12 wire bytes at offset 4).
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct P {
        a: u16,
        b: u64,
    }
    // SAFETY: integers only (any bits valid); size 16 == CDR_SIZE, align
    // 8 == CDR_ALIGN; members at their CDR offsets 0 and 8; 2..8 is the
    // only padding.
    unsafe impl peregrine_cdr::PlainData for P {
        const CDR_SIZE: usize = 16;
        const CDR_ALIGN: usize = 8;
        const PADDING: &'static [(usize, usize)] = &[(2, 8)];
        fn swap_members(&mut self) {
            self.a = self.a.swap_bytes();
            self.b = self.b.swap_bytes();
        }
    }

    /// The fast path lends the body exclusively, so a sequence of plain
    /// structs as the first argument is borrowed in place (not copied)
    /// from an 8-aligned message in native order, copied otherwise.
    #[test]
    fn fast_request_args_lend_plain_structs_in_place() {
        let vals: Vec<P> = (0..5u16)
            .map(|i| P {
                a: i + 1,
                b: u64::from(i) << 40,
            })
            .collect();
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let mut body = Writer::new(order);
            body.write_u32(vals.len() as u32);
            for v in &vals {
                body.write_u16(v.a);
                body.write_u64(v.b);
            }
            let m = request(
                order,
                ResponseFlags::SyncWithTarget,
                b"k",
                "op",
                body.as_slice(),
            );
            for misalign in [0, 4] {
                let mut store = vec![0u8; m.len() + 16];
                let off = store.as_ptr().align_offset(8) + misalign;
                store[off..off + m.len()].copy_from_slice(&m);
                let req = fast_request(&mut store[off..off + m.len()]).expect("fast path");
                let mut args = req.args;
                let got = args
                    .read_plain_slice::<P>(|r| {
                        Ok(P {
                            a: r.read_u16()?,
                            b: r.read_u64()?,
                        })
                    })
                    .unwrap();
                assert_eq!(&*got, &vals[..], "{order:?} misalign {misalign}");
                assert_eq!(
                    matches!(got, std::borrow::Cow::Borrowed(_)),
                    order.is_native() && misalign == 0,
                    "{order:?} misalign {misalign}"
                );
            }
        }
    }

    /// An operation that is not UTF-8 passes the layout check but not
    /// `key_and_operation`, and the full decode (the machine's) reports
    /// exactly the error dispatch then answers with (MARSHAL, as the
    /// machine answers it).
    #[test]
    fn fast_request_rejects_non_utf8_operation() {
        let limits = peregrine_giop::Limits::default();
        let mut m = request(
            ByteOrder::Big,
            ResponseFlags::SyncWithTarget,
            b"k",
            "op",
            &[1; 8],
        );
        let at = m.windows(3).position(|w| w == b"op\0").unwrap();
        m[at] = 0xFF;
        assert!(request_layout(&m).is_some());
        assert!(fast_request(&mut m.clone()).is_none());
        assert!(matches!(
            decode_message(&m, &limits),
            Err(peregrine_giop::GiopError::Cdr(
                peregrine_cdr::CdrError::InvalidText
            ))
        ));
    }
}
