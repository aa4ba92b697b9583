//! [`OrbBuilder`]: the ORB's configuration, from code or from `-ORB...`
//! command-line options as omniORB and TAO spell them.

use std::collections::HashMap;
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::time::Duration;

use peregrine_cdr::GiopVersion;
use peregrine_giop::system_exception::minor;
use peregrine_giop::{Endpoint, Limits};

use super::{
    bad_param, Config, Orb, OrbInner, DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, RUNNING,
};
use crate::client::ConnCache;
use crate::poa::PoaRegistry;
use crate::runtime::SystemException;
use crate::server::Server;
use crate::transport::{Connector, TcpConnector};

/// Builds an [`Orb`]: listen and publish addresses, timeouts, limits,
/// initial references, `-ORB...` arguments ([`OrbBuilder::args`]).
///
/// ```
/// use std::time::Duration;
/// use peregrine_orb::Orb;
///
/// let orb = Orb::builder()
///     .listen("127.0.0.1", 0) // -ORBendPoint giop:tcp:127.0.0.1:0
///     .publish("server.example", 2809) // what IORs say (NAT, DNS names)
///     .call_timeout(Duration::from_secs(5)) // every call's deadline
///     .init_ref("NameService", "corbaloc::ns.example:2809/NameService")
///     .build()?;
/// let obj = orb.root_poa().create_object("IDL:Demo/Greeter:1.0")?;
/// assert_eq!(obj.ior().endpoints().unwrap()[0].host, "server.example");
/// assert!(orb.list_initial_services().contains(&"NameService".to_string()));
/// # orb.shutdown(true);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OrbBuilder {
    listen: Vec<(String, u16)>,
    publish: Vec<Endpoint>,
    config: Config,
    init_refs: HashMap<String, String>,
    default_init_ref: Option<String>,
    connector: Box<dyn Connector>,
    args_error: Option<String>,
    trace_level: u32,
}

impl Default for OrbBuilder {
    fn default() -> Self {
        OrbBuilder {
            listen: Vec::new(),
            publish: Vec::new(),
            config: Config {
                call_timeout: DEFAULT_CALL_TIMEOUT,
                connect_timeout: DEFAULT_CONNECT_TIMEOUT,
                backoff_min: Duration::from_millis(100),
                backoff_max: Duration::from_secs(5),
                limits: Limits::default(),
                fragment_size: crate::transport::DEFAULT_FRAGMENT_SIZE,
                max_giop: GiopVersion::V1_2,
                server: crate::server::ServerOptions::default(),
                out_idle_timeout: None,
            },
            init_refs: HashMap::new(),
            default_init_ref: None,
            connector: Box::new(TcpConnector),
            args_error: None,
            trace_level: 0,
        }
    }
}

/// Splits `host:port`, `[v6]:port` or `v6-literal` (port 0).
fn split_host_port(s: &str) -> Option<(String, u16)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => 0,
            None => return None,
        };
        return Some((h.to_string(), port));
    }
    match s.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => Some((h.to_string(), p.parse().ok()?)),
        Some(_) => Some((s.to_string(), 0)),
        None => Some((s.to_string(), 0)),
    }
}

/// An endpoint argument: `host:port`, omniORB's `giop:tcp:host:port`
/// or TAO's `iiop://host:port` (an empty host is returned empty).
fn endpoint_arg(v: &str) -> Option<(String, u16)> {
    let v = v.trim();
    let v = v
        .strip_prefix("giop:tcp:")
        .or_else(|| v.strip_prefix("iiop://"))
        .unwrap_or(v);
    split_host_port(v.trim_end_matches('/'))
}

impl OrbBuilder {
    /// Listens on `host:port` (port 0: any; `0.0.0.0` every IPv4
    /// interface; `::` is dual-stack where the OS allows). May be called
    /// several times. Without it, the first reference a POA makes starts
    /// a listener on every interface on a port of the OS's choosing; a
    /// server whose references must survive a restart (PERSISTENT POAs,
    /// `corbaloc` URLs) needs a fixed port. The addresses written into
    /// IORs are the listen addresses (a wildcard replaced by the host's
    /// address) unless [`OrbBuilder::publish`] says otherwise.
    /// `-ORBendPoint giop:tcp:host:port`.
    pub fn listen(mut self, host: &str, port: u16) -> Self {
        self.listen.push((
            host.trim_matches(|c| c == '[' || c == ']').to_string(),
            port,
        ));
        self
    }

    /// Publishes `host:port` in IORs instead of the listen addresses
    /// (NAT, multi-homed hosts, DNS names). The first is the profile's
    /// address, the others become `TAG_ALTERNATE_IIOP_ADDRESS` components.
    /// Port 0 means the port of the first listener.
    /// `-ORBendPointPublish giop:tcp:host:port`.
    pub fn publish(mut self, host: &str, port: u16) -> Self {
        self.publish.push(Endpoint::new(
            host.trim_matches(|c| c == '[' || c == ']'),
            port,
        ));
        self
    }

    /// Default deadline of every call (per reference:
    /// [`ObjectRef::with_timeout`](crate::ObjectRef::with_timeout)).
    pub fn call_timeout(mut self, d: Duration) -> Self {
        self.config.call_timeout = d;
        self
    }

    /// Connect timeout.
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.config.connect_timeout = d;
        self
    }

    /// Backoff after a failed connect: first delay and ceiling (doubling).
    pub fn connect_backoff(mut self, min: Duration, max: Duration) -> Self {
        self.config.backoff_min = min;
        self.config.backoff_max = max.max(min);
        self
    }

    /// Limits on incoming messages.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.config.limits = limits;
        self
    }

    /// Outgoing GIOP 1.1/1.2 Requests and Replies longer than `bytes` are
    /// sent as fragments no longer than `bytes` (default 1 MiB; at least
    /// 32; GIOP 1.0 messages are never fragmented). `-ORBFragmentSize`.
    pub fn fragment_size(mut self, bytes: usize) -> Self {
        self.config.fragment_size = bytes.max(peregrine_giop::fragment::MIN_FRAGMENT_LEN);
        self
    }

    /// The highest GIOP version used as a client (default 1.2): a
    /// reference whose profile says more is called with this version, as
    /// omniORB's `-ORBmaxGIOPVersion`. `-ORBMaxGIOPVersion 1.x`.
    pub fn max_giop_version(mut self, v: GiopVersion) -> Self {
        self.config.max_giop = v;
        self
    }

    /// The server's thread model (default
    /// [`ThreadModel::LeaderFollowers`](crate::ThreadModel::LeaderFollowers)):
    /// [`ThreadModel::PerConnection`](crate::ThreadModel::PerConnection)
    /// runs a connection's requests one at a time.
    /// `-ORBthreadPerConnectionPolicy 0|1`.
    pub fn thread_model(mut self, m: crate::server::ThreadModel) -> Self {
        self.config.server.model = m;
        self
    }

    /// Server threads kept when idle (default: the number of CPUs); more
    /// are started under load, up to [`OrbBuilder::max_server_threads`],
    /// and end once not needed for 2-4 s. `-ORBthreadPoolSize n`.
    pub fn thread_pool_size(mut self, n: usize) -> Self {
        self.config.server.pool_size = n;
        self
    }

    /// Most server threads, so most requests running at once in the ORB
    /// (default [`DEFAULT_MAX_SERVER_THREADS`](crate::DEFAULT_MAX_SERVER_THREADS)).
    /// Nested calls back into this server deeper than this wait for a
    /// thread until their deadline. `-ORBmaxServerThreadPoolSize n`.
    pub fn max_server_threads(mut self, n: usize) -> Self {
        self.config.server.max_threads = n.max(1);
        self
    }

    /// Most requests of one connection running at once (default
    /// [`DEFAULT_MAX_CONCURRENT_PER_CONNECTION`](crate::DEFAULT_MAX_CONCURRENT_PER_CONNECTION));
    /// beyond it the connection is not read until one finishes.
    /// `-ORBmaxServerThreadPerConnection n`.
    pub fn max_concurrent_per_connection(mut self, n: usize) -> Self {
        self.config.server.max_per_connection = n.max(1);
        self
    }

    /// Most server connections open at once (default
    /// [`DEFAULT_MAX_CONNECTIONS`](crate::DEFAULT_MAX_CONNECTIONS)); one
    /// more is accepted and closed at once. `-ORBmaxServerConnections n`.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.config.server.max_connections = n;
        self
    }

    /// Most reply bytes queued for a client that does not read them
    /// (default [`DEFAULT_MAX_WRITE_QUEUE`](crate::DEFAULT_MAX_WRITE_QUEUE));
    /// a reply beyond it closes the connection (one reply is always
    /// accepted into an empty queue). `-ORBmaxServerWriteQueue bytes`.
    pub fn max_write_queue(mut self, bytes: usize) -> Self {
        self.config.server.max_write_queue = bytes;
        self
    }

    /// Most server threads that dwell on a connection at once (default:
    /// as many as [`OrbBuilder::thread_pool_size`]; 0 turns dwelling
    /// off). A thread that answered a connection's request and found
    /// nothing more to read stays on it for up to 50 ms, reading with a
    /// blocking `recv`, so a client that calls again soon is read by the
    /// thread already there: one `recv` and one `send` per call, as with
    /// a thread per connection, and no other thread woken. One thread
    /// always stays free for the other connections. `-ORBmaxDwellingThreads n`.
    pub fn max_dwelling_threads(mut self, n: usize) -> Self {
        self.config.server.max_dwellers = Some(n);
        self
    }

    /// Whether a dwelling thread's wait ends by a signal (default: true).
    /// The thread's blocking `recv` then has no timeout, which spares the
    /// kernel a timer per blocking receive, and after 50 ms without a
    /// request the pool sends the thread a real-time signal
    /// (`SIGRTMAX - 3`, whose handler only counts it) to end the wait.
    /// Only a signal the process left at its default action is used. An
    /// application that installs its own handler for that signal after
    /// the ORB started, or does not want the ORB to install one, turns
    /// this off: waits then end with a 50 ms receive timeout.
    /// `-ORBdwellKick 0|1`.
    pub fn dwell_kick(mut self, on: bool) -> Self {
        self.config.server.dwell_kick = on;
        self
    }

    /// Most idle server threads that wait for network events at once
    /// (default: the CPUs this process may run on, as
    /// [`std::thread::available_parallelism`] counts them). The other idle
    /// threads wait on their own until a waiting thread takes an event
    /// and none is left waiting; then one of them takes its place. More
    /// waiting threads than CPUs cannot run the events they are woken for
    /// at once: each would be woken by the kernel for one event and take
    /// the CPU from whoever was running (on one CPU a busy client is then
    /// interrupted once a request). `-ORBmaxPollingThreads n`.
    pub fn max_polling_threads(mut self, n: usize) -> Self {
        self.config.server.max_pollers = Some(n.max(1));
        self
    }

    /// Closes server connections that carried no message for `timeout`
    /// (default: never), with a GIOP CloseConnection first, so a client
    /// knows no request was lost and opens a new connection for its next
    /// call. A connection with a request in progress is never idle. The
    /// ORB looks for idle connections every `timeout / 2`, so one closes
    /// between one and one and a half timeouts after its last message.
    /// `-ORBinConScanPeriod seconds` (omniORB; 0: never).
    pub fn connection_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.server.conn_idle_timeout = timeout.filter(|t| !t.is_zero());
        self
    }

    /// Closes outgoing (client) connections that carried no request for
    /// `timeout` (default: never), so a client that talked to many
    /// servers once does not keep a socket to each. A connection with a
    /// call waiting for its reply is never idle. Closing is the client's
    /// GIOP close (the socket, no message); the next call to that server
    /// opens a new connection, transparently. The ORB looks for idle
    /// connections every `timeout / 2`, so one closes between one and
    /// one and a half timeouts after its last request; calls do no work
    /// for the scan. `-ORBoutConScanPeriod seconds` (omniORB; 0:
    /// never).
    pub fn outgoing_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.out_idle_timeout = timeout.filter(|t| !t.is_zero());
        self
    }

    /// `-ORBInitRef name=url`.
    pub fn init_ref(mut self, name: &str, url: &str) -> Self {
        self.init_refs.insert(name.to_string(), url.to_string());
        self
    }

    /// `-ORBDefaultInitRef url`: `resolve_initial_references(name)` of an
    /// unconfigured name tries `url/name`.
    pub fn default_init_ref(mut self, url: &str) -> Self {
        self.default_init_ref = Some(url.to_string());
        self
    }

    /// Another transport connector (tests, TLS later).
    pub fn connector(mut self, c: Box<dyn Connector>) -> Self {
        self.connector = c;
        self
    }

    /// Logs to stderr at omniORB's trace level `n` (`-ORBtraceLevel n`):
    /// 0 nothing (the default), 1-4 failures (WARN: connects refused,
    /// calls ending in an exception the ORB raised, timeouts), 5-9
    /// connections too (INFO), 10-24 requests too (DEBUG), 25 and up
    /// everything (TRACE: replies).
    ///
    /// [`OrbBuilder::build`] installs `tracing-subscriber`'s plain-text
    /// subscriber as the process's global default, unless the
    /// application installed one already: that one stays, with its own
    /// filter, and `n` is ignored. Without the `trace-subscriber` feature
    /// (on by default) nothing is installed either. The ORB's events go
    /// to whatever subscriber is installed, whatever the level here.
    pub fn trace_level(mut self, n: u32) -> Self {
        self.trace_level = n;
        self
    }

    /// Takes the `-ORB...` options out of `args` (the rest stay), names
    /// compared without regard to case:
    ///
    /// | option | as |
    /// |---|---|
    /// | `-ORBInitRef name=url` | [`OrbBuilder::init_ref`] |
    /// | `-ORBDefaultInitRef url` | [`OrbBuilder::default_init_ref`] |
    /// | `-ORBendPoint giop:tcp:host:port` (omniORB; `giop:tcp::port` is every interface), `-ORBListenEndpoints iiop://host:port` (TAO), `-ORBListenEndpoint host:port` | [`OrbBuilder::listen`] |
    /// | `-ORBendPointPublish giop:tcp:host:port[,...]` (omniORB), `-ORBPublishAddress host:port` | [`OrbBuilder::publish`] |
    /// | `-ORBCallTimeout ms`, `-ORBConnectTimeout ms` | [`OrbBuilder::call_timeout`], [`OrbBuilder::connect_timeout`] |
    /// | `-ORBFragmentSize bytes` | [`OrbBuilder::fragment_size`] |
    /// | `-ORBMaxGIOPVersion 1.x` | [`OrbBuilder::max_giop_version`] |
    /// | `-ORBtraceLevel n` | [`OrbBuilder::trace_level`] |
    /// | `-ORBthreadPoolSize n` | [`OrbBuilder::thread_pool_size`] |
    /// | `-ORBmaxServerThreadPoolSize n` (omniORB), `-ORBmaxServerThreads n` | [`OrbBuilder::max_server_threads`] |
    /// | `-ORBmaxServerThreadPerConnection n` (omniORB), `-ORBmaxConcurrentPerConnection n` | [`OrbBuilder::max_concurrent_per_connection`] |
    /// | `-ORBmaxServerConnections n`, `-ORBmaxConnections n` | [`OrbBuilder::max_connections`] |
    /// | `-ORBmaxServerWriteQueue bytes` | [`OrbBuilder::max_write_queue`] |
    /// | `-ORBmaxDwellingThreads n` | [`OrbBuilder::max_dwelling_threads`] |
    /// | `-ORBdwellKick 0\|1` | [`OrbBuilder::dwell_kick`] |
    /// | `-ORBmaxPollingThreads n` | [`OrbBuilder::max_polling_threads`] |
    /// | `-ORBinConScanPeriod seconds` (omniORB; 0: never) | [`OrbBuilder::connection_idle_timeout`] |
    /// | `-ORBoutConScanPeriod seconds` (omniORB; 0: never) | [`OrbBuilder::outgoing_idle_timeout`] |
    /// | `-ORBthreadPerConnectionPolicy 0\|1` (omniORB) | [`OrbBuilder::thread_model`] (1: [`ThreadModel::PerConnection`](crate::ThreadModel::PerConnection)) |
    ///
    /// Both `-ORBopt value` and `-ORBopt=value` forms are accepted. An
    /// unknown `-ORB` option or a bad value makes [`OrbBuilder::build`]
    /// fail with `BAD_PARAM`.
    ///
    /// ```
    /// use peregrine_orb::Orb;
    ///
    /// let mut args: Vec<String> = ["server", "-ORBendPoint", "giop:tcp:127.0.0.1:0", "--verbose"]
    ///     .map(String::from)
    ///     .to_vec();
    /// let orb = Orb::builder().args(&mut args).build()?;
    /// assert_eq!(args, ["server", "--verbose"]); // the ORB's options are taken out
    /// assert!(orb.listen_addrs()[0].ip().is_loopback());
    /// # orb.shutdown(true);
    /// # Ok::<(), peregrine_orb::SystemException>(())
    /// ```
    pub fn args(mut self, args: &mut Vec<String>) -> Self {
        let mut rest = Vec::with_capacity(args.len());
        let mut it = std::mem::take(args).into_iter();
        while let Some(a) = it.next() {
            if !a.starts_with("-ORB") {
                rest.push(a);
                continue;
            }
            let (opt, val) = match a.split_once('=') {
                Some((o, v)) if !o.eq_ignore_ascii_case("-ORBInitRef") => {
                    (o.to_string(), Some(v.to_string()))
                }
                _ => (a.clone(), None),
            };
            let val = match val.or_else(|| it.next()) {
                Some(v) => v,
                None => {
                    self.args_error = Some(format!("{opt} needs a value"));
                    continue;
                }
            };
            match opt.to_ascii_lowercase().as_str() {
                "-orbinitref" => match val.split_once('=') {
                    Some((n, u)) => {
                        self.init_refs.insert(n.to_string(), u.to_string());
                    }
                    None => self.args_error = Some(format!("-ORBInitRef {val}: expected name=URL")),
                },
                "-orbdefaultinitref" => self.default_init_ref = Some(val),
                "-orblistenendpoint" | "-orblistenendpoints" | "-orbendpoint" => {
                    match endpoint_arg(&val) {
                        // omniORB's `giop:tcp::port`: every interface.
                        Some((h, p)) if h.is_empty() => self.listen.push(("0.0.0.0".into(), p)),
                        Some(hp) => self.listen.push(hp),
                        None => {
                            self.args_error = Some(format!(
                                "{opt} {val}: expected host:port, giop:tcp:host:port or iiop://host:port"
                            ))
                        }
                    }
                }
                "-orbpublishaddress" | "-orbendpointpublish" => {
                    // omniORB accepts a comma-separated list of endpoints.
                    for one in val.split(',') {
                        match endpoint_arg(one) {
                            Some((h, p)) => self.publish.push(Endpoint::new(h, p)),
                            None => {
                                self.args_error = Some(format!(
                                    "{opt} {val}: expected host:port or giop:tcp:host:port"
                                ))
                            }
                        }
                    }
                }
                "-orbcalltimeout" | "-orbconnecttimeout" => match val.parse::<u64>() {
                    Ok(ms) if opt.eq_ignore_ascii_case("-orbcalltimeout") => {
                        self.config.call_timeout = Duration::from_millis(ms)
                    }
                    Ok(ms) => self.config.connect_timeout = Duration::from_millis(ms),
                    Err(_) => self.args_error = Some(format!("{opt} {val}: expected milliseconds")),
                },
                "-orbfragmentsize" => match val.parse::<usize>() {
                    Ok(n) => self = self.fragment_size(n),
                    Err(_) => self.args_error = Some(format!("{opt} {val}: expected bytes")),
                },
                "-orbtracelevel" => match val.parse::<u32>() {
                    Ok(n) => self.trace_level = n,
                    Err(_) => {
                        self.args_error = Some(format!("{opt} {val}: expected a level, 0 or more"))
                    }
                },
                "-orbthreadpoolsize"
                | "-orbmaxserverthreadpoolsize"
                | "-orbmaxserverthreads"
                | "-orbmaxserverthreadperconnection"
                | "-orbmaxconcurrentperconnection"
                | "-orbmaxserverconnections"
                | "-orbmaxconnections"
                | "-orbmaxserverwritequeue"
                | "-orbmaxdwellingthreads"
                | "-orbmaxpollingthreads"
                | "-orbdwellkick"
                | "-orbthreadperconnectionpolicy" => match val.parse::<usize>() {
                    Ok(n) => self = self.server_arg(&opt.to_ascii_lowercase(), n),
                    Err(_) => self.args_error = Some(format!("{opt} {val}: expected a number")),
                },
                "-orbinconscanperiod" => match val.parse::<u64>() {
                    Ok(s) => self = self.connection_idle_timeout(Some(Duration::from_secs(s))),
                    Err(_) => self.args_error = Some(format!("{opt} {val}: expected seconds")),
                },
                "-orboutconscanperiod" => match val.parse::<u64>() {
                    Ok(s) => self = self.outgoing_idle_timeout(Some(Duration::from_secs(s))),
                    Err(_) => self.args_error = Some(format!("{opt} {val}: expected seconds")),
                },
                "-orbmaxgiopversion" => match val.as_str() {
                    "1.0" => self.config.max_giop = GiopVersion::V1_0,
                    "1.1" => self.config.max_giop = GiopVersion::V1_1,
                    "1.2" => self.config.max_giop = GiopVersion::V1_2,
                    _ => self.args_error = Some(format!("{opt} {val}: expected 1.0, 1.1 or 1.2")),
                },
                _ => self.args_error = Some(format!("unknown ORB option {opt}")),
            }
        }
        *args = rest;
        self
    }

    /// One numeric server option of [`OrbBuilder::args`].
    fn server_arg(self, opt: &str, n: usize) -> Self {
        match opt {
            "-orbthreadpoolsize" => self.thread_pool_size(n),
            "-orbmaxserverthreadpoolsize" | "-orbmaxserverthreads" => self.max_server_threads(n),
            "-orbmaxserverthreadperconnection" | "-orbmaxconcurrentperconnection" => {
                self.max_concurrent_per_connection(n)
            }
            "-orbmaxserverconnections" | "-orbmaxconnections" => self.max_connections(n),
            "-orbmaxserverwritequeue" => self.max_write_queue(n),
            "-orbmaxdwellingthreads" => self.max_dwelling_threads(n),
            "-orbmaxpollingthreads" => self.max_polling_threads(n),
            "-orbdwellkick" => self.dwell_kick(n != 0),
            _ => self.thread_model(if n == 0 {
                crate::server::ThreadModel::LeaderFollowers
            } else {
                crate::server::ThreadModel::PerConnection
            }),
        }
    }

    /// Builds the ORB and starts listening (if any listen address was
    /// given; otherwise the first reference made by a POA listens on
    /// every interface, on a port of the OS's choosing).
    pub fn build(self) -> Result<Orb, SystemException> {
        if let Some(e) = self.args_error {
            return Err(bad_param(
                minor::BAD_PARAM_INVALID_ORB_OPTION,
                format_args!("ORB arguments: {e}"),
            ));
        }
        // A subscriber installed by the application wins (see
        // `trace_level`): whether ours went in is not an error either way.
        crate::trace::install(self.trace_level);
        let instance = {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(std::process::id() as u64);
            h.finish() as u32
        };
        let inner = Arc::new(OrbInner {
            config: self.config,
            connector: self.connector,
            cache: ConnCache::default(),
            server: Server::default(),
            poas: PoaRegistry::default(),
            instance,
            root: OnceLock::new(),
            listen: self.listen,
            publish_cfg: self.publish,
            published: OnceLock::new(),
            init_refs: self.init_refs,
            default_init_ref: self.default_init_ref,
            object_keys: RwLock::new(HashMap::new()),
            state: AtomicU8::new(RUNNING),
            state_lock: Mutex::new(()),
            state_cv: Condvar::new(),
        });
        let orb = Orb { inner };
        if !orb.inner.listen.is_empty() {
            orb.published_endpoints()?;
        }
        Ok(orb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orb::Orb;

    /// The endpoint spellings of omniORB (`giop:tcp:`), TAO (`iiop://`)
    /// and plain `host:port`, IPv6 literals in brackets.
    #[test]
    fn endpoint_arguments() {
        let hp = |h: &str, p| Some((h.to_string(), p));
        assert_eq!(
            endpoint_arg("giop:tcp:127.0.0.1:2809"),
            hp("127.0.0.1", 2809)
        );
        assert_eq!(endpoint_arg("giop:tcp::2809"), hp("", 2809));
        assert_eq!(endpoint_arg("giop:tcp:[::1]:2809"), hp("::1", 2809));
        assert_eq!(
            endpoint_arg("iiop://host.example:7/"),
            hp("host.example", 7)
        );
        assert_eq!(endpoint_arg(" 10.0.0.1:1 "), hp("10.0.0.1", 1));
        assert_eq!(endpoint_arg("giop:tcp:host:port"), None);
    }

    /// `-ORBtraceLevel` as omniORB users type it, taken out of the
    /// arguments; the ORB is not built, so that no global subscriber is
    /// installed in the test process.
    #[test]
    fn trace_level_argument() {
        let mut args: Vec<String> = ["app", "-ORBtraceLevel", "10", "x"]
            .map(String::from)
            .to_vec();
        let b = Orb::builder().args(&mut args);
        assert_eq!(args, ["app", "x"]);
        assert!(b.args_error.is_none());
        assert_eq!(b.trace_level, 10);
        let mut args: Vec<String> = ["-ORBtracelevel=25"].map(String::from).to_vec();
        assert_eq!(Orb::builder().args(&mut args).trace_level, 25);
    }

    /// A bad level is BAD_PARAM naming the option.
    #[test]
    fn bad_trace_level_is_bad_param() {
        let mut args: Vec<String> = ["-ORBtraceLevel", "loud"].map(String::from).to_vec();
        let e = Orb::builder().args(&mut args).build().unwrap_err();
        assert_eq!(e.kind, crate::runtime::SystemExceptionKind::BadParam);
        assert_eq!(e.minor, minor::BAD_PARAM_INVALID_ORB_OPTION);
        assert!(e.to_string().contains("-ORBtraceLevel loud"), "{e}");
    }
}
