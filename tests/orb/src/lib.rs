//! Integration tests of the ORB core (peregrine-orb) over real TCP on
//! 127.0.0.1, calling through stubs and skeletons generated from
//! `idl/test.idl` by peregrine-idl-rust (in `build.rs`; a separate crate
//! because peregrine-orb must not build-depend on the IDL compiler).
//!
//! * [`idl`]: the generated code (`Test::Echo`, `Test::Evolved`,
//!   `Test::Stranger`, `Test::Counter`, `Test::Probe`, and `Test::Tiny`,
//!   `Test::TinyFactory` of `examples/million.rs`).
//! * [`EchoImpl`], [`EvolvedImpl`]: servants implementing the generated
//!   traits, shared by several test binaries (`Counter` and `Probe`
//!   servants live in the tests that use them).
//! * Helpers: a server ORB with one Echo ([`server`]), a client ORB
//!   ([`client`]), [`bounded`] so no test can hang, and the raw GIOP
//!   pieces of the fault and load tests ([`echo_request`],
//!   [`address_and_key`]).
//!
//! The tests are in `tests/`; `leaks.rs` is alone in its binary because it
//! counts the process's threads and descriptors.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use peregrine_orb::{CompletionStatus, Orb, Servant, SystemException, SystemExceptionKind};

/// Code generated from `idl/test.idl`.
pub mod idl {
    include!(concat!(env!("OUT_DIR"), "/_include.rs"));
}

/// The custom marshaling of `idl/custom_any.idl`'s `Tally`: the label
/// first, then the count, and a format octet to check.
mod custom_any {
    use super::idl::custom_any::Tally;
    use peregrine_cdr::{CdrError, CustomMarshal, Decode, Encode, Reader, Result, Writer};

    impl CustomMarshal for Tally {
        fn marshal(&self, w: &mut Writer) -> Result<()> {
            w.write_u8(7);
            self.label.encode(w)?;
            w.write_i32(self.count);
            Ok(())
        }
        fn unmarshal(r: &mut Reader<'_>) -> Result<Self> {
            if r.read_u8()? != 7 {
                return Err(CdrError::InvalidEnum(0));
            }
            let label = String::decode(r)?;
            let count = r.read_i32()?;
            Ok(Self { count, label })
        }
    }
}

/// The operations of `idl/abstract.idl`'s valuetypes, run where the value
/// is (implemented here: the generated types belong to this crate).
mod abs_values {
    use super::idl::abs::{
        Book, Circle, Cube, CubeOperations, Described, Label, Named, Shape, Square,
        SquareOperations, Titled,
    };
    use peregrine_orb::SystemException;

    impl Named for Book {
        fn name(&self) -> Result<String, SystemException> {
            Ok(self.title.clone())
        }
    }

    impl Titled for Book {}

    impl Named for Label {
        fn name(&self) -> Result<String, SystemException> {
            Ok(self.text.clone())
        }
    }

    impl Described for Label {
        fn describe(&self, depth: i32) -> Result<String, SystemException> {
            Ok(format!("label {}@{depth}", self.text))
        }
    }

    impl Shape for Square {
        fn area(&self) -> Result<f64, SystemException> {
            Ok(self.side * self.side)
        }
    }

    /// A cube's area is its surface: not a square's.
    impl Shape for Cube {
        fn area(&self) -> Result<f64, SystemException> {
            Ok(2.0 * (self.side * self.side + 2.0 * self.side * self.depth))
        }
    }

    impl SquareOperations for Cube {}

    impl CubeOperations for Cube {
        fn volume(&self) -> Result<f64, SystemException> {
            Ok(self.side * self.side * self.depth)
        }
    }

    impl Shape for Circle {
        fn area(&self) -> Result<f64, SystemException> {
            Ok(std::f64::consts::PI * self.r * self.r)
        }
    }
}

/// The operations of `idl/value_refs.idl`'s valuetypes: `Wallet::spend`
/// withdraws from the account its `main` reference designates (a remote
/// call from inside a value's operation), raising `Overdrawn` when the
/// balance is short; a `Note` describes itself locally.
mod value_refs_values {
    use super::idl::value_refs::{
        wallet::SpendError, Describable, Note, Overdrawn, Wallet, WalletOperations,
    };
    use peregrine_orb::{CompletionStatus, SystemException, SystemExceptionKind};

    impl WalletOperations for Wallet {
        fn spend(&self, amount: i32) -> Result<i32, SpendError> {
            let Some(acct) = &self.main else {
                return Err(SpendError::System(SystemException::new(
                    SystemExceptionKind::BadInvOrder,
                    0,
                    CompletionStatus::No,
                )));
            };
            let balance = acct.balance()?;
            if balance < amount {
                return Err(Overdrawn {
                    missing: amount - balance,
                }
                .into());
            }
            acct.deposit(-amount)?;
            Ok(balance - amount)
        }
    }

    impl Describable for Note {
        fn describe(&self) -> Result<String, SystemException> {
            Ok(format!("note: {}", self.text))
        }
    }
}

pub use idl::test::echo::{FailError, Oops};
pub use idl::test::{
    evolved, Counter, CounterRef, CounterSkeleton, Echo, EchoRef, EchoSkeleton, Evolved,
    EvolvedRef, EvolvedSkeleton, Probe, ProbeRef, ProbeSkeleton, StrangerRef, Unknown,
};

/// `Test::Echo`: echoes, `fail(how)` (0: `Oops`, 1: `BAD_PARAM`, 2: a
/// panic, else `how`), counted oneway notes, `me` (set by [`server`]).
#[derive(Default)]
pub struct EchoImpl {
    /// `note`s received.
    pub notes: AtomicU32,
    /// Operations that reached the servant.
    pub calls: AtomicU32,
    /// What `me` returns.
    pub me: Mutex<Option<EchoRef>>,
}

impl EchoImpl {
    fn call(&self) {
        self.calls.fetch_add(1, Ordering::Relaxed);
    }
}

impl Echo for EchoImpl {
    fn echo_string(&self, s: &str) -> Result<String, SystemException> {
        self.call();
        Ok(s.to_owned())
    }

    fn echo_seq(&self, s: &[i32]) -> Result<Vec<i32>, SystemException> {
        self.call();
        Ok(s.to_vec())
    }

    fn echo_wstring(&self, s: &str) -> Result<String, SystemException> {
        self.call();
        Ok(s.to_owned())
    }

    fn fail(&self, how: i32) -> Result<i32, FailError> {
        self.call();
        match how {
            0 => Err(FailError::Oops(Oops {
                code: 42,
                why: "on purpose".into(),
            })),
            1 => Err(FailError::System(SystemException::new(
                SystemExceptionKind::BadParam,
                7,
                CompletionStatus::Yes,
            ))),
            2 => panic!("servant panics on purpose"),
            n => Ok(n),
        }
    }

    fn note(&self, _s: &str) -> Result<(), SystemException> {
        self.call();
        self.notes.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn sleep_ms(&self, ms: u32) -> Result<(), SystemException> {
        self.call();
        std::thread::sleep(Duration::from_millis(u64::from(ms)));
        Ok(())
    }

    fn notes(&self) -> Result<u32, SystemException> {
        self.call();
        Ok(self.notes.load(Ordering::SeqCst))
    }

    fn me(&self) -> Result<Option<EchoRef>, SystemException> {
        self.call();
        Ok(self.me.lock().unwrap().clone())
    }
}

/// `Test::Evolved`: `fail(3)` raises `Test::Unknown`, which `Echo`'s
/// stub does not know; 0 raises `Oops`, anything else is returned.
pub struct EvolvedImpl;

impl Evolved for EvolvedImpl {
    fn fail(&self, how: i32) -> Result<i32, evolved::FailError> {
        match how {
            0 => Err(evolved::FailError::Oops(Oops {
                code: 42,
                why: "on purpose".into(),
            })),
            3 => Err(evolved::FailError::Unknown(Unknown {})),
            n => Ok(n),
        }
    }
}

/// A new `Test::Echo` servant, ready to activate.
pub fn echo_servant() -> Arc<dyn Servant> {
    Arc::new(EchoSkeleton::new(EchoImpl::default()))
}

/// A server ORB on 127.0.0.1 with an active RootPOA manager and one Echo
/// (whose `me` returns its own reference).
pub fn server() -> (Orb, Arc<EchoSkeleton<EchoImpl>>, EchoRef) {
    let orb = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
    let root = orb.root_poa();
    root.manager().activate().unwrap();
    let imp = Arc::new(EchoSkeleton::new(EchoImpl::default()));
    let obj: EchoRef = root.servant_to_reference(&imp).unwrap();
    *imp.servant.me.lock().unwrap() = Some(obj.clone());
    (orb, imp, obj)
}

/// A client ORB (separate from the server's, so calls cross TCP).
pub fn client() -> Orb {
    Orb::builder()
        .call_timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// `obj` as seen through `orb`.
pub fn through(orb: &Orb, obj: &EchoRef) -> EchoRef {
    EchoRef::unchecked_narrow(orb.string_to_object(&obj.object().to_string()).unwrap())
}

/// Runs `f` on a thread and fails the test if it takes longer than `secs`
/// (a hang fails instead of blocking CI); a panic in `f` is re-raised.
pub fn bounded<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("test did not finish within {secs} s")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match h.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => panic!("test thread ended without a result"),
        },
    }
}

/// A complete GIOP 1.2 `echo_string(text)` request for object `key`, as a
/// raw client would send it (fault and load tests bypass the stub).
pub fn echo_request(key: &[u8], id: u32, text: &str) -> Vec<u8> {
    string_request(key, id, "echo_string", text, true)
}

/// A complete GIOP 1.2 request of operation `op` with one string
/// argument `arg` for object `key`: a oneway (no reply expected) unless
/// `reply`.
pub fn string_request(key: &[u8], id: u32, op: &str, arg: &str, reply: bool) -> Vec<u8> {
    use peregrine_cdr::{ByteOrder, GiopVersion, Writer};
    use peregrine_giop::{
        encode_request, RequestHeader, ResponseFlags, ServiceContexts, TargetAddress,
    };
    let mut w = Writer::new(ByteOrder::Little);
    let pending = encode_request(
        &mut w,
        GiopVersion::V1_2,
        &RequestHeader {
            request_id: id,
            response_flags: if reply {
                ResponseFlags::SyncWithTarget
            } else {
                ResponseFlags::None
            },
            target: TargetAddress::Key(key),
            operation: op,
            service_contexts: ServiceContexts::from_slice(&[]),
            requesting_principal: &[],
        },
    )
    .unwrap();
    w.write_string(arg).unwrap();
    pending.finish(&mut w).unwrap();
    w.into_vec()
}

/// The server's TCP address and the object key of `obj`.
pub fn address_and_key(obj: &EchoRef) -> (std::net::SocketAddr, Vec<u8>) {
    let p = obj.object().ior().iiop_profiles().unwrap().remove(0);
    let addr = format!("{}:{}", p.host, p.port).parse().unwrap();
    (addr, p.object_key)
}

/// Waits until `cond` holds, for at most `secs`; returns whether it did.
pub fn eventually(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + Duration::from_secs(secs);
    while std::time::Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// A closure run inside a [`Tagged`] servant's `hook` upcall.
pub type Hook = Box<dyn Fn() -> Result<String, SystemException> + Send + Sync>;

/// A `Probe` servant: `echo_string` answers `tag:s`, `hook` runs a
/// closure inside the upcall; dropping it sets `dropped` (shared by the
/// tests that watch when a servant is let go of).
pub struct Tagged {
    /// Prefix of `echo_string`'s answers.
    pub tag: String,
    /// Run by the `hook` operation.
    pub hook: Option<Hook>,
    /// Set when the servant is dropped.
    pub dropped: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for Tagged {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

impl Probe for Tagged {
    fn echo_string(&self, s: &str) -> Result<String, SystemException> {
        Ok(format!("{}:{s}", self.tag))
    }

    fn hook(&self, _: &str) -> Result<String, SystemException> {
        match &self.hook {
            Some(h) => h(),
            None => Ok(String::new()),
        }
    }
}

/// A [`Tagged`] servant running `hook`, and its drop flag.
pub fn tagged_probe(
    tag: &str,
    hook: Option<Hook>,
) -> (Arc<dyn Servant>, Arc<std::sync::atomic::AtomicBool>) {
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s = Arc::new(ProbeSkeleton::new(Tagged {
        tag: tag.into(),
        hook,
        dropped: dropped.clone(),
    }));
    (s, dropped)
}

/// A server ORB on an ephemeral loopback port with `model`, its root
/// POA's manager active.
pub fn server_orb_with(model: peregrine_orb::ThreadModel) -> Orb {
    let orb = Orb::builder()
        .listen("127.0.0.1", 0)
        .thread_model(model)
        .build()
        .unwrap();
    orb.root_poa().manager().activate().unwrap();
    orb
}

/// A server ORB on 127.0.0.1 configured by `-ORB` options (which must
/// all be taken out of the argument list), its root POA's manager
/// active, with one Echo.
pub fn server_with_args(options: &[&str]) -> (Orb, EchoRef) {
    let mut args: Vec<String> = std::iter::once("server")
        .chain(options.iter().copied())
        .map(String::from)
        .collect();
    let orb = Orb::builder()
        .listen("127.0.0.1", 0)
        .args(&mut args)
        .build()
        .unwrap();
    assert_eq!(args, ["server"], "every -ORB option taken out");
    let root = orb.root_poa();
    root.manager().activate().unwrap();
    let imp = Arc::new(EchoSkeleton::new(EchoImpl::default()));
    let obj: EchoRef = root.servant_to_reference(&imp).unwrap();
    (orb, obj)
}

/// A child POA `name` of `server`'s root POA with persistent, user-assigned
/// ids, under the root's manager.
pub fn user_id_poa(server: &Orb, name: &str) -> peregrine_orb::Poa {
    let root = server.root_poa();
    let p = peregrine_orb::Policies::persistent_user_ids();
    root.create_poa(name, Some(&root.manager()), p).unwrap()
}

/// Reads one GIOP message (header and body) from a raw client socket;
/// `None` at end of stream. Panics unless it starts with the GIOP magic
/// (a message must start where the last one ended).
pub fn read_giop_message(s: &mut std::net::TcpStream) -> Option<Vec<u8>> {
    let mut m = vec![0u8; 12];
    s.read_exact(&mut m).ok()?;
    assert_eq!(&m[..4], b"GIOP", "a message starts where the last ended");
    let raw: [u8; 4] = m[8..12].try_into().unwrap();
    let size = if m[6] & 1 != 0 {
        u32::from_le_bytes(raw)
    } else {
        u32::from_be_bytes(raw)
    } as usize;
    m.resize(12 + size, 0);
    s.read_exact(&mut m[12..]).ok()?;
    Some(m)
}

/// A TCP proxy to a server: every accepted connection is relayed to a new
/// connection to the server until [`Proxy::cut`].
pub struct Proxy {
    port: u16,
    accepted: Arc<AtomicUsize>,
    live: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    /// A proxy listening on 127.0.0.1 (any port) relaying to `server`.
    pub fn to(server: SocketAddr) -> Proxy {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let live = Arc::new(Mutex::new(Vec::new()));
        let (a, lv) = (accepted.clone(), live.clone());
        std::thread::spawn(move || {
            for c in l.incoming() {
                let Ok(c) = c else { return };
                let Ok(up) = TcpStream::connect(server) else {
                    return;
                };
                let _ = c.set_nodelay(true);
                let _ = up.set_nodelay(true);
                {
                    let mut lv = lv.lock().unwrap();
                    lv.push(c.try_clone().unwrap());
                    lv.push(up.try_clone().unwrap());
                }
                a.fetch_add(1, Ordering::SeqCst);
                let (c2, up2) = (c.try_clone().unwrap(), up.try_clone().unwrap());
                std::thread::spawn(move || pump(c, up));
                std::thread::spawn(move || pump(up2, c2));
            }
        });
        Proxy {
            port,
            accepted,
            live,
        }
    }

    /// Closes every relayed connection (both sides).
    pub fn cut(&self) {
        for s in self.live.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16 << 10];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}

/// `obj` as seen through `orb`, reached via the proxy on `port` (a GIOP
/// 1.2 reference with the server's code sets, so calls take the lean
/// path).
pub fn via(orb: &Orb, obj: &EchoRef, port: u16) -> EchoRef {
    use peregrine_giop::IorBuilder;
    use peregrine_orb::ObjectRef;
    let ior = obj.object().ior();
    let key = ior.iiop_profiles().unwrap().remove(0).object_key;
    let mut b = IorBuilder::new(ior.type_id.clone())
        .endpoint("127.0.0.1", port)
        .object_key(key);
    if let Some(cs) = ior.code_sets() {
        b = b.code_sets(cs);
    }
    EchoRef::unchecked_narrow(ObjectRef::from_ior(orb, b.build()))
}
