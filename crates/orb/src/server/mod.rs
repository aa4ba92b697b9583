//! Server side: a readiness-driven leader/followers pool of threads.
//!
//! * [`poller`]: the epoll instance every thread waits on (one-shot
//!   registrations: an event belongs to the one thread that got it).
//! * [`acceptor`]: listening sockets, accepted by whichever thread waits.
//! * [`leader_followers`]: the threads, each reading a connection's
//!   request and running it inline after handing the read turn on.
//! * [`connection`]: one connection's state, its GIOP machine
//!   ([`peregrine_giop::conn::ServerConnection`]) included.
//! * [`outbound`]: reply writing, serialized per connection, bounded.
//! * [`dispatch`]: demultiplexing a request and calling the servant.
//! * [`fast_path`]: the common request read at fixed offsets, the
//!   machine's prefix.
//! * [`machine`]: everything else, through the connection's GIOP machine.
//!
//! docs/architecture.md explains the design and its alternatives.

mod acceptor;
mod connection;
mod dispatch;
mod fast_path;
mod kick;
mod leader_followers;
mod machine;
mod options;
mod outbound;
mod poller;
mod pollers;

use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::client::lock;
use crate::fasthash::FastMap;
use crate::orb::{Orb, OrbInner};
use connection::{Conn, IdleCheck, Sock};
use leader_followers::Pool;
use poller::{Kind, Poller, Token};

pub(crate) use options::ServerOptions;
pub use options::{
    ThreadModel, DEFAULT_MAX_CONCURRENT_PER_CONNECTION, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_SERVER_THREADS, DEFAULT_MAX_WRITE_QUEUE,
};

/// How often waiting threads look at the shutdown's progress.
const TICK: Duration = Duration::from_millis(100);
/// How long connections linger after CloseConnection for the client to
/// close first (so its last request is not answered by a reset).
const LINGER: Duration = Duration::from_millis(300);

/// The listeners, connections and threads of one ORB.
#[derive(Default)]
pub(crate) struct Server {
    pool: OnceLock<Arc<Pool>>,
    listeners: Mutex<Vec<(SocketAddr, Option<Arc<TcpListener>>)>>,
    conns: RwLock<FastMap<u64, Arc<Conn>>>,
    next: AtomicU64,
    threads: Mutex<Vec<JoinHandle<()>>>,
    live: Mutex<usize>,
    live_cv: Condvar,
    stopping: AtomicBool,
    stopped_at: OnceLock<Instant>,
}

impl Server {
    /// The local addresses listened on.
    pub(crate) fn local_addrs(&self) -> Vec<SocketAddr> {
        lock(&self.listeners).iter().map(|(a, _)| *a).collect()
    }

    fn pool(&self) -> Option<Arc<Pool>> {
        self.pool.get().cloned()
    }

    /// Starts the pool's kept threads (once).
    fn start_pool(orb: &Arc<OrbInner>) -> std::io::Result<Arc<Pool>> {
        if let Some(p) = orb.server.pool.get() {
            return Ok(p.clone());
        }
        let poller = Arc::new(Poller::new()?);
        let pool = Arc::new(Pool::new(poller, &orb.config.server, orb.config.limits));
        if orb.server.pool.set(pool.clone()).is_err() {
            return Ok(orb.server.pool.get().cloned().unwrap_or(pool));
        }
        for _ in 0..pool.core() {
            pool.grow(orb);
        }
        Ok(pool)
    }

    /// Starts accepting on `l`.
    pub(crate) fn start(orb: &Arc<OrbInner>, l: TcpListener) -> std::io::Result<SocketAddr> {
        let pool = Self::start_pool(orb)?;
        let addr = l.local_addr()?;
        l.set_nonblocking(true)?;
        let l = Arc::new(l);
        let index = {
            let mut ls = lock(&orb.server.listeners);
            ls.push((addr, Some(l.clone())));
            ls.len() - 1
        };
        pool.poller.add(
            l.as_raw_fd(),
            Token {
                id: index as u64,
                kind: Kind::Listener,
            },
        )?;
        Ok(addr)
    }

    fn listener(&self, index: usize) -> Option<Arc<TcpListener>> {
        lock(&self.listeners).get(index)?.1.clone()
    }

    fn conn(&self, id: u64) -> Option<Arc<Conn>> {
        self.conns
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
    }

    fn add_conn(&self, orb: &Orb, stream: std::net::TcpStream) {
        let Some(pool) = self.pool() else { return };
        let Ok(sock) = Sock::new(stream, pool.dwell_timeout()) else {
            return;
        };
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let o = orb.inner();
        let conn = Arc::new(Conn::new(
            id,
            sock,
            pool.poller.clone(),
            o.config.limits,
            o.config.fragment_size,
            o.config.server.max_write_queue,
            o.config.server.conn_idle_timeout,
        ));
        self.conns
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, conn.clone());
        if conn.register().is_err() {
            self.close_conn(&conn);
        }
    }

    /// Closes a connection and forgets it (once).
    fn close_conn(&self, conn: &Conn) {
        if conn.close() {
            self.conns
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&conn.id);
            crate::trace::served(conn.peer());
        }
    }

    fn thread_done(&self) {
        let mut n = lock(&self.live);
        *n = n.saturating_sub(1);
        self.live_cv.notify_all();
    }

    /// Number of server connections open.
    pub(crate) fn connections(&self) -> usize {
        self.conns.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Number of server threads dwelling on a connection.
    pub(crate) fn dwelling_threads(&self) -> usize {
        self.pool.get().map_or(0, |p| p.dwelling())
    }

    /// Number of server threads running.
    pub(crate) fn threads(&self) -> usize {
        self.pool.get().map_or(0, |p| p.threads())
    }

    fn all_conns(&self) -> Vec<Arc<Conn>> {
        self.conns
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Orderly shutdown: stop accepting, refuse new requests, send
    /// CloseConnection on idle connections (busy ones send it after
    /// their last reply), close what is left after a linger, and if
    /// `wait`, wait for every server thread to finish (the upcalls
    /// running included).
    pub(crate) fn shutdown(&self, wait: bool) {
        if !self.stopping.swap(true, Ordering::AcqRel) {
            let _ = self.stopped_at.set(Instant::now());
            let pool = self.pool();
            for (_, l) in lock(&self.listeners).iter_mut() {
                if let (Some(l), Some(p)) = (l.take(), &pool) {
                    p.poller.delete(l.as_raw_fd());
                }
            }
            for c in self.all_conns() {
                c.set_closing();
                c.send_close();
            }
            if let Some(p) = &pool {
                p.stop(false);
                p.poller.wake();
            }
            self.housekeeping();
        }
        if wait {
            let me = usize::from(leader_followers::in_pool());
            let mut n = lock(&self.live);
            while *n > me {
                n = self
                    .live_cv
                    .wait_timeout(n, TICK)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            drop(n);
            let this = std::thread::current().id();
            let hs: Vec<_> = lock(&self.threads).drain(..).collect();
            for h in hs {
                if h.thread().id() != this {
                    let _ = h.join();
                }
            }
        }
    }

    /// While shutting down: closes connections idle past the linger, and
    /// once none is left ends every thread.
    fn housekeeping(&self) {
        if !self.is_stopping() {
            return;
        }
        let lingered = self.stopped_at.get().is_some_and(|t| t.elapsed() >= LINGER);
        let conns = self.all_conns();
        for c in &conns {
            if c.busy() == 0 {
                c.send_close();
                if lingered {
                    self.close_conn(c);
                }
            }
        }
        if self.connections() == 0 {
            if let Some(p) = self.pool() {
                p.stop(true);
                p.poller.wake();
            }
        }
    }

    /// The idle scan: CloseConnection on connections idle for the idle
    /// timeout; those that got it at the last scan and are still open
    /// are closed.
    fn close_idle(&self) {
        let now = Instant::now();
        for c in self.all_conns() {
            match c.close_if_idle(now) {
                IdleCheck::Open => {}
                IdleCheck::CloseSent => crate::trace::idle_closed(c.peer()),
                IdleCheck::Lingered => self.close_conn(&c),
            }
        }
    }

    fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }
}

impl Drop for Server {
    /// The ORB is gone (possibly without `shutdown`): its threads end.
    fn drop(&mut self) {
        if let Some(p) = self.pool.get() {
            p.stop(true);
            p.poller.wake();
        }
    }
}
