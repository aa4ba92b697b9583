//! GIOP connections as state machines, sans I/O.
//!
//! A [`ClientConnection`] and a [`ServerConnection`] hold everything one
//! end of a GIOP connection keeps: request ids and the requests awaiting
//! answers, fragment reassembly and fragmentation, the code set
//! negotiation, the orderly close (CloseConnection), protocol errors
//! (MessageError), locate requests, forwards, cancellation, request
//! deadlines and the idle timer. They read no socket and no clock: the
//! driver (a blocking thread, an async task, a test) moves bytes and time
//! in and out.
//!
//! Driving one end means, in a loop:
//!
//! 1. bytes read from the transport go to `handle_input` (any split of
//!    the stream will do, down to one byte at a time); end of stream goes
//!    to `handle_eof`;
//! 2. everything `poll_transmit` returns is written, in order (a
//!    [`Transmit`] is a short header and a payload, for one vectored
//!    write; a large body is never copied to be cut into fragments);
//! 3. every `poll_event` is acted on: the client gets replies, forwards
//!    and failures, the server gets requests to dispatch and answers
//!    them with `send_reply`;
//! 4. when the instant `poll_timeout` gives has passed, `handle_timeout`.
//!
//! Time is a [`std::time::Instant`] passed in: the same type the drivers
//! already have (blocking code and tokio both convert to it), and the
//! machines only compare instants and add durations, so a test starts
//! from any instant and moves a fake clock forward by arithmetic.
//!
//! Bodies are opaque: the ORB marshals arguments and results (straight
//! into the message with `send_request_with` / `send_reply_with`), the
//! machines encode and decode the GIOP headers around them.
//!
//! ```
//! use std::time::Instant;
//! use peregrine_giop::conn::{Call, ClientConnection, ClientEvent, Config, ServerConnection, ServerEvent};
//! use peregrine_giop::ReplyStatus;
//!
//! let now = Instant::now();
//! let mut client = ClientConnection::new(Config::default(), now);
//! let mut server = ServerConnection::new(Config::default(), now);
//! let id = client.send_request(Call::new(b"key", "ping"), &[]).unwrap();
//!
//! // The transport: here, bytes handed across in memory.
//! let mut reply = None;
//! while reply.is_none() {
//!     while let Some(t) = client.poll_transmit(now) {
//!         server.handle_input(&t.into_vec(), now);
//!     }
//!     while let Some(ServerEvent::Request(req)) = server.poll_event() {
//!         assert_eq!(req.operation(), "ping");
//!         server.send_reply(req.id, ReplyStatus::NoException, &[]).unwrap();
//!     }
//!     while let Some(t) = server.poll_transmit(now) {
//!         client.handle_input(&t.into_vec(), now);
//!     }
//!     if let Some(ClientEvent::Reply(r)) = client.poll_event() {
//!         reply = Some(r);
//!     }
//! }
//! assert_eq!(reply.unwrap().id, id);
//! ```

mod client;
mod config;
mod event;
mod idmap;
mod input;
mod link;
mod pending;
mod pool;
mod server;
mod timers;
mod transmit;

pub use client::{Call, ClientConnection};
pub use config::Config;
pub use event::{
    ClientEvent, CloseReason, ConnError, IncomingLocate, IncomingReply, IncomingRequest, RequestId,
    ServerEvent,
};
pub use input::Incoming;
pub use server::ServerConnection;
pub use transmit::Transmit;
