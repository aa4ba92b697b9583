//! What the ORB reports through `tracing`, caught by a subscriber of the
//! test's own installed for the calling thread only
//! (`tracing::subscriber::with_default`): a failed call is a WARN event
//! naming the peer and the operation, a call a request event.

use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use peregrine_orb_tests::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// One event: its level and its fields as `name=value` (the message as
/// `message=...`).
#[derive(Debug)]
struct Caught {
    level: Level,
    fields: String,
}

/// A subscriber that keeps every event, wanting all of them.
#[derive(Clone, Default)]
struct Catcher(Arc<Mutex<Vec<Caught>>>);

impl Catcher {
    /// The events caught at `level` whose fields contain every one of
    /// `parts`.
    fn find(&self, level: Level, parts: &[&str]) -> Vec<String> {
        let caught = self.0.lock().unwrap();
        caught
            .iter()
            .filter(|c| c.level == level && parts.iter().all(|p| c.fields.contains(p)))
            .map(|c| c.fields.clone())
            .collect()
    }

    fn all(&self) -> String {
        format!("{:#?}", self.0.lock().unwrap())
    }
}

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0 += &format!("{}={:?} ", field.name(), value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        // Without the quotes `Debug` would add.
        self.0 += &format!("{}={} ", field.name(), value);
    }
}

impl Subscriber for Catcher {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut f = Fields(String::new());
        event.record(&mut f);
        self.0.lock().unwrap().push(Caught {
            level: *event.metadata().level(),
            fields: f.0,
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// A call to a port nobody listens on: a WARN event naming the peer and
/// the operation (and the connect failure, WARN too, naming the peer).
#[test]
fn a_failed_call_is_a_warning_naming_the_peer_and_the_operation() {
    bounded(30, || {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let client = client();
        let url = format!("corbaloc:iiop:1.2@127.0.0.1:{port}/Echo");
        let e = EchoRef::unchecked_narrow(client.string_to_object(&url).unwrap());
        let catcher = Catcher::default();
        tracing::subscriber::with_default(catcher.clone(), || {
            e.echo_string("hi").unwrap_err();
        });
        let peer = format!("peer=127.0.0.1:{port}");
        let failed = catcher.find(
            Level::WARN,
            &["call failed", &peer, "operation=echo_string"],
        );
        assert_eq!(failed.len(), 1, "{}", catcher.all());
        assert!(failed[0].contains("TRANSIENT"), "{}", failed[0]);
        let connect = catcher.find(Level::WARN, &["connect failed", &peer]);
        assert_eq!(connect.len(), 1, "{}", catcher.all());
    });
}

/// A call that succeeds: a DEBUG request event with the operation and
/// the peer, whether the call takes the general path (the first, which
/// connects) or the lean one (the next).
#[test]
fn a_call_is_a_request_event_with_its_operation() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        let (addr, _) = address_and_key(&obj);
        let catcher = Catcher::default();
        tracing::subscriber::with_default(catcher.clone(), || {
            for _ in 0..3 {
                assert_eq!(e.echo_string("hi").unwrap(), "hi");
            }
        });
        let peer = format!("peer={addr}");
        let requests = catcher.find(
            Level::DEBUG,
            &["message=request", "operation=echo_string", &peer],
        );
        assert_eq!(requests.len(), 3, "{}", catcher.all());
        let connected = catcher.find(Level::INFO, &["connected", &peer]);
        assert_eq!(connected.len(), 1, "{}", catcher.all());
        assert!(
            catcher.find(Level::WARN, &[]).is_empty(),
            "{}",
            catcher.all()
        );
        server.shutdown(true);
    });
}
