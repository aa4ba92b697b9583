//! The client and server connection machines wired to each other in
//! memory: bytes shuttled by a `Pair`, time moved by a fake clock.

use std::time::{Duration, Instant};

use peregrine_cdr::{ByteOrder, CodeSetId, Encode, GiopVersion, Writer};
use peregrine_giop::conn::{
    Call, ClientConnection, ClientEvent, CloseReason, Config, ConnError, RequestId,
    ServerConnection, ServerEvent,
};
use peregrine_giop::{
    decode_message, CodeSetContext, CompletionStatus, GiopError, Ior, LocateStatus, Message,
    MessageHeader, MsgType, ReplyStatus, SystemExceptionKind as K, TargetAddress, HEADER_LEN,
};

/// A client and a server machine joined by an in-memory "wire" that
/// delivers bytes in chunks of `chunk` bytes, and a fake clock.
struct Pair {
    client: ClientConnection,
    server: ServerConnection,
    now: Instant,
    chunk: usize,
    /// Pieces each side transmitted so far.
    client_pieces: usize,
    server_pieces: usize,
    client_events: Vec<ClientEvent>,
    server_events: Vec<ServerEvent>,
}

impl Pair {
    fn new(client: Config, server: Config) -> Self {
        let now = Instant::now();
        Self {
            client: ClientConnection::new(client, now),
            server: ServerConnection::new(server, now),
            now,
            chunk: usize::MAX,
            client_pieces: 0,
            server_pieces: 0,
            client_events: Vec::new(),
            server_events: Vec::new(),
        }
    }

    fn default_pair() -> Self {
        Self::new(Config::default(), Config::default())
    }

    /// Moves bytes both ways until neither side has anything to send.
    fn drive(&mut self) {
        loop {
            let mut moved = false;
            while let Some(t) = self.client.poll_transmit(self.now) {
                moved = true;
                self.client_pieces += 1;
                for c in t.into_vec().chunks(self.chunk) {
                    self.server.handle_input(c, self.now);
                }
            }
            while let Some(t) = self.server.poll_transmit(self.now) {
                moved = true;
                self.server_pieces += 1;
                for c in t.into_vec().chunks(self.chunk) {
                    self.client.handle_input(c, self.now);
                }
            }
            while let Some(e) = self.server.poll_event() {
                self.server_events.push(e);
            }
            while let Some(e) = self.client.poll_event() {
                self.client_events.push(e);
            }
            if !moved {
                return;
            }
        }
    }

    /// Moves the clock and runs the timers that are due.
    fn advance(&mut self, d: Duration) {
        self.now += d;
        if self.client.poll_timeout().is_some_and(|t| t <= self.now) {
            self.client.handle_timeout(self.now);
        }
        if self.server.poll_timeout().is_some_and(|t| t <= self.now) {
            self.server.handle_timeout(self.now);
        }
        self.drive();
    }

    fn requests(&mut self) -> Vec<peregrine_giop::conn::IncomingRequest> {
        let mut out = Vec::new();
        self.server_events.retain(|e| match e {
            ServerEvent::Request(r) => {
                out.push(r.clone());
                false
            }
            _ => true,
        });
        out
    }

    fn take_client_events(&mut self) -> Vec<ClientEvent> {
        std::mem::take(&mut self.client_events)
    }
}

fn reply_of(e: &ClientEvent) -> (RequestId, ReplyStatus, Vec<u8>) {
    match e {
        ClientEvent::Reply(r) => (r.id, r.status, r.message.body().bytes.to_vec()),
        other => panic!("not a reply: {other:?}"),
    }
}

fn failed(e: &ClientEvent) -> (RequestId, K, CompletionStatus) {
    match e {
        ClientEvent::Failed { id, exception } => (*id, exception.kind, exception.completed),
        other => panic!("not a failure: {other:?}"),
    }
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn plain_call_and_code_sets_once() {
    let cs = CodeSetContext {
        char_data: CodeSetId::UTF_8,
        wchar_data: CodeSetId::UTF_16,
    };
    let mut p = Pair::new(Config::default().with_codesets(cs), Config::default());
    let id = p
        .client
        .send_request(Call::new(b"obj", "echo"), &[1, 2, 3, 4, 5, 6, 7, 8])
        .unwrap();
    assert_eq!(p.client.pending_requests(), 1);
    p.drive();
    let reqs = p.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.id, id);
    assert_eq!(r.operation(), "echo");
    assert_eq!(r.object_key(), Some(&b"obj"[..]));
    assert_eq!(r.body().bytes, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(r.service_contexts.len(), 1);
    assert_eq!(p.server.negotiated_codesets(), Some(cs));
    p.server
        .send_reply(r.id, ReplyStatus::NoException, &[9; 8])
        .unwrap();
    p.drive();
    let ev = p.take_client_events();
    assert_eq!(ev.len(), 1);
    assert_eq!(reply_of(&ev[0]), (id, ReplyStatus::NoException, vec![9; 8]));
    assert_eq!(p.client.pending_requests(), 0);
    assert_eq!(p.server.in_flight(), 0);

    // The second request carries no code sets.
    p.client
        .send_request(Call::new(b"obj", "echo"), &[])
        .unwrap();
    p.drive();
    let reqs = p.requests();
    assert!(reqs[0].service_contexts.is_empty());

    // Code sets sent later do not change what was negotiated.
    let other = CodeSetContext {
        char_data: CodeSetId::ISO_8859_1,
        wchar_data: CodeSetId::UCS_2,
    }
    .to_context(ByteOrder::Big);
    let contexts = [other.as_context()];
    p.client
        .send_request(
            Call::new(b"obj", "echo").with_service_contexts(&contexts),
            &[],
        )
        .unwrap();
    p.drive();
    assert_eq!(
        p.requests()[0].service_contexts,
        std::slice::from_ref(&other)
    );
    assert_eq!(p.server.negotiated_codesets(), Some(cs));
}

#[test]
fn replies_out_of_order_reach_their_calls() {
    let mut p = Pair::default_pair();
    let ids: Vec<_> = (0..3u8)
        .map(|i| {
            p.client
                .send_request(Call::new(b"k", "op"), &[i; 8])
                .unwrap()
        })
        .collect();
    p.drive();
    let reqs = p.requests();
    assert_eq!(reqs.len(), 3);
    for i in [2, 0, 1] {
        let body = [reqs[i].body().bytes[0] + 100; 8];
        p.server
            .send_reply(reqs[i].id, ReplyStatus::NoException, &body)
            .unwrap();
    }
    p.drive();
    let ev = p.take_client_events();
    let got: Vec<_> = ev.iter().map(reply_of).collect();
    assert_eq!(
        got,
        [
            (ids[2], ReplyStatus::NoException, vec![102; 8]),
            (ids[0], ReplyStatus::NoException, vec![100; 8]),
            (ids[1], ReplyStatus::NoException, vec![101; 8]),
        ]
    );
}

fn forward_to(p: &mut Pair, id: RequestId, ior: &Ior, status: ReplyStatus) {
    p.server
        .send_reply_with(id, status, &[], |w| ior.encode(w))
        .unwrap();
}

fn some_ior() -> Ior {
    Ior {
        type_id: "IDL:Echo:1.0".into(),
        profiles: vec![],
    }
}

#[test]
fn location_forward_then_success() {
    let mut p = Pair::default_pair();
    let id = p.client.send_request(Call::new(b"old", "op"), &[]).unwrap();
    p.drive();
    let r = p.requests().remove(0);
    forward_to(&mut p, r.id, &some_ior(), ReplyStatus::LocationForwardPerm);
    p.drive();
    let ev = p.take_client_events();
    let ClientEvent::Forward {
        id: fid,
        ior,
        permanent,
        hops,
    } = &ev[0]
    else {
        panic!("{ev:?}")
    };
    assert_eq!((*fid, permanent, hops), (id, &true, &1));
    assert_eq!(ior, &some_ior());
    assert_eq!(p.client.pending_requests(), 0);

    // The driver sends it again (here to the same server).
    let id2 = p
        .client
        .send_request(Call::new(b"new", "op").with_hops(*hops), &[])
        .unwrap();
    p.drive();
    let r = p.requests().remove(0);
    assert_eq!(r.object_key(), Some(&b"new"[..]));
    p.server
        .send_reply(r.id, ReplyStatus::NoException, &[])
        .unwrap();
    p.drive();
    let ev = p.take_client_events();
    assert_eq!(reply_of(&ev[0]).0, id2);
}

#[test]
fn forward_loop_gives_up_after_max_hops() {
    let mut p = Pair::new(Config::default().with_max_forwards(2), Config::default());
    let mut hops = 0;
    let mut outcome = None;
    for _ in 0..5 {
        p.client
            .send_request(Call::new(b"k", "op").with_hops(hops), &[])
            .unwrap();
        p.drive();
        let r = p.requests().remove(0);
        forward_to(&mut p, r.id, &some_ior(), ReplyStatus::LocationForward);
        p.drive();
        match p.take_client_events().remove(0) {
            ClientEvent::Forward { hops: h, .. } => hops = h,
            other => {
                outcome = Some(other);
                break;
            }
        }
    }
    assert_eq!(hops, 2);
    let (_, kind, completed) = failed(&outcome.unwrap());
    assert_eq!((kind, completed), (K::Transient, CompletionStatus::No));
}

#[test]
fn fragments_both_ways_one_byte_at_a_time() {
    for version in [GiopVersion::V1_1, GiopVersion::V1_2] {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let config = Config::default()
                .with_version(version)
                .with_byte_order(order)
                .with_max_fragment_size(40);
            let mut p = Pair::new(config.clone(), config);
            p.chunk = 1;
            let args: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
            let id = p
                .client
                .send_request(Call::new(b"key", "big"), &args)
                .unwrap();
            p.drive();
            assert!(p.client_pieces > 5, "{}", p.client_pieces);
            let r = p.requests().remove(0);
            assert_eq!(r.body().bytes, &args[..]);
            assert_eq!(r.message().version(), version);
            let results: Vec<u8> = args.iter().rev().copied().collect();
            p.server
                .send_reply(r.id, ReplyStatus::NoException, &results)
                .unwrap();
            p.drive();
            assert!(p.server_pieces > 5, "{}", p.server_pieces);
            let ev = p.take_client_events();
            assert_eq!(reply_of(&ev[0]), (id, ReplyStatus::NoException, results));
        }
    }
}

#[test]
fn cancelled_call_drops_its_late_reply() {
    let mut p = Pair::default_pair();
    let id = p.client.send_request(Call::new(b"k", "slow"), &[]).unwrap();
    let other = p.client.send_request(Call::new(b"k", "fast"), &[]).unwrap();
    p.drive();
    let reqs = p.requests();
    // The server answers before the cancel reaches it.
    p.server
        .send_reply(reqs[0].id, ReplyStatus::NoException, &[])
        .unwrap();
    assert!(p.client.cancel(id));
    assert!(!p.client.cancel(id));
    p.drive();
    assert!(p.take_client_events().is_empty());
    assert_eq!(p.client.pending_requests(), 1);

    // A cancel that arrives first is reported, and the reply refused.
    assert!(p.client.cancel(other));
    p.drive();
    assert!(p
        .server_events
        .contains(&ServerEvent::Cancelled { id: reqs[1].id }));
    assert_eq!(
        p.server
            .send_reply(reqs[1].id, ReplyStatus::NoException, &[]),
        Err(ConnError::UnknownRequest(reqs[1].id))
    );
    assert_eq!(p.client.pending_requests(), 0);
}

#[test]
fn close_connection_after_in_flight_replies_and_pending_calls_may_retry() {
    let mut p = Pair::default_pair();
    let a = p.client.send_request(Call::new(b"k", "a"), &[]).unwrap();
    p.drive();
    let ra = p.requests().remove(0);
    p.server.shutdown();
    // `b` reaches the closing server, which ignores it.
    let b = p.client.send_request(Call::new(b"k", "b"), &[]).unwrap();
    p.drive();
    assert!(p.requests().is_empty());
    assert!(p.server_events.is_empty());
    assert!(p.take_client_events().is_empty(), "no CloseConnection yet");
    // `c` is queued, never transmitted.
    let c = p.client.send_request(Call::new(b"k", "c"), &[]).unwrap();
    p.server
        .send_reply(ra.id, ReplyStatus::NoException, &[])
        .unwrap();
    // Deliver the server's bytes first, so `c` is still unsent.
    while let Some(t) = p.server.poll_transmit(p.now) {
        p.client.handle_input(&t.into_vec(), p.now);
    }
    let mut ev = Vec::new();
    while let Some(e) = p.client.poll_event() {
        ev.push(e);
    }
    assert_eq!(reply_of(&ev[0]).0, a);
    assert_eq!(failed(&ev[1]), (b, K::Transient, CompletionStatus::No));
    assert_eq!(failed(&ev[2]), (c, K::Transient, CompletionStatus::No));
    assert_eq!(
        ev[3],
        ClientEvent::Closed {
            reason: CloseReason::PeerClosed
        }
    );
    assert!(p.server.is_closed());
    assert!(p.client.is_closed());
    assert!(
        p.client.poll_transmit(p.now).is_none(),
        "`c` never goes out"
    );
    assert_eq!(
        p.client.send_request(Call::new(b"k", "d"), &[]),
        Err(ConnError::Closed)
    );
}

#[test]
fn broken_transport_fails_sent_calls_maybe_and_unsent_no() {
    let mut p = Pair::default_pair();
    let sent = p.client.send_request(Call::new(b"k", "a"), &[]).unwrap();
    p.drive();
    let unsent = p.client.send_request(Call::new(b"k", "b"), &[]).unwrap();
    p.client.handle_eof();
    let ev = p.take_client_events();
    assert!(ev.is_empty());
    let mut ev = Vec::new();
    while let Some(e) = p.client.poll_event() {
        ev.push(e);
    }
    assert_eq!(
        failed(&ev[0]),
        (sent, K::CommFailure, CompletionStatus::Maybe)
    );
    assert_eq!(failed(&ev[1]), (unsent, K::Transient, CompletionStatus::No));
    assert_eq!(
        ev[2],
        ClientEvent::Closed {
            reason: CloseReason::TransportClosed
        }
    );
}

/// Feeds `bytes` to a fresh server and returns its events and what it
/// sent back.
fn server_fed(bytes: &[u8], config: Config) -> (Vec<ServerEvent>, Vec<Vec<u8>>) {
    let now = Instant::now();
    let mut s = ServerConnection::new(config, now);
    for b in bytes {
        s.handle_input(std::slice::from_ref(b), now);
    }
    let mut out = Vec::new();
    while let Some(t) = s.poll_transmit(now) {
        out.push(t.into_vec());
    }
    let mut ev = Vec::new();
    while let Some(e) = s.poll_event() {
        ev.push(e);
    }
    (ev, out)
}

fn assert_message_error(out: &[Vec<u8>]) {
    assert_eq!(out.len(), 1, "{out:?}");
    let (h, m) = decode_message(&out[0], &Default::default()).unwrap();
    assert_eq!(h.msg_type, MsgType::MessageError);
    assert_eq!(m, Message::MessageError);
}

#[test]
fn malformed_input_answers_message_error_and_closes() {
    let cases: [(&[u8], GiopError); 4] = [
        (
            b"GIOX\x01\x02\x00\x00\x00\x00\x00\x00",
            GiopError::BadMagic(*b"GIOX"),
        ),
        (
            b"GIOP\x02\x00\x00\x00\x00\x00\x00\x00",
            GiopError::UnsupportedVersion { major: 2, minor: 0 },
        ),
        (
            b"GIOP\x01\x02\x00\x09\x00\x00\x00\x00",
            GiopError::UnknownMessageType(9),
        ),
        (
            b"GIOP\x01\x02\x00\x01\x00\x00\x00\x00",
            GiopError::UnexpectedMessage(MsgType::Reply),
        ),
    ];
    for (bytes, err) in cases {
        let (ev, out) = server_fed(bytes, Config::default());
        assert_eq!(
            ev,
            [ServerEvent::Closed {
                reason: CloseReason::ProtocolError(err)
            }]
        );
        assert_message_error(&out);
    }
}

#[test]
fn oversized_message_is_refused_before_it_arrives() {
    let limits = peregrine_giop::Limits::default().with_max_message_size(1000);
    let mut h = MessageHeader::new(GiopVersion::V1_2, ByteOrder::Big, MsgType::Request);
    h.size = 1001;
    let (ev, out) = server_fed(&h.encode(), Config::default().with_limits(limits));
    assert_eq!(
        ev,
        [ServerEvent::Closed {
            reason: CloseReason::ProtocolError(GiopError::MessageTooLarge {
                size: 1001,
                limit: 1000
            })
        }]
    );
    assert_message_error(&out);
}

#[test]
fn message_error_from_the_server_fails_the_calls() {
    let mut p = Pair::default_pair();
    let id = p.client.send_request(Call::new(b"k", "a"), &[]).unwrap();
    p.drive();
    // Something the server cannot parse (as if the client had sent it).
    p.server
        .handle_input(b"GIOP\x01\x09\x00\x00\x00\x00\x00\x00", p.now);
    p.drive();
    let ev = p.take_client_events();
    assert_eq!(
        failed(&ev[0]),
        (id, K::CommFailure, CompletionStatus::Maybe)
    );
    assert_eq!(
        ev[1],
        ClientEvent::Closed {
            reason: CloseReason::PeerMessageError
        }
    );
    assert!(p.client.is_closed() && p.server.is_closed());
}

#[test]
fn truncated_header_waits_then_eof_closes() {
    let now = Instant::now();
    let mut s = ServerConnection::new(Config::default(), now);
    s.handle_input(b"GIOP\x01", now);
    assert!(s.poll_event().is_none());
    // The rest of a header announcing 100 bytes, and 50 of them.
    s.handle_input(b"\x02\x00\x00\x00\x00\x00\x64", now);
    s.handle_input(&[0; 50], now);
    assert!(s.poll_event().is_none());
    assert!(s.poll_transmit(now).is_none());
    s.handle_eof();
    assert_eq!(
        s.poll_event(),
        Some(ServerEvent::Closed {
            reason: CloseReason::TransportClosed
        })
    );
    assert!(s.is_closed());
}

#[test]
fn malformed_request_body_gets_marshal_and_connection_lives() {
    // A well-framed GIOP 1.2 Request whose response flags are invalid.
    let mut w = Writer::new(ByteOrder::Big);
    let h = peregrine_giop::RequestHeader {
        request_id: 77,
        response_flags: peregrine_giop::ResponseFlags::SyncWithTarget,
        target: TargetAddress::Key(b"k"),
        operation: "op",
        service_contexts: Default::default(),
        requesting_principal: &[],
    };
    peregrine_giop::encode_request(&mut w, GiopVersion::V1_2, &h)
        .unwrap()
        .finish(&mut w)
        .unwrap();
    let mut bad = w.into_vec();
    bad[HEADER_LEN + 4] = 2;
    let (ev, out) = server_fed(&bad, Config::default());
    assert!(ev.is_empty(), "{ev:?}");
    let (_, m) = decode_message(&out[0], &Default::default()).unwrap();
    let Message::Reply { header, body } = m else {
        panic!("{m:?}")
    };
    assert_eq!(header.request_id, 77);
    assert_eq!(header.status, ReplyStatus::SystemException);
    let ex = body.system_exception().unwrap();
    assert_eq!((ex.kind, ex.completed), (K::Marshal, CompletionStatus::No));
}

#[test]
fn garbage_to_the_client_fails_its_calls() {
    let mut p = Pair::default_pair();
    let id = p.client.send_request(Call::new(b"k", "a"), &[]).unwrap();
    p.drive();
    p.client
        .handle_input(b"HTTP/1.1 400 Bad Request\r\n", p.now);
    let ev = p.take_client_events();
    assert!(ev.is_empty());
    let mut ev = Vec::new();
    while let Some(e) = p.client.poll_event() {
        ev.push(e);
    }
    assert_eq!(
        failed(&ev[0]),
        (id, K::CommFailure, CompletionStatus::Maybe)
    );
    assert!(matches!(
        ev[1],
        ClientEvent::Closed {
            reason: CloseReason::ProtocolError(GiopError::BadMagic(_))
        }
    ));
    let t = p.client.poll_transmit(p.now).unwrap().into_vec();
    assert_message_error(&[t]);
    assert!(p.client.is_closed());
}

#[test]
fn idle_server_closes_in_order() {
    let mut p = Pair::new(
        Config::default(),
        Config::default().with_idle_timeout(secs(30)),
    );
    p.client.send_request(Call::new(b"k", "a"), &[]).unwrap();
    p.drive();
    let r = p.requests().remove(0);
    // Busy: no idle timer while a request is in flight.
    assert_eq!(p.server.poll_timeout(), None);
    p.advance(secs(100));
    assert!(!p.server.is_closed());
    p.server
        .send_reply(r.id, ReplyStatus::NoException, &[])
        .unwrap();
    p.drive();
    assert_eq!(p.server.poll_timeout(), Some(p.now + secs(30)));
    p.advance(secs(29));
    assert!(!p.server.is_closed());
    p.advance(secs(1));
    assert!(p.server.is_closed());
    assert!(p.client_events.contains(&ClientEvent::Closed {
        reason: CloseReason::PeerClosed
    }));
    assert!(p.server_events.contains(&ServerEvent::Closed {
        reason: CloseReason::Idle
    }));
}

/// Traffic the driver reports (its fast path) keeps the connection open
/// as traffic through the machine does.
#[test]
fn activity_the_driver_reports_restarts_the_idle_timer() {
    let mut p = Pair::new(
        Config::default(),
        Config::default().with_idle_timeout(secs(30)),
    );
    assert_eq!(p.server.poll_timeout(), Some(p.now + secs(30)));
    p.advance(secs(20));
    let at = p.now;
    p.server.note_activity(at);
    assert_eq!(p.server.poll_timeout(), Some(at + secs(30)));
    p.advance(secs(20));
    assert!(!p.server.is_closed());
    // Reported late: an earlier instant does not move the timer back.
    p.server.note_activity(at);
    assert_eq!(p.server.poll_timeout(), Some(at + secs(30)));
    p.advance(secs(10));
    assert!(p.server.is_closed());
    assert!(p.server_events.contains(&ServerEvent::Closed {
        reason: CloseReason::Idle
    }));
}

#[test]
fn idle_client_closes() {
    let mut p = Pair::new(
        Config::default().with_idle_timeout(secs(10)),
        Config::default(),
    );
    assert_eq!(p.client.poll_timeout(), Some(p.now + secs(10)));
    p.advance(secs(9));
    assert!(!p.client.is_closed());
    p.advance(secs(1));
    assert!(p.client.is_closed());
    assert_eq!(
        p.client_events,
        [ClientEvent::Closed {
            reason: CloseReason::Idle
        }]
    );
}

/// A client whose driver sends requests on its own (outside the
/// machine) keeps its connection while it reports them, and closes it,
/// with nothing sent, once it reports none for the idle timeout.
#[test]
fn client_activity_the_driver_reports_restarts_the_idle_timer() {
    let mut p = Pair::new(
        Config::default().with_idle_timeout(secs(10)),
        Config::default(),
    );
    p.advance(secs(8));
    let at = p.now;
    p.client.note_activity(at);
    assert_eq!(p.client.poll_timeout(), Some(at + secs(10)));
    p.advance(secs(8));
    assert!(!p.client.is_closed());
    // Reported late: an earlier instant does not move the timer back.
    p.client.note_activity(at - secs(5));
    assert_eq!(p.client.poll_timeout(), Some(at + secs(10)));
    p.advance(secs(2));
    assert!(p.client.is_closed());
    assert_eq!(
        p.client_events,
        [ClientEvent::Closed {
            reason: CloseReason::Idle
        }]
    );
    // A client closes by closing the stream: no CloseConnection.
    assert!(p.client.poll_transmit(p.now).is_none());
    assert!(p.server_events.is_empty());
}

#[test]
fn deadline_expiry_fails_the_call_and_cancels_it() {
    let mut p = Pair::default_pair();
    let deadline = p.now + secs(5);
    let sent = p
        .client
        .send_request(Call::new(b"k", "slow").with_deadline(deadline), &[])
        .unwrap();
    p.drive();
    let r = p.requests().remove(0);
    let later = p
        .client
        .send_request(Call::new(b"k", "x").with_deadline(p.now + secs(50)), &[])
        .unwrap();
    assert_eq!(p.client.poll_timeout(), Some(deadline));
    p.advance(secs(4));
    assert!(p.client_events.is_empty());
    p.advance(secs(1));
    let ev = p.take_client_events();
    assert_eq!(failed(&ev[0]), (sent, K::Timeout, CompletionStatus::Maybe));
    assert!(p
        .server_events
        .contains(&ServerEvent::Cancelled { id: r.id }));
    assert_eq!(p.client.pending_requests(), 1);
    assert_eq!(p.client.poll_timeout(), Some(p.now + secs(45)));
    p.client.cancel(later);
}

#[test]
fn unsent_call_times_out_not_completed() {
    let now = Instant::now();
    let mut c = ClientConnection::new(Config::default(), now);
    let id = c
        .send_request(Call::new(b"k", "op").with_deadline(now + secs(1)), &[])
        .unwrap();
    c.handle_timeout(now + secs(1));
    let e = c.poll_event().unwrap();
    assert_eq!(failed(&e), (id, K::Timeout, CompletionStatus::No));
}

#[test]
fn locate_request_here_and_forward() {
    let mut p = Pair::default_pair();
    let id = p
        .client
        .send_locate_request(TargetAddress::Key(b"where"), None)
        .unwrap();
    p.drive();
    let ServerEvent::LocateRequest(lr) = p.server_events.remove(0) else {
        panic!()
    };
    assert_eq!(lr.id, id);
    assert_eq!(lr.object_key(), Some(&b"where"[..]));
    p.server
        .send_locate_reply(lr.id, LocateStatus::ObjectHere, &[])
        .unwrap();
    p.drive();
    let ev = p.take_client_events();
    assert!(matches!(
        &ev[0],
        ClientEvent::LocateReply { id: i, status: LocateStatus::ObjectHere, .. } if *i == id
    ));

    let id = p
        .client
        .send_locate_request(TargetAddress::Key(b"moved"), None)
        .unwrap();
    p.drive();
    let ServerEvent::LocateRequest(lr) = p.server_events.remove(0) else {
        panic!()
    };
    let mut w = Writer::new(ByteOrder::NATIVE);
    some_ior().encode(&mut w).unwrap();
    p.server
        .send_locate_reply(lr.id, LocateStatus::ObjectForward, w.as_slice())
        .unwrap();
    p.drive();
    let ev = p.take_client_events();
    assert!(matches!(
        &ev[0],
        ClientEvent::Forward { id: i, permanent: false, hops: 1, .. } if *i == id
    ));
}

#[test]
fn oneway_leaves_nothing_pending() {
    let mut p = Pair::default_pair();
    p.client
        .send_request(Call::new(b"k", "tell").oneway(), &[])
        .unwrap();
    assert_eq!(p.client.pending_requests(), 0);
    p.drive();
    let r = p.requests().remove(0);
    assert!(!r.response_flags.response_expected());
    assert_eq!(p.server.in_flight(), 0);
    assert_eq!(
        p.server.send_reply(r.id, ReplyStatus::NoException, &[]),
        Err(ConnError::UnknownRequest(r.id))
    );
}

#[test]
fn marshalled_bodies_keep_their_alignment_in_every_version() {
    for version in [GiopVersion::V1_0, GiopVersion::V1_1, GiopVersion::V1_2] {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let config = Config::default()
                .with_version(version)
                .with_byte_order(order);
            let mut p = Pair::new(config.clone(), config);
            // A key that leaves a GIOP 1.0/1.1 request header ending at
            // 4 mod 8.
            let id = p
                .client
                .send_request_with(Call::new(b"abc", "op1"), |w| {
                    w.write_u8(7);
                    w.write_u64(0x1122_3344_5566_7788);
                    Ok(())
                })
                .unwrap();
            p.drive();
            let r = p.requests().remove(0);
            assert_eq!(r.message().version(), version);
            let mut args = r.body().reader();
            assert_eq!(args.read_u8().unwrap(), 7);
            assert_eq!(args.read_u64().unwrap(), 0x1122_3344_5566_7788);
            assert!(args.is_empty());
            p.server
                .send_reply_with(r.id, ReplyStatus::NoException, &[], |w| {
                    w.write_u16(9);
                    w.write_f64(2.5);
                    Ok(())
                })
                .unwrap();
            p.drive();
            let ev = p.take_client_events();
            let ClientEvent::Reply(reply) = &ev[0] else {
                panic!("{ev:?}")
            };
            assert_eq!(reply.id, id);
            let mut results = reply.message.body().reader();
            assert_eq!(results.read_u16().unwrap(), 9);
            assert_eq!(results.read_f64().unwrap(), 2.5);
            assert!(results.is_empty());
        }
    }
}

/// A request the driver answers itself holds the orderly shutdown back
/// until the driver says so; then CloseConnection goes out.
#[test]
fn request_answered_by_the_driver_releases_the_shutdown() {
    let mut p = Pair::default_pair();
    p.client.send_request(Call::new(b"k", "a"), &[]).unwrap();
    p.drive();
    let ra = p.requests().remove(0);
    p.server.shutdown();
    p.drive();
    assert!(!p.server.is_closed(), "`a` still in flight");
    assert_eq!(p.server.in_flight(), 1);
    // The driver wrote the reply itself (not through the machine).
    p.server.forget_request(ra.id);
    assert_eq!(p.server.in_flight(), 0);
    let t = p.server.poll_transmit(p.now).expect("CloseConnection");
    let bytes = t.into_vec();
    assert_eq!(bytes[7], MsgType::CloseConnection as u8);
    assert!(p.server.is_closed());
    // Forgetting twice, or an id never seen, changes nothing.
    p.server.forget_request(ra.id);
    p.server.forget_request(RequestId(99));
    assert_eq!(
        p.server.send_reply(ra.id, ReplyStatus::NoException, &[]),
        Err(ConnError::Closed)
    );
}

/// Requests taken by the driver's fast path set the version of the
/// messages the machine starts, unless a message came through it.
#[test]
fn fast_path_requests_set_the_version_of_close_connection() {
    let close_version = |s: &mut ServerConnection, now| {
        s.shutdown();
        let t = s.poll_transmit(now).expect("CloseConnection");
        let h = MessageHeader::decode(&t.into_vec(), &Default::default()).unwrap();
        assert_eq!(h.msg_type, MsgType::CloseConnection);
        h.version
    };
    let now = Instant::now();
    let config = Config::default().with_version(GiopVersion::V1_0);
    let mut s = ServerConnection::new(config.clone(), now);
    assert_eq!(close_version(&mut s, now), GiopVersion::V1_0);
    let mut s = ServerConnection::new(config.clone(), now);
    s.note_fast_request(GiopVersion::V1_2);
    assert_eq!(close_version(&mut s, now), GiopVersion::V1_2);
    // A GIOP 1.1 request through the machine first: it counts.
    let mut c = ClientConnection::new(Config::default().with_version(GiopVersion::V1_1), now);
    c.send_request(Call::new(b"k", "a").oneway(), &[]).unwrap();
    let mut s = ServerConnection::new(config, now);
    while let Some(t) = c.poll_transmit(now) {
        s.handle_input(&t.into_vec(), now);
    }
    assert!(matches!(s.poll_event(), Some(ServerEvent::Request(_))));
    s.note_fast_request(GiopVersion::V1_2);
    assert_eq!(close_version(&mut s, now), GiopVersion::V1_1);
}

/// The server's side of `n` requests a driver sent itself: a plain
/// client produces the requests, and the server's answers go to a
/// machine whose driver keeps the pending table
/// ([`ClientConnection::matched_by_driver`]), fed `chunk` bytes at a
/// time.
struct DriverMatched {
    sender: ClientConnection,
    server: ServerConnection,
    client: ClientConnection,
    now: Instant,
    chunk: usize,
}

impl DriverMatched {
    fn new(config: Config) -> Self {
        let now = Instant::now();
        Self {
            sender: ClientConnection::new(config.clone(), now),
            server: ServerConnection::new(config.clone(), now),
            client: ClientConnection::matched_by_driver(config, now),
            now,
            chunk: usize::MAX,
        }
    }

    /// Server events for what the sender sent.
    fn server_got(&mut self) -> Vec<ServerEvent> {
        while let Some(t) = self.sender.poll_transmit(self.now) {
            self.server.handle_input(&t.into_vec(), self.now);
        }
        std::iter::from_fn(|| self.server.poll_event()).collect()
    }

    /// Client events for what the server sent.
    fn client_got(&mut self) -> Vec<ClientEvent> {
        while let Some(t) = self.server.poll_transmit(self.now) {
            for c in t.into_vec().chunks(self.chunk) {
                self.client.handle_input(c, self.now);
            }
        }
        std::iter::from_fn(|| self.client.poll_event()).collect()
    }
}

#[test]
fn driver_matched_reports_every_reply_by_id_forwards_included() {
    let mut d = DriverMatched::new(Config::default());
    let a = d.sender.send_request(Call::new(b"k", "a"), &[]).unwrap();
    let b = d.sender.send_request(Call::new(b"k", "b"), &[]).unwrap();
    assert_eq!(d.server_got().len(), 2);
    d.server
        .send_reply_with(b, ReplyStatus::LocationForward, &[], |w| {
            some_ior().encode(w)
        })
        .unwrap();
    d.server
        .send_reply(a, ReplyStatus::UserException, &[1, 2, 3, 4])
        .unwrap();
    let ev = d.client_got();
    assert_eq!(ev.len(), 2, "{ev:?}");
    // The forward is the driver's to follow: reported as the reply it is.
    let ClientEvent::Reply(fwd) = &ev[0] else {
        panic!("{ev:?}")
    };
    assert_eq!((fwd.id, fwd.status), (b, ReplyStatus::LocationForward));
    assert_eq!(fwd.message.body().forward_ior().unwrap(), some_ior());
    assert_eq!(
        reply_of(&ev[1]),
        (a, ReplyStatus::UserException, vec![1, 2, 3, 4])
    );
    // Nothing was registered, nothing is pending, the connection is open.
    assert_eq!(d.client.pending_requests(), 0);
    assert!(!d.client.is_closed());
}

#[test]
fn driver_matched_reassembles_fragmented_replies() {
    for version in [GiopVersion::V1_1, GiopVersion::V1_2] {
        let config = Config::default()
            .with_version(version)
            .with_max_fragment_size(40);
        let mut d = DriverMatched::new(config);
        d.chunk = 1;
        let id = d.sender.send_request(Call::new(b"k", "big"), &[]).unwrap();
        assert_eq!(d.server_got().len(), 1);
        let results: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        d.server
            .send_reply(id, ReplyStatus::NoException, &results)
            .unwrap();
        let ev = d.client_got();
        assert_eq!(ev.len(), 1, "{ev:?}");
        assert_eq!(reply_of(&ev[0]), (id, ReplyStatus::NoException, results));
    }
}

#[test]
fn driver_matched_reports_locate_replies_forwards_included() {
    let mut d = DriverMatched::new(Config::default());
    let here = d
        .sender
        .send_locate_request(TargetAddress::Key(b"here"), None)
        .unwrap();
    let moved = d
        .sender
        .send_locate_request(TargetAddress::Key(b"moved"), None)
        .unwrap();
    assert_eq!(d.server_got().len(), 2);
    d.server
        .send_locate_reply(here, LocateStatus::ObjectHere, &[])
        .unwrap();
    let mut w = Writer::new(ByteOrder::NATIVE);
    some_ior().encode(&mut w).unwrap();
    d.server
        .send_locate_reply(moved, LocateStatus::ObjectForward, w.as_slice())
        .unwrap();
    let ev = d.client_got();
    assert!(
        matches!(
            &ev[..],
            [
                ClientEvent::LocateReply { id: a, status: LocateStatus::ObjectHere, .. },
                ClientEvent::LocateReply { id: b, status: LocateStatus::ObjectForward, .. },
            ] if *a == here && *b == moved
        ),
        "{ev:?}"
    );
}

#[test]
fn driver_matched_fails_a_malformed_reply_by_id_and_lives() {
    let mut d = DriverMatched::new(Config::default());
    // A GIOP 1.2 Reply for id 7 with reply status 9 (there is none).
    let mut m = b"GIOP\x01\x02\x01\x01".to_vec();
    m.extend_from_slice(&12u32.to_le_bytes());
    m.extend_from_slice(&7u32.to_le_bytes());
    m.extend_from_slice(&9u32.to_le_bytes());
    m.extend_from_slice(&0u32.to_le_bytes());
    d.client.handle_input(&m, d.now);
    let ev: Vec<_> = std::iter::from_fn(|| d.client.poll_event()).collect();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(
        failed(&ev[0]),
        (RequestId(7), K::Marshal, CompletionStatus::Maybe)
    );
    assert!(d.client.poll_transmit(d.now).is_none());
    assert!(!d.client.is_closed());
}

#[test]
fn driver_matched_closes_on_close_connection_and_on_unexpected_input() {
    // CloseConnection: closed in order, nothing sent back.
    let mut d = DriverMatched::new(Config::default());
    let mut w = Writer::new(ByteOrder::NATIVE);
    peregrine_giop::encode_close_connection(&mut w, GiopVersion::V1_2).unwrap();
    d.client.handle_input(w.as_slice(), d.now);
    let ev: Vec<_> = std::iter::from_fn(|| d.client.poll_event()).collect();
    assert!(
        matches!(
            &ev[..],
            [ClientEvent::Closed {
                reason: CloseReason::PeerClosed
            }]
        ),
        "{ev:?}"
    );
    assert!(d.client.poll_transmit(d.now).is_none());

    // A Request sent to a client: MessageError back, closed.
    let mut d = DriverMatched::new(Config::default());
    let _ = d.sender.send_request(Call::new(b"k", "a"), &[]).unwrap();
    let t = d.sender.poll_transmit(d.now).unwrap().into_vec();
    d.client.handle_input(&t, d.now);
    let ev: Vec<_> = std::iter::from_fn(|| d.client.poll_event()).collect();
    assert!(
        matches!(
            &ev[..],
            [ClientEvent::Closed {
                reason: CloseReason::ProtocolError(GiopError::UnexpectedMessage(MsgType::Request))
            }]
        ),
        "{ev:?}"
    );
    let t = d.client.poll_transmit(d.now).unwrap().into_vec();
    assert_message_error(&[t]);
    assert!(d.client.is_closed());
}

#[test]
fn message_error_goes_in_the_version_the_server_last_spoke() {
    let config = Config::default().with_version(GiopVersion::V1_1);
    let mut d = DriverMatched::new(config);
    // The client is configured for 1.2; the server answers in 1.1.
    d.client = ClientConnection::matched_by_driver(Config::default(), d.now);
    let id = d.sender.send_request(Call::new(b"k", "a"), &[]).unwrap();
    assert_eq!(d.server_got().len(), 1);
    d.server
        .send_reply(id, ReplyStatus::NoException, &[])
        .unwrap();
    assert_eq!(d.client_got().len(), 1);
    d.client
        .handle_input(b"HTTP/1.1 400 Bad Request\r\n", d.now);
    let t = d.client.poll_transmit(d.now).unwrap().into_vec();
    assert_message_error(std::slice::from_ref(&t));
    assert_eq!(&t[4..6], &[1, 1]);
}
