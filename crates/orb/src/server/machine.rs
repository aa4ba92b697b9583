//! Driving the connection's GIOP machine
//! ([`peregrine_giop::conn::ServerConnection`]) with a message the fast
//! path did not take: the message in, its events out (LocateRequest
//! answered here, a request handed back to dispatch), and what the
//! machine sends written.

use std::time::Instant;

use peregrine_giop::conn::{IncomingRequest, ServerEvent};

use super::connection::Conn;
use crate::client::lock;
use crate::orb::Orb;

/// What came of a message passed through the machine.
pub(super) enum Step {
    /// Nothing more to do (a LocateRequest answered, a fragment kept, a
    /// CancelRequest, a MARSHAL reply to a malformed request ...).
    Nothing,
    /// A request to dispatch.
    Request(IncomingRequest),
    /// The connection is over (CloseConnection or MessageError received,
    /// or MessageError sent).
    Close,
}

/// Passes one whole framed message (or bytes that do not frame) to
/// `conn`'s machine, answers what it answers itself (LocateRequest) and
/// writes what it has to send.
pub(super) fn feed(orb: &Orb, conn: &Conn, msg: &[u8]) -> Step {
    let mut m = lock(&conn.machine);
    m.handle_input(msg, Instant::now());
    let mut step = Step::Nothing;
    let mut locate = None;
    while let Some(e) = m.poll_event() {
        match e {
            ServerEvent::Request(r) => {
                if let Some(cs) = m.negotiated_codesets() {
                    conn.adopt_codesets(cs);
                }
                step = Step::Request(r);
            }
            ServerEvent::LocateRequest(l) => locate = Some(l),
            // The request runs on (its reply, if any, goes out and the
            // client drops it).
            ServerEvent::Cancelled { .. } => {}
            ServerEvent::Closed { .. } => step = Step::Close,
        }
    }
    conn.flush_machine(&mut m);
    drop(m);
    if let Some(l) = locate {
        // Found without the machine's lock: finding a POA may run an
        // adapter activator.
        let (status, body) = super::dispatch::locate(orb, &l);
        let mut m = lock(&conn.machine);
        if m.send_locate_reply(l.id, status, &body).is_err() {
            m.forget_request(l.id);
        }
        conn.flush_machine(&mut m);
    }
    step
}
