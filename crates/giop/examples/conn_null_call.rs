//! Twoway null calls through a client connection machine, a server
//! connection machine and back, in memory: the protocol cost of a call
//! with no transport under it, for an instruction count.
//!
//! ```text
//! cargo build --release -p peregrine-giop --example conn_null_call
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.1000 \
//!     target/release/examples/conn_null_call 1000
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.11000 \
//!     target/release/examples/conn_null_call 11000
//! ```
//!
//! Instructions per call are the difference of the two totals divided by
//! 10 000, which cancels the start-up cost. The loop drives both machines
//! as a driver should: every written and every received message buffer
//! goes back to its connection (`recycle`), so a warm call allocates
//! nothing; a second argument `fresh` drops them instead (four
//! allocations and frees a call, the cost of a driver that does not
//! recycle).

use std::time::Instant;

use peregrine_giop::conn::{
    Call, ClientConnection, ClientEvent, Config, ServerConnection, ServerEvent,
};
use peregrine_giop::ReplyStatus;

fn main() {
    let calls: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let recycle = std::env::args().nth(2).as_deref() != Some("fresh");
    let now = Instant::now();
    let mut client = ClientConnection::new(Config::default(), now);
    let mut server = ServerConnection::new(Config::default(), now);
    let key = b"\x14\x01\x0f\x00RST\x5a\x8c\x1e\x67\x00\x00\x00\x00\x00\x00\x00\x01";
    let mut replies = 0u64;
    for _ in 0..calls {
        let id = client
            .send_request(Call::new(key, "null"), &[])
            .expect("send");
        while let Some(t) = client.poll_transmit(now) {
            server.handle_input(t.head(), now);
            server.handle_input(t.payload(), now);
            if let Some(buf) = t.into_buffer().filter(|_| recycle) {
                client.recycle(buf);
            }
        }
        while let Some(e) = server.poll_event() {
            if let ServerEvent::Request(r) = e {
                server
                    .send_reply(r.id, ReplyStatus::NoException, &[])
                    .expect("reply");
                if recycle {
                    server.recycle(r.into_message().into_message());
                }
            }
        }
        while let Some(t) = server.poll_transmit(now) {
            client.handle_input(t.head(), now);
            client.handle_input(t.payload(), now);
            if let Some(buf) = t.into_buffer().filter(|_| recycle) {
                server.recycle(buf);
            }
        }
        while let Some(e) = client.poll_event() {
            match e {
                ClientEvent::Reply(r) if r.id == id => {
                    replies += 1;
                    if recycle {
                        client.recycle(r.message.into_message());
                    }
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    assert_eq!(replies, calls);
    println!("{calls} calls");
}
