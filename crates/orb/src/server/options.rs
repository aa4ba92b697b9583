//! The server's thread and connection settings.

use std::time::Duration;

/// How a server dispatches requests. Every model runs on the same
/// readiness-driven pool of threads (see [`OrbBuilder::thread_pool_size`]
/// and its neighbours); they differ in how many requests of one
/// connection may run at once.
///
/// [`OrbBuilder::thread_pool_size`]: crate::OrbBuilder::thread_pool_size
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThreadModel {
    /// Leader/followers (the default): the thread that reads a request
    /// runs it inline while another thread waits for the next event, so
    /// requests of one connection and of many run concurrently, up to
    /// [`OrbBuilder::max_concurrent_per_connection`] per connection and
    /// [`OrbBuilder::max_server_threads`] in the ORB.
    ///
    /// [`OrbBuilder::max_concurrent_per_connection`]: crate::OrbBuilder::max_concurrent_per_connection
    /// [`OrbBuilder::max_server_threads`]: crate::OrbBuilder::max_server_threads
    #[default]
    LeaderFollowers,
    /// Requests of one connection run one after the other, in the order
    /// they arrived (omniORB's thread-per-connection semantics,
    /// `-ORBthreadPerConnectionPolicy 1`), without a thread per
    /// connection: connections still share the pool.
    PerConnection,
    /// Leader/followers with `n` threads kept when idle (as
    /// [`OrbBuilder::thread_pool_size`]`(n)`).
    ///
    /// [`OrbBuilder::thread_pool_size`]: crate::OrbBuilder::thread_pool_size
    ThreadPool(usize),
}

/// Default most server threads (omniORB's `maxServerThreadPoolSize`).
pub const DEFAULT_MAX_SERVER_THREADS: usize = 100;
/// Default most requests of one connection running at once.
pub const DEFAULT_MAX_CONCURRENT_PER_CONNECTION: usize = 32;
/// Default most connections a server accepts.
pub const DEFAULT_MAX_CONNECTIONS: usize = 65_536;
/// Default most reply bytes queued for a client that does not read.
pub const DEFAULT_MAX_WRITE_QUEUE: usize = 4 << 20;

/// The server's settings (from `OrbBuilder`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServerOptions {
    pub(crate) model: ThreadModel,
    /// Threads kept when idle; 0: the number of CPUs.
    pub(crate) pool_size: usize,
    pub(crate) max_threads: usize,
    pub(crate) max_per_connection: usize,
    pub(crate) max_connections: usize,
    pub(crate) max_write_queue: usize,
    /// How long a thread beyond the kept ones waits idle before it ends.
    pub(crate) idle_timeout: Duration,
    /// Most threads dwelling on a connection; `None`: as many as the
    /// threads kept.
    pub(crate) max_dwellers: Option<usize>,
    /// Most idle threads in `epoll_wait` at once; `None`: the CPUs.
    pub(crate) max_pollers: Option<usize>,
    /// How long a connection may carry nothing before the server closes
    /// it (CloseConnection first); `None`: never.
    pub(crate) conn_idle_timeout: Option<Duration>,
    /// Whether a quiet dwell ends by a signal to the dwelling thread
    /// (its `recv` then has no timeout) rather than a receive timeout.
    pub(crate) dwell_kick: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            model: ThreadModel::LeaderFollowers,
            pool_size: 0,
            max_threads: DEFAULT_MAX_SERVER_THREADS,
            max_per_connection: DEFAULT_MAX_CONCURRENT_PER_CONNECTION,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_write_queue: DEFAULT_MAX_WRITE_QUEUE,
            idle_timeout: Duration::from_secs(2),
            max_dwellers: None,
            max_pollers: None,
            conn_idle_timeout: None,
            dwell_kick: true,
        }
    }
}

impl ServerOptions {
    /// Threads kept when idle (at least 1, at most `max_threads`).
    pub(crate) fn core_threads(&self) -> usize {
        let n = match self.model {
            ThreadModel::ThreadPool(n) => n,
            _ if self.pool_size > 0 => self.pool_size,
            _ => std::thread::available_parallelism().map_or(2, |n| n.get()),
        };
        n.clamp(1, self.max_threads())
    }

    /// Most threads (never fewer than the kept ones asked for).
    pub(crate) fn max_threads(&self) -> usize {
        let asked = match self.model {
            ThreadModel::ThreadPool(n) => n,
            _ => self.pool_size,
        };
        self.max_threads.max(asked).max(1)
    }

    /// Most threads dwelling on a connection at once (fewer than the
    /// most threads, so one is left to wait for events).
    pub(crate) fn max_dwellers(&self) -> usize {
        self.max_dwellers
            .unwrap_or_else(|| self.core_threads())
            .min(self.max_threads() - 1)
    }

    /// Most idle threads waiting for events at once (at least 1).
    pub(crate) fn max_pollers(&self) -> usize {
        self.max_pollers
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
            .max(1)
    }

    /// How often idle connections are looked for (half the idle timeout,
    /// so one is closed between one and one and a half timeouts after
    /// its last message), if they are closed at all.
    pub(crate) fn idle_scan_period(&self) -> Option<Duration> {
        self.conn_idle_timeout
            .map(|t| (t / 2).max(Duration::from_millis(1)))
    }

    /// Most requests of one connection at once.
    pub(crate) fn per_connection(&self) -> usize {
        match self.model {
            ThreadModel::PerConnection => 1,
            _ => self.max_per_connection.max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_map_to_limits() {
        let d = ServerOptions::default();
        assert!(d.core_threads() >= 1 && d.core_threads() <= d.max_threads());
        assert_eq!(d.per_connection(), DEFAULT_MAX_CONCURRENT_PER_CONNECTION);
        let p = ServerOptions {
            model: ThreadModel::PerConnection,
            ..d
        };
        assert_eq!(p.per_connection(), 1);
        let t = ServerOptions {
            model: ThreadModel::ThreadPool(3),
            max_threads: 2,
            ..d
        };
        assert_eq!((t.core_threads(), t.max_threads()), (3, 3));
    }
}
