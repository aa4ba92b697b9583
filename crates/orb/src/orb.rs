//! The ORB: configuration, lifecycle, initial references, stringified
//! references.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::time::Duration;

use peregrine_cdr::{ByteOrder, CodeSetId, GiopVersion};
use peregrine_giop::system_exception::minor;
use peregrine_giop::{
    CodeSetComponent, CodeSetComponentInfo, Endpoint, Ior, IorBuilder, Limits, ObjectUrl,
    ObjectUrlError,
};

use crate::client::{lock, ConnCache};
use crate::error::raise;
use crate::poa::{Poa, PoaManager, PoaRegistry, Policies};
use crate::runtime::{Cause, Phase};
use crate::runtime::{
    CompletionStatus, ObjectRef, Reference, SystemException, SystemExceptionKind as K,
};
use crate::server::Server;
use crate::transport::{bind, Connector};

mod builder;
pub use builder::OrbBuilder;

/// Default deadline of every call.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Default connect timeout.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The ORB's settings.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) call_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) backoff_min: Duration,
    pub(crate) backoff_max: Duration,
    pub(crate) limits: Limits,
    /// Outgoing GIOP 1.1/1.2 messages longer than this are fragmented.
    pub(crate) fragment_size: usize,
    /// The highest GIOP version this ORB speaks as a client (a profile
    /// asking for more gets this one).
    pub(crate) max_giop: GiopVersion,
    /// The server's threads and connection limits.
    pub(crate) server: crate::server::ServerOptions,
    /// Outgoing connections that carried no request for this long are
    /// closed (`None`: never).
    pub(crate) out_idle_timeout: Option<Duration>,
}

const RUNNING: u8 = 0;
const SHUT_DOWN: u8 = 1;
const DESTROYED: u8 = 2;

pub(crate) struct OrbInner {
    pub(crate) config: Config,
    pub(crate) connector: Box<dyn Connector>,
    pub(crate) cache: ConnCache,
    pub(crate) server: Server,
    pub(crate) poas: PoaRegistry,
    /// Random per ORB instance: transient keys of earlier runs are stale.
    pub(crate) instance: u32,
    root: OnceLock<Poa>,
    listen: Vec<(String, u16)>,
    publish_cfg: Vec<Endpoint>,
    /// The published endpoints, or why listening failed: the address and
    /// the I/O error, kept so that every later call reports the same cause.
    published: OnceLock<Result<Vec<Endpoint>, ListenFailure>>,
    init_refs: HashMap<String, String>,
    default_init_ref: Option<String>,
    /// Readable object keys (`Orb::bind_object_key`) -> the IOR a request
    /// for them is forwarded to. IORs, not `ObjectRef`s: a reference holds
    /// its ORB, and the ORB holding it would never be freed.
    object_keys: RwLock<HashMap<Box<[u8]>, Ior>>,
    state: AtomicU8,
    state_lock: Mutex<()>,
    state_cv: Condvar,
}

/// The ORB (cheap to clone: `Arc` inside): the client side (connections
/// shared by every reference to one endpoint, calls through
/// [`ObjectRef`]s and generated stubs) and the server side (listeners,
/// the RootPOA and its children).
///
/// A server and a client in one process, over TCP on 127.0.0.1. The
/// servant is written by hand here to show the runtime contract; from
/// IDL, the IDL compiler generates the skeleton (`GreeterSkeleton<S>`,
/// around a `Greeter` trait you implement) and the stub (`GreeterRef`,
/// with a `greet` method), and `root.servant_to_reference(&skeleton)`
/// returns a `GreeterRef`.
///
/// ```
/// use std::sync::Arc;
/// use peregrine_orb::{
///     CompletionStatus, ObjectRef, Orb, Servant, ServerRequest, Skeleton, SystemException,
///     SystemExceptionKind,
/// };
///
/// struct Greeter;
///
/// impl Servant for Greeter {
///     fn repository_id(&self) -> &'static str {
///         "IDL:Demo/Greeter:1.0"
///     }
///     fn is_a(&self, id: &str) -> bool {
///         id == self.repository_id()
///     }
///     fn dispatch(&self, req: &mut ServerRequest<'_>) -> Result<(), SystemException> {
///         match req.operation() {
///             "greet" => {
///                 let name = req.args().read_string()?;
///                 req.reply().write_string(&format!("hello, {name}"))?;
///                 Ok(())
///             }
///             _ => Err(SystemException::new(
///                 SystemExceptionKind::BadOperation,
///                 peregrine_orb::minor::BAD_OPERATION_UNKNOWN_OPERATION,
///                 CompletionStatus::No,
///             )),
///         }
///     }
/// }
///
/// // Untyped references for a hand-written servant (generated skeletons
/// // name their generated reference type).
/// impl Skeleton for Greeter {
///     type Reference = ObjectRef;
/// }
///
/// // Server: listen, let the POA manager pass requests, activate.
/// let server = Orb::builder().listen("127.0.0.1", 0).build()?;
/// let root = server.root_poa();
/// root.manager().activate()?;
/// let greeter = root.servant_to_reference(&Arc::new(Greeter))?;
/// let ior = server.object_to_string(&greeter);
/// let serving = {
///     let server = server.clone();
///     std::thread::spawn(move || server.run())
/// };
///
/// // Client (any process, any ORB): from the stringified reference to a call.
/// let client = Orb::builder().build()?;
/// let obj = client.string_to_object(&ior)?;
/// let reply: String = obj.invoke(
///     "greet",
///     |w| w.write_string("Ada"),
///     |r| r.read_string(),
///     |_, _| None::<peregrine_cdr::Result<SystemException>>,
/// )?;
/// assert_eq!(reply, "hello, Ada");
///
/// client.shutdown(true);
/// server.shutdown(true); // `run` returns
/// serving.join().unwrap();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Orb {
    inner: Arc<OrbInner>,
}

impl std::fmt::Debug for Orb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orb")
            .field("listening", &self.inner.server.local_addrs())
            .finish()
    }
}

/// Why the ORB could not listen: the address asked for, and the I/O error
/// (shared: every later caller of `published_endpoints` reports it).
type ListenFailure = (String, Arc<std::io::Error>);

fn bad_param(minor: u32, detail: std::fmt::Arguments<'_>) -> SystemException {
    raise(K::BadParam, minor, CompletionStatus::No, || {
        Cause::new(Phase::Init).with_detail(detail)
    })
}

/// What `resolve_initial_references` returns.
#[derive(Clone, Debug)]
pub enum InitialReference {
    /// `RootPOA`.
    RootPoa(Poa),
    /// `POACurrent`.
    PoaCurrent(crate::poa::PoaCurrent),
    /// A remote object (`-ORBInitRef`, `-ORBDefaultInitRef`).
    Object(ObjectRef),
}

impl std::fmt::Debug for Poa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poa").field("name", &self.name()).finish()
    }
}

/// `CORBA::ORB::InvalidName` or a system exception.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveError {
    /// No such initial reference.
    InvalidName(String),
    /// Resolving it failed.
    System(SystemException),
}

impl std::fmt::Display for ResolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResolveError::InvalidName(n) => write!(f, "CORBA::ORB::InvalidName: {n:?}"),
            ResolveError::System(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ResolveError {}

/// The first non-loopback local address (no packet is sent: connecting a
/// UDP socket only picks a route), else loopback.
fn default_host(v6: bool) -> String {
    let probe = if v6 {
        UdpSocket::bind("[::]:0").and_then(|s| {
            s.connect("[2001:db8::1]:9")?;
            s.local_addr()
        })
    } else {
        UdpSocket::bind("0.0.0.0:0").and_then(|s| {
            s.connect("192.0.2.1:9")?;
            s.local_addr()
        })
    };
    match probe {
        Ok(a) if !a.ip().is_unspecified() => a.ip().to_string(),
        _ if v6 => "::1".to_string(),
        _ => "127.0.0.1".to_string(),
    }
}

fn publish_for(addr: SocketAddr) -> Endpoint {
    let ip = addr.ip();
    let host = if ip.is_unspecified() {
        default_host(matches!(ip, IpAddr::V6(_)))
    } else {
        ip.to_string()
    };
    Endpoint::new(host, addr.port())
}

impl OrbInner {
    /// The IOR a name bound with [`Orb::bind_object_key`] forwards to.
    pub(crate) fn bound_key(&self, key: &[u8]) -> Option<Ior> {
        let keys = self.object_keys.read().unwrap_or_else(|e| e.into_inner());
        keys.get(key).cloned()
    }
}

impl Orb {
    /// A builder with the defaults: no listener until a POA needs one, a
    /// 30 s call deadline, a 5 s connect timeout.
    pub fn builder() -> OrbBuilder {
        OrbBuilder::default()
    }

    /// `CORBA::ORB_init`: builds an ORB from `-ORB...` arguments, leaving
    /// the others in `args`.
    pub fn init(args: &mut Vec<String>) -> Result<Orb, SystemException> {
        Orb::builder().args(args).build()
    }

    pub(crate) fn from_inner(inner: Arc<OrbInner>) -> Orb {
        Orb { inner }
    }

    pub(crate) fn inner(&self) -> &OrbInner {
        &self.inner
    }

    /// A handle that does not keep the ORB alive (for its own threads).
    pub(crate) fn downgrade(&self) -> std::sync::Weak<OrbInner> {
        Arc::downgrade(&self.inner)
    }

    pub(crate) fn inner_arc(&self) -> &Arc<OrbInner> {
        &self.inner
    }

    pub(crate) fn is_shut_down(&self) -> bool {
        self.inner.state.load(Ordering::Acquire) != RUNNING
    }

    /// The addresses published in IORs (starting the listeners first if
    /// needed). Never a wildcard address.
    pub fn published_endpoints(&self) -> Result<Vec<Endpoint>, SystemException> {
        let r = self.inner.published.get_or_init(|| {
            let listen = if self.inner.listen.is_empty() {
                vec![("0.0.0.0".to_string(), 0)]
            } else {
                self.inner.listen.clone()
            };
            let mut addrs = Vec::new();
            for (h, p) in &listen {
                let addr = || format!("{h}:{p}");
                let l = bind(h, *p).map_err(|e| (addr(), Arc::new(e)))?;
                let a = Server::start(&self.inner, l).map_err(|e| (addr(), Arc::new(e)))?;
                addrs.push(a);
            }
            let first_port = addrs.first().map_or(0, |a| a.port());
            if self.inner.publish_cfg.is_empty() {
                Ok(addrs.into_iter().map(publish_for).collect())
            } else {
                Ok(self
                    .inner
                    .publish_cfg
                    .iter()
                    .map(|e| {
                        let port = if e.port == 0 { first_port } else { e.port };
                        let host = if e.host == "0.0.0.0" || e.host == "::" || e.host.is_empty() {
                            default_host(e.host == "::")
                        } else {
                            e.host.clone()
                        };
                        Endpoint::new(host, port)
                    })
                    .collect())
            }
        });
        r.clone().map_err(|(addr, io)| {
            raise(
                K::Initialize,
                minor::INITIALIZE_TRANSPORT_ERROR,
                CompletionStatus::No,
                || Cause::new(Phase::Listen).with_peer(addr).with_shared_io(io),
            )
        })
    }

    /// The local addresses the ORB listens on.
    pub fn listen_addrs(&self) -> Vec<SocketAddr> {
        self.inner.server.local_addrs()
    }

    /// The code sets this ORB publishes: UTF-8 (native) or ISO 8859-1 for
    /// `char`, UTF-16 (native) or UCS-2 for `wchar`.
    pub fn code_sets_component() -> CodeSetComponentInfo {
        CodeSetComponentInfo {
            for_char_data: CodeSetComponent {
                native_code_set: CodeSetId::UTF_8,
                conversion_code_sets: vec![CodeSetId::ISO_8859_1],
            },
            for_wchar_data: CodeSetComponent {
                native_code_set: CodeSetId::UTF_16,
                conversion_code_sets: vec![CodeSetId::UCS_2],
            },
        }
    }

    pub(crate) fn make_reference(
        &self,
        type_id: &str,
        key: Vec<u8>,
    ) -> Result<ObjectRef, SystemException> {
        let eps = self.published_endpoints()?;
        let mut b = IorBuilder::new(type_id)
            .object_key(key)
            .code_sets(Self::code_sets_component());
        for e in eps {
            b = b.endpoint(e.host, e.port);
        }
        Ok(ObjectRef::from_ior(self, b.build()))
    }

    /// A reference for `ior` through this ORB; `None` for a nil IOR.
    pub fn object_from_ior(&self, ior: Ior) -> Option<ObjectRef> {
        if ior.is_nil() {
            None
        } else {
            Some(ObjectRef::from_ior(self, ior))
        }
    }

    /// `string_to_object`: an `IOR:`, `corbaloc:` or `corbaname:` string.
    ///
    /// A nil IOR gives a nil reference ([`ObjectRef::is_nil`]), as in the
    /// C++ mapping, not an error: a nil reference is a value a CORBA
    /// program may legitimately pass around (its operations raise
    /// `INV_OBJREF`). [`ObjectRef::non_nil`] turns it into the
    /// `Option` that generated code uses for interface-typed values. A
    /// string that is not a reference is `BAD_PARAM` (minor 7: unknown
    /// scheme, 8/9: bad address or scheme-specific part).
    pub fn string_to_object(&self, s: &str) -> Result<ObjectRef, SystemException> {
        let url = ObjectUrl::parse(s).map_err(|e| {
            let m = match &e {
                ObjectUrlError::Url(u) if u.pos == 0 => minor::BAD_PARAM_BAD_SCHEME_NAME,
                ObjectUrlError::Ior(_) => minor::BAD_PARAM_BAD_SCHEME_SPECIFIC_PART,
                _ => minor::BAD_PARAM_BAD_ADDRESS,
            };
            raise(K::BadParam, m, CompletionStatus::No, || {
                Cause::new(Phase::Resolve).with_detail(format_args!("string_to_object({s:?}): {e}"))
            })
        })?;
        match url {
            ObjectUrl::Ior(ior) => Ok(ObjectRef::from_ior(self, ior)),
            ObjectUrl::Corbaloc(loc) => self.corbaloc(&loc, s),
            ObjectUrl::Corbaname(cn) => {
                let ctx = self.corbaloc(&cn.loc, s)?;
                match cn.name {
                    None => Ok(ctx),
                    Some(n) => crate::naming::resolve_str(&ctx, &n),
                }
            }
        }
    }

    fn corbaloc(
        &self,
        loc: &peregrine_giop::Corbaloc,
        s: &str,
    ) -> Result<ObjectRef, SystemException> {
        if loc.is_rir() {
            let key = String::from_utf8_lossy(&loc.key).into_owned();
            return match self.resolve_initial_references(&key) {
                Ok(InitialReference::Object(o)) => Ok(o),
                Ok(_) => Err(bad_param(
                    minor::BAD_PARAM_BAD_URI_OTHER,
                    format_args!("{s:?}: {key} is a local object, not a reference"),
                )),
                Err(ResolveError::System(e)) => Err(e),
                Err(ResolveError::InvalidName(n)) => Err(bad_param(
                    minor::BAD_PARAM_BAD_URI_OTHER,
                    format_args!("{s:?}: no initial reference {n:?}"),
                )),
            };
        }
        let ior = loc.to_ior().ok_or_else(|| {
            bad_param(
                minor::BAD_PARAM_BAD_ADDRESS,
                format_args!("{s:?}: no usable address"),
            )
        })?;
        Ok(ObjectRef::from_ior(self, ior))
    }

    /// Makes `corbaloc::host:port/name` reach `obj`: a request or
    /// LocateRequest whose object key is the bytes of `name` is answered
    /// with a forward (`LOCATION_FORWARD` / `OBJECT_FORWARD`) to `obj`'s
    /// IOR, which every client ORB follows (what TAO's `IORTable::bind`
    /// and JacORB's `addObjectKey` do). A second bind of `name` replaces
    /// the first.
    ///
    /// The keys the POA makes have a binary prefix, so a URL with a name
    /// a person chose would otherwise be `OBJECT_NOT_EXIST`. The table is
    /// consulted only for keys that name no POA: requests on POA keys do
    /// not pay for it.
    ///
    /// `BAD_PARAM` for an empty name, a nil `obj`, or a name that has the
    /// form of a POA key (it could never be reached).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use peregrine_orb::{DynServerRequest, DynamicImplementation, DynamicServant, Orb, SystemException};
    ///
    /// struct Bank;
    /// impl DynamicImplementation for Bank {
    ///     fn invoke(&self, _req: &mut DynServerRequest<'_>) -> Result<(), SystemException> {
    ///         Ok(())
    ///     }
    ///     fn primary_interface(&self, _oid: &[u8]) -> String {
    ///         "IDL:Demo/Bank:1.0".into()
    ///     }
    /// }
    ///
    /// let server = Orb::builder().listen("127.0.0.1", 0).build()?;
    /// let root = server.root_poa();
    /// root.manager().activate()?;
    /// let bank = root.servant_to_reference(&Arc::new(DynamicServant::new(Bank)))?;
    /// server.bind_object_key("Bank", &bank)?;
    ///
    /// // Any client ORB: the readable URL reaches the object.
    /// let port = server.listen_addrs()[0].port();
    /// let client = Orb::builder().build()?;
    /// let by_name = client.string_to_object(&format!("corbaloc::127.0.0.1:{port}/Bank"))?;
    /// assert!(by_name.locate()?); // followed the OBJECT_FORWARD to `bank`
    ///
    /// assert!(server.unbind_object_key("Bank"));
    /// # client.shutdown(true);
    /// # server.shutdown(true);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bind_object_key(&self, name: &str, obj: &impl Reference) -> Result<(), SystemException> {
        let obj = obj.object_ref();
        let why = if name.is_empty() {
            Some("an empty name")
        } else if obj.is_nil() {
            Some("a nil reference")
        } else if crate::poa::is_poa_key(name.as_bytes()) {
            Some("a name in the form of a POA object key")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(bad_param(
                0,
                format_args!("bind_object_key({name:?}): {why}"),
            ));
        }
        self.inner
            .object_keys
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.as_bytes().into(), obj.ior().clone());
        Ok(())
    }

    /// Removes a name bound with [`Orb::bind_object_key`]: requests for it
    /// are `OBJECT_NOT_EXIST` again. False if it was not bound.
    pub fn unbind_object_key(&self, name: &str) -> bool {
        self.inner
            .object_keys
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name.as_bytes())
            .is_some()
    }

    /// `register_value_factory`: `factory` reads values whose most
    /// derived repository id is `repo_id` (a derived type the receiving
    /// code has no Rust type for, an `RMI:` id) when they arrive where a
    /// generated value type is expected. Returns the factory replaced.
    ///
    /// Generated valuetypes need no registration. The registry is shared
    /// by every ORB of the process (values are decoded where no ORB is at
    /// hand).
    pub fn register_value_factory(
        &self,
        repo_id: &str,
        factory: std::sync::Arc<dyn peregrine_cdr::ValueFactory>,
    ) -> Option<std::sync::Arc<dyn peregrine_cdr::ValueFactory>> {
        peregrine_cdr::register_value_factory(repo_id, factory)
    }

    /// `unregister_value_factory`.
    pub fn unregister_value_factory(
        &self,
        repo_id: &str,
    ) -> Option<std::sync::Arc<dyn peregrine_cdr::ValueFactory>> {
        peregrine_cdr::unregister_value_factory(repo_id)
    }

    /// `lookup_value_factory`.
    pub fn lookup_value_factory(
        &self,
        repo_id: &str,
    ) -> Option<std::sync::Arc<dyn peregrine_cdr::ValueFactory>> {
        peregrine_cdr::lookup_value_factory(repo_id)
    }

    /// `object_to_string`: the stringified IOR (native byte order).
    pub fn object_to_string(&self, obj: &ObjectRef) -> String {
        obj.ior()
            .to_stringified(ByteOrder::NATIVE)
            .unwrap_or_else(|_| "IOR:".into())
    }

    /// The RootPOA (its manager starts in the holding state).
    pub fn root_poa(&self) -> Poa {
        self.inner
            .root
            .get_or_init(|| {
                self.inner.poas.create(
                    &self.inner,
                    "RootPOA",
                    String::new(),
                    Policies::ROOT,
                    PoaManager::new(),
                )
            })
            .clone()
    }

    /// `PortableServer::Current` (also `resolve_initial_references("POACurrent")`).
    pub fn poa_current(&self) -> crate::poa::PoaCurrent {
        crate::poa::PoaCurrent
    }

    /// `resolve_initial_references`: `RootPOA`, `POACurrent`, then names configured
    /// with `-ORBInitRef`, then `-ORBDefaultInitRef`/name.
    pub fn resolve_initial_references(&self, name: &str) -> Result<InitialReference, ResolveError> {
        if name == "RootPOA" {
            return Ok(InitialReference::RootPoa(self.root_poa()));
        }
        if name == "POACurrent" {
            return Ok(InitialReference::PoaCurrent(crate::poa::PoaCurrent));
        }
        let url = match (self.inner.init_refs.get(name), &self.inner.default_init_ref) {
            (Some(u), _) => u.clone(),
            (None, Some(d)) => format!("{}/{}", d.trim_end_matches('/'), name),
            (None, None) => return Err(ResolveError::InvalidName(name.to_string())),
        };
        match self.string_to_object(&url) {
            Ok(o) if o.is_nil() => Err(ResolveError::InvalidName(name.to_string())),
            Ok(o) => Ok(InitialReference::Object(o)),
            Err(e) => Err(ResolveError::System(e)),
        }
    }

    /// The names `resolve_initial_references` knows.
    pub fn list_initial_services(&self) -> Vec<String> {
        let mut v = vec!["RootPOA".to_string(), "POACurrent".to_string()];
        v.extend(self.inner.init_refs.keys().cloned());
        v
    }

    /// Serves requests until [`Orb::shutdown`]. Connections are served by
    /// their own threads whether or not anyone calls `run`; `run` only
    /// blocks the caller.
    ///
    /// Any thread may end it: `shutdown` from a servant, a control thread
    /// or, for Ctrl-C, [`Orb::shutdown_on_signals`]:
    ///
    /// ```
    /// use std::time::Duration;
    /// use peregrine_orb::Orb;
    ///
    /// let orb = Orb::builder().listen("127.0.0.1", 0).build()?;
    /// orb.shutdown_on_signals()?; // Ctrl-C or SIGTERM: `run` returns
    /// let stopper = orb.clone();
    /// std::thread::spawn(move || {
    ///     std::thread::sleep(Duration::from_millis(10));
    ///     stopper.shutdown(false); // what the signal does
    /// });
    /// orb.run();
    /// orb.destroy(); // waits for the servants still running, destroys the POAs
    /// # Ok::<(), peregrine_orb::SystemException>(())
    /// ```
    pub fn run(&self) {
        let mut g = lock(&self.inner.state_lock);
        while !self.is_shut_down() {
            g = self
                .inner
                .state_cv
                .wait(g)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    /// False: the server's own threads serve every request; no work waits for the
    /// main thread.
    pub fn work_pending(&self) -> bool {
        false
    }

    /// Does nothing (see [`Orb::work_pending`]); kept for CORBA's API.
    pub fn perform_work(&self) {}

    /// Shuts down: refuses new calls (`BAD_INV_ORDER` minor 4), stops
    /// accepting, sends CloseConnection on idle server connections (busy
    /// ones after their reply), fails pending client calls, and with
    /// `wait` waits for every server thread.
    pub fn shutdown(&self, wait: bool) {
        {
            let _g = lock(&self.inner.state_lock);
            let _ = self.inner.state.compare_exchange(
                RUNNING,
                SHUT_DOWN,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            self.inner.state_cv.notify_all();
        }
        self.inner.server.shutdown(wait);
        self.inner.cache.close_all();
    }

    /// Shuts this ORB down ([`Orb::shutdown`]`(false)`) when the process
    /// gets SIGINT (Ctrl-C) or SIGTERM, so [`Orb::run`] returns and `main`
    /// can clean up ([`Orb::destroy`]). No signal crate needed: the
    /// handler only writes a byte that a watcher thread waits for, and the
    /// watcher shuts down every ORB registered this way. After that first
    /// signal the default actions are back: a second Ctrl-C ends the
    /// process even if a servant never returns. Call it any time after
    /// building the ORB; it installs the handlers once per process.
    ///
    /// `INITIALIZE` if the handlers or the watcher cannot be set up.
    #[cfg(unix)]
    pub fn shutdown_on_signals(&self) -> Result<(), SystemException> {
        crate::signals::register(&self.inner).map_err(|e| {
            raise(
                K::Initialize,
                minor::INITIALIZE_SIGNAL_HANDLERS,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Init)
                        .with_detail("shutdown_on_signals")
                        .with_io(e)
                },
            )
        })
    }

    /// Shuts down (waiting) and destroys every POA.
    pub fn destroy(&self) {
        self.shutdown(true);
        self.inner
            .object_keys
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        if let Some(root) = self.inner.root.get() {
            let _ = root.destroy(true, false);
        }
        self.inner.state.store(DESTROYED, Ordering::Release);
    }

    /// Open client connections (diagnostics: all references to one
    /// endpoint share one).
    pub fn client_connections(&self) -> usize {
        crate::client::open_connections(self)
    }

    /// Open server connections.
    pub fn server_connections(&self) -> usize {
        self.inner.server.connections()
    }

    /// Server threads dwelling on a connection now (diagnostics; see
    /// [`OrbBuilder::max_dwelling_threads`]).
    pub fn server_dwelling_threads(&self) -> usize {
        self.inner.server.dwelling_threads()
    }

    /// Server threads running (diagnostics).
    pub fn server_threads(&self) -> usize {
        self.inner.server.threads()
    }
}
