//! Accepting connections: a listening socket is one more one-shot
//! registration, so whichever thread is waiting accepts (no acceptor
//! thread), up to the connection limit.

use std::io;
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use super::poller::{Kind, Token};
use crate::orb::Orb;

/// Connections accepted per event before the listener is re-armed (so
/// a flood of connects does not keep one thread from its requests).
const ACCEPT_BATCH: usize = 64;

/// The listener registered as `index` is readable: accepts what is
/// pending, refusing connections beyond the limit (accepted and closed
/// at once: the client sees the connection end before any reply).
pub(super) fn accept_ready(orb: &Orb, index: usize) {
    let server = &orb.inner().server;
    let Some(l) = server.listener(index) else {
        return;
    };
    let max = orb.inner().config.server.max_connections;
    for _ in 0..ACCEPT_BATCH {
        if server.is_stopping() {
            return;
        }
        match l.accept() {
            Ok((s, peer)) => {
                if server.connections() >= max {
                    crate::trace::refused(&peer, max);
                    drop(s);
                    continue;
                }
                crate::trace::accepted(&peer);
                server.add_conn(orb, s);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                crate::trace::accept_failed(&e);
                // EMFILE and friends: back off instead of spinning.
                std::thread::sleep(Duration::from_millis(10));
                break;
            }
        }
    }
    rearm(server, &l, index);
}

fn rearm(server: &super::Server, l: &Arc<TcpListener>, index: usize) {
    if let Some(pool) = server.pool() {
        if !server.is_stopping() {
            let _ = pool.poller.rearm(
                l.as_raw_fd(),
                Token {
                    id: index as u64,
                    kind: Kind::Listener,
                },
            );
        }
    }
}
