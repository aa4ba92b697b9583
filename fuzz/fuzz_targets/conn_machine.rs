//! A client and a server connection machine driven by the fuzzer: calls,
//! replies, cancels, shutdowns, timer jumps, bytes shuttled between them
//! in arbitrary chunks and arbitrary bytes injected into either. Nothing
//! may panic, and the bookkeeping must stay consistent. A second client
//! machine whose driver keeps the pending table
//! ([`ClientConnection::matched_by_driver`]) reads the same bytes as the
//! first: it keeps nothing pending, sends nothing but MessageError, and
//! reports every answer the first reports.
#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use peregrine_cdr::GiopVersion;
use peregrine_giop::conn::{
    Call, ClientConnection, ClientEvent, Config, RequestId, ServerConnection, ServerEvent,
};
use peregrine_giop::{Limits, LocateStatus, ReplyStatus, TargetAddress};

/// Reads the fuzzer's bytes as a script.
struct Script<'a>(&'a [u8]);

impl Script<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn bytes(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
}

const STATUSES: [ReplyStatus; 6] = [
    ReplyStatus::NoException,
    ReplyStatus::UserException,
    ReplyStatus::SystemException,
    ReplyStatus::LocationForward,
    ReplyStatus::LocationForwardPerm,
    ReplyStatus::NeedsAddressingMode,
];

fuzz_target!(|data: &[u8]| {
    let mut s = Script(data);
    let Some(setup) = s.byte() else { return };
    let version = peregrine_cdr::GiopVersion::from_minor(setup % 3);
    let limits = Limits::default()
        .with_max_message_size(4096)
        .with_max_fragments_bytes(8192)
        .with_max_partial_messages(4);
    let mut config = Config::default()
        .with_version(version)
        .with_limits(limits)
        .with_idle_timeout(Duration::from_secs(30))
        .with_max_forwards(2);
    if setup & 0x04 != 0 {
        config = config.with_max_fragment_size(32 + usize::from(setup >> 3) * 8);
    }
    if setup & 0x80 != 0 {
        config = config.with_byte_order(peregrine_cdr::ByteOrder::Big);
    }
    let mut now = Instant::now();
    let mut client = ClientConnection::new(config.clone(), now);
    let mut driven = ClientConnection::matched_by_driver(config.clone(), now);
    let mut driven_answers = std::collections::HashSet::new();
    let mut server = ServerConnection::new(config, now);
    let mut to_server: Vec<u8> = Vec::new();
    let mut to_client: Vec<u8> = Vec::new();
    let mut requests: Vec<RequestId> = Vec::new();
    let mut locates: Vec<RequestId> = Vec::new();
    let mut ids: Vec<RequestId> = Vec::new();
    let mut received = 0usize;
    let mut answered = 0usize;
    let mut done = std::collections::HashSet::new();

    while let Some(op) = s.byte() {
        match op % 10 {
            0 => {
                let key_len = usize::from(s.byte().unwrap_or(0) % 16);
                let key = s.bytes(key_len).to_vec();
                let body_len = usize::from(s.byte().unwrap_or(0));
                let flags = s.byte().unwrap_or(0);
                let mut call = Call::new(&key, "operation");
                if flags & 1 != 0 {
                    call = call.oneway();
                }
                if flags & 2 != 0 {
                    call = call.with_deadline(now + Duration::from_millis(u64::from(flags)));
                }
                if let Ok(id) = client.send_request(call, &vec![flags; body_len]) {
                    ids.push(id);
                }
            }
            1 => {
                if let Ok(id) = client.send_locate_request(TargetAddress::Key(b"k"), None) {
                    ids.push(id);
                }
            }
            2 => {
                let pick = s.byte().unwrap_or(0);
                if !requests.is_empty() {
                    let id = requests.remove(usize::from(pick) % requests.len());
                    let status = STATUSES[usize::from(pick) % STATUSES.len()];
                    let body = s.bytes(usize::from(pick % 64)).to_vec();
                    if pick & 0x40 != 0 {
                        // The driver answered it itself.
                        let before = server.in_flight();
                        server.forget_request(id);
                        if server.in_flight() < before {
                            answered += 1;
                        }
                    } else if server.send_reply(id, status, &body).is_ok() {
                        answered += 1;
                    }
                }
                if !locates.is_empty() && pick & 0x80 != 0 {
                    let id = locates.remove(0);
                    if server
                        .send_locate_reply(id, LocateStatus::ObjectHere, &[])
                        .is_ok()
                    {
                        answered += 1;
                    }
                }
            }
            3 => {
                while let Some(t) = client.poll_transmit(now) {
                    t.write_to(&mut to_server);
                }
                let n = usize::from(s.byte().unwrap_or(0)).min(to_server.len());
                server.handle_input(&to_server[..n], now);
                to_server.drain(..n);
            }
            4 => {
                while let Some(t) = server.poll_transmit(now) {
                    t.write_to(&mut to_client);
                }
                let n = usize::from(s.byte().unwrap_or(0)).min(to_client.len());
                client.handle_input(&to_client[..n], now);
                driven.handle_input(&to_client[..n], now);
                to_client.drain(..n);
            }
            5 => {
                let n = usize::from(s.byte().unwrap_or(0));
                let junk = s.bytes(n).to_vec();
                server.handle_input(&junk, now);
            }
            6 => {
                let n = usize::from(s.byte().unwrap_or(0));
                let junk = s.bytes(n).to_vec();
                client.handle_input(&junk, now);
                driven.handle_input(&junk, now);
            }
            7 => {
                now += Duration::from_millis(u64::from(s.byte().unwrap_or(0)) * 250);
                if client.poll_timeout().is_some_and(|t| t <= now) {
                    client.handle_timeout(now);
                }
                if server.poll_timeout().is_some_and(|t| t <= now) {
                    server.handle_timeout(now);
                }
            }
            8 => {
                let pick = usize::from(s.byte().unwrap_or(0));
                if !ids.is_empty() {
                    client.cancel(ids[pick % ids.len()]);
                }
            }
            _ => match s.byte().unwrap_or(0) % 5 {
                0 => server.shutdown(),
                1 => client.handle_eof(),
                2 => server.handle_eof(),
                3 => server.note_fast_request(GiopVersion::V1_2),
                _ => client.abort(),
            },
        }
        while let Some(e) = server.poll_event() {
            match e {
                ServerEvent::Request(r) => {
                    received += 1;
                    if r.response_flags.response_expected() {
                        requests.push(r.id);
                    }
                    let _ = (r.operation(), r.object_key(), r.body(), r.target());
                }
                ServerEvent::LocateRequest(l) => {
                    received += 1;
                    locates.push(l.id);
                }
                ServerEvent::Cancelled { .. } | ServerEvent::Closed { .. } => {}
            }
        }
        while let Some(e) = driven.poll_event() {
            match e {
                ClientEvent::Reply(r) => {
                    let _ = r.message.body();
                    driven_answers.insert(r.id);
                }
                ClientEvent::LocateReply { id, .. } | ClientEvent::Failed { id, .. } => {
                    driven_answers.insert(id);
                }
                ClientEvent::Forward { .. } => panic!("a forward reported to a matching driver"),
                ClientEvent::Closed { .. } => {}
            }
        }
        assert_eq!(driven.pending_requests(), 0);
        while let Some(t) = driven.poll_transmit(now) {
            let m = t.into_vec();
            assert_eq!(
                m.get(7),
                Some(&(peregrine_giop::MsgType::MessageError as u8))
            );
        }
        while let Some(e) = client.poll_event() {
            // An answer read from the input: the driven machine read it too.
            match &e {
                ClientEvent::Reply(r) => assert!(driven_answers.contains(&r.id)),
                ClientEvent::LocateReply { id, .. } | ClientEvent::Forward { id, .. } => {
                    assert!(driven_answers.contains(id))
                }
                _ => {}
            }
            let id = match e {
                ClientEvent::Reply(r) => r.id,
                ClientEvent::LocateReply { id, .. }
                | ClientEvent::Forward { id, .. }
                | ClientEvent::Failed { id, .. } => id,
                ClientEvent::Closed { .. } => continue,
            };
            // Every request ends once, and only requests that were sent.
            assert!(ids.contains(&id), "outcome for a request never sent");
            assert!(done.insert(id), "second outcome for {id}");
        }
        assert!(client.pending_requests() as u64 <= client.requests_sent());
        assert!(server.in_flight() + answered <= received);
        if client.is_closed() {
            assert_eq!(client.pending_requests(), 0);
            assert!(client.poll_transmit(now).is_none());
            assert!(client.poll_timeout().is_none());
        }
        if server.is_closed() {
            assert_eq!(server.in_flight(), 0);
            assert!(server.poll_transmit(now).is_none());
        }
    }
});
