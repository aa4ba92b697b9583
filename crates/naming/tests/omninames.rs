//! Every `NamingClient` helper against a real naming service: omniNames
//! (Debian's `omniorb-nameserver`, installed by scripts/install-deps.sh),
//! started per test on a free port with its own data directory, holding
//! references to objects served by a Peregrine server ORB.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine::{ObjectRef, Orb, Servant, SystemException, SystemExceptionKind};
use peregrine_naming::cos_naming::{BindingIterator, BindingIteratorSkeleton};
use peregrine_naming::{
    to_string, Binding, BindingIteratorRef, BindingList, BindingType, NameComponent, NamingClient,
    NamingContextRef, NamingError, NotFoundReason,
};

/// How long omniNames may take to answer after it is started.
const STARTUP: Duration = Duration::from_secs(15);

/// A running omniNames, killed (and its data directory removed) when
/// dropped, also when a test panics.
struct OmniNames {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl OmniNames {
    /// Starts omniNames on a free loopback port; panics with the way to
    /// install it if it is not there.
    fn start() -> OmniNames {
        let exe = find_omninames().unwrap_or_else(|| {
            panic!(
                "omniNames not found (PATH, /usr/bin): run scripts/install-deps.sh, \
                 which installs Debian's omniorb-nameserver"
            )
        });
        // The port is free when asked, but another process may take it
        // before omniNames binds it: then omniNames exits, and another
        // port is tried.
        for _ in 0..3 {
            let dir = fresh_dir();
            let port = free_port();
            let child = Command::new(&exe)
                .args(["-start", &port.to_string(), "-always", "-nohostname"])
                .arg("-datadir")
                .arg(&dir)
                .arg("-errlog")
                .arg(dir.join("err.log"))
                // The references it hands out name the loopback address,
                // whatever this machine's host name resolves to.
                .args(["-ORBendPointPublish", "giop:tcp:127.0.0.1:"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("spawning {}: {e}", exe.display()));
            let mut ns = OmniNames { child, port, dir };
            if ns.wait_ready() {
                return ns;
            }
        }
        panic!("omniNames did not start on any of three free ports");
    }

    /// Waits (bounded) until the root context answers `_is_a`; false if
    /// omniNames exited (its port was taken), panics on timeout.
    fn wait_ready(&mut self) -> bool {
        let orb = client_orb(None);
        let deadline = Instant::now() + STARTUP;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                eprintln!("omniNames exited ({status}): {}", self.errlog());
                return false;
            }
            let obj = orb
                .string_to_object(&self.corbaloc())
                .expect("corbaloc parses")
                .with_timeout(Duration::from_secs(1));
            // The log line proves that the service answering is this
            // omniNames, not one of a concurrent test given the same port.
            if NamingClient::from_object(obj).is_ok() && self.errlog().contains("Root context is") {
                return true;
            }
            assert!(
                Instant::now() < deadline,
                "omniNames on port {} did not answer within {STARTUP:?}: {}",
                self.port,
                self.errlog()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn corbaloc(&self) -> String {
        format!("corbaloc::127.0.0.1:{}/NameService", self.port)
    }

    fn errlog(&self) -> String {
        std::fs::read_to_string(self.dir.join("err.log")).unwrap_or_default()
    }

    /// A client ORB configured with this service as `NameService`, and
    /// the naming client of its root context.
    fn client(&self) -> (Orb, NamingClient) {
        let orb = client_orb(Some(&self.corbaloc()));
        let naming = NamingClient::from_orb(&orb).expect("NamingClient::from_orb");
        (orb, naming)
    }
}

impl Drop for OmniNames {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn find_omninames() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join("omniNames"))
        .find(|p| p.is_file())
}

fn fresh_dir() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "peregrine-naming-omninames-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("data directory");
    dir
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A client ORB whose calls cannot hang a test.
fn client_orb(name_service: Option<&str>) -> Orb {
    let mut b = Orb::builder()
        .call_timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(2))
        .connect_backoff(Duration::from_millis(10), Duration::from_millis(100));
    if let Some(url) = name_service {
        b = b.init_ref("NameService", url);
    }
    b.build().expect("client ORB")
}

/// A servant that says who it is through the one interface at hand: a
/// `CosNaming::BindingIterator` whose `next_one` returns its label.
struct Labelled(&'static str);

impl BindingIterator for Labelled {
    fn next_one(&self) -> Result<(bool, Binding), SystemException> {
        Ok((
            true,
            Binding {
                binding_name: vec![NameComponent::new(self.0, "label")],
                binding_type: BindingType::Nobject,
            },
        ))
    }

    fn next_n(&self, _how_many: u32) -> Result<(bool, BindingList), SystemException> {
        Ok((false, Vec::new()))
    }

    fn destroy(&self) -> Result<(), SystemException> {
        Ok(())
    }
}

/// A Peregrine server ORB with one `Labelled` object per label, shut
/// down when dropped.
struct Server {
    orb: Orb,
    objects: Vec<ObjectRef>,
}

impl Server {
    fn start(labels: &[&'static str]) -> Server {
        let orb = Orb::builder()
            .listen("127.0.0.1", 0)
            .build()
            .expect("server ORB");
        let poa = orb.root_poa();
        poa.manager().activate().expect("activate");
        let objects = labels
            .iter()
            .map(|l| {
                let servant: Arc<dyn Servant> = Arc::new(BindingIteratorSkeleton::new(Labelled(l)));
                poa.servant_to_object(&servant).expect("activate object")
            })
            .collect();
        Server { orb, objects }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.orb.shutdown(true);
    }
}

/// The label of a `Labelled` object, asked through a reference resolved
/// from the naming service (so the call crosses to the server ORB).
fn label_of(naming: &NamingClient, name: &str) -> String {
    let it: BindingIteratorRef = naming.resolve_as(name).expect("resolve_as");
    let (more, b) = it.next_one().expect("next_one on the resolved object");
    assert!(more);
    b.binding_name[0].id.clone()
}

fn expect_not_found(r: Result<ObjectRef, NamingError>, why: NotFoundReason, rest: &str) {
    match r {
        Err(NamingError::NotFound {
            why: w,
            rest_of_name,
        }) => assert_eq!((w, to_string(&rest_of_name).as_str()), (why, rest)),
        other => panic!("expected NotFound ({why:?}) at {rest}, got {other:?}"),
    }
}

#[test]
fn bind_rebind_resolve_unbind_a_peregrine_object() {
    let ns = OmniNames::start();
    let server = Server::start(&["first", "second"]);
    let (first, second) = (&server.objects[0], &server.objects[1]);
    let (_orb, naming) = ns.client();

    naming.bind_str("greeter.service", first).unwrap();
    let got = naming.resolve_str("greeter.service").unwrap();
    assert!(got.is_equivalent(first));
    assert_eq!(label_of(&naming, "greeter.service"), "first");

    // bind does not replace; the error names the binding.
    match naming.bind_str("greeter.service", second) {
        Err(e @ NamingError::AlreadyBound { .. }) => {
            assert_eq!(e.to_string(), "AlreadyBound `greeter.service`")
        }
        other => panic!("expected AlreadyBound, got {other:?}"),
    }
    assert_eq!(label_of(&naming, "greeter.service"), "first");

    // rebind does.
    naming.rebind_str("greeter.service", second).unwrap();
    assert_eq!(label_of(&naming, "greeter.service"), "second");

    // A typed resolve checks the interface with the object itself.
    match naming.resolve_as::<NamingContextRef>("greeter.service") {
        Err(NamingError::WrongType { name, expected }) => {
            assert_eq!(name, "greeter.service");
            assert_eq!(expected, "IDL:omg.org/CosNaming/NamingContext:1.0");
        }
        other => panic!("expected WrongType, got {other:?}"),
    }
    // The kind is part of the name.
    expect_not_found(
        naming.resolve_str("greeter"),
        NotFoundReason::MissingNode,
        "greeter",
    );

    naming.unbind_str("greeter.service").unwrap();
    let e = naming.resolve_str("greeter.service").unwrap_err();
    assert_eq!(
        e.to_string(),
        "NotFound (missing_node) at `greeter.service`"
    );
    assert!(naming
        .unbind_str("greeter.service")
        .unwrap_err()
        .is_not_found());
    // A name that does not parse fails before any call.
    match naming.bind_str("a//b", first) {
        Err(NamingError::InvalidName { name }) => assert_eq!(name, "a//b"),
        other => panic!("expected InvalidName, got {other:?}"),
    }
}

#[test]
fn nested_contexts_through_rebind_path_and_not_found_reasons() {
    let ns = OmniNames::start();
    let server = Server::start(&["deep", "deeper"]);
    let (_orb, naming) = ns.client();

    // The contexts on the way are created...
    naming
        .rebind_path("apps/demo/greeter.service", &server.objects[0])
        .unwrap();
    assert_eq!(label_of(&naming, "apps/demo/greeter.service"), "deep");
    let apps = naming.resolve_context("apps").unwrap();
    assert_eq!(label_of(&apps, "demo/greeter.service"), "deep");
    // ...and reused: a second path through them, and a rebind.
    naming
        .rebind_path("apps/demo/greeter.service", &server.objects[1])
        .unwrap();
    naming
        .rebind_path("apps/other/x", &server.objects[0])
        .unwrap();
    assert_eq!(label_of(&naming, "apps/demo/greeter.service"), "deeper");
    assert_eq!(label_of(&naming, "apps/other/x"), "deep");
    let mut in_apps: Vec<(String, bool)> = apps
        .list()
        .unwrap()
        .map(|b| b.map(|b| (b.name(), b.is_context())))
        .collect::<Result<_, _>>()
        .unwrap();
    in_apps.sort();
    assert_eq!(
        in_apps,
        [("demo".to_string(), true), ("other".to_string(), true)]
    );

    // create_path returns existing and new contexts alike.
    let demo = naming.create_path("apps/demo").unwrap();
    assert_eq!(label_of(&demo, "greeter.service"), "deeper");
    let fresh = naming.create_path("apps/new/one").unwrap();
    fresh.bind_str("leaf", &server.objects[0]).unwrap();
    assert_eq!(label_of(&naming, "apps/new/one/leaf"), "deep");

    // NotFound says why and where resolution stopped.
    expect_not_found(
        naming.resolve_str("apps/missing/greeter.service"),
        NotFoundReason::MissingNode,
        "missing/greeter.service",
    );
    let e = naming
        .resolve_str("apps/demo/greeter.service/below")
        .unwrap_err();
    assert!(
        matches!(
            e,
            NamingError::NotFound {
                why: NotFoundReason::NotContext,
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().starts_with("NotFound (not_context) at `"),
        "{e}"
    );
    // A path through an object is refused, not papered over.
    let e = naming
        .rebind_path("apps/demo/greeter.service/below", &server.objects[0])
        .unwrap_err();
    assert!(e.is_not_found(), "{e}");
    match naming.create_path("apps/demo/greeter.service") {
        Err(NamingError::WrongType { name, .. }) => {
            assert_eq!(name, "apps/demo/greeter.service")
        }
        other => panic!("expected WrongType, got {other:?}"),
    }
    // bind_new_context does not reuse.
    assert!(matches!(
        naming.bind_new_context_str("apps"),
        Err(NamingError::AlreadyBound { .. })
    ));
}

#[test]
fn list_follows_the_binding_iterator_past_the_first_batch() {
    let ns = OmniNames::start();
    let server = Server::start(&["listed"]);
    let (_orb, naming) = ns.client();
    let ctx = naming.create_path("many").unwrap();

    let mut expected: Vec<(String, bool)> = Vec::new();
    for i in 0..11 {
        let name = format!("obj{i:02}.kind");
        ctx.bind_str(&name, &server.objects[0]).unwrap();
        expected.push((name, false));
    }
    for i in 0..2 {
        let name = format!("ctx{i}");
        ctx.bind_new_context_str(&name).unwrap();
        expected.push((name, true));
    }
    expected.sort();

    let listed = |batch: u32| {
        let mut v: Vec<(String, bool)> = ctx
            .list_in_batches(batch)
            .unwrap()
            .map(|b| b.map(|b| (b.name(), b.is_context())))
            .collect::<Result<_, _>>()
            .unwrap();
        v.sort();
        v
    };
    // 13 bindings in batches of 3: the first from `list`, four more
    // `next_n` calls on the iterator, and the one that says "no more".
    assert_eq!(listed(3), expected);
    assert_eq!(listed(1), expected);
    // One batch large enough for all: no iterator at all.
    assert_eq!(listed(100), expected);
    // An abandoned listing (iterator destroyed on drop) leaves the
    // context usable.
    let mut partial = ctx.list_in_batches(2).unwrap();
    assert!(partial.next().unwrap().is_ok());
    drop(partial);
    assert_eq!(ctx.list().unwrap().count(), expected.len());
    // A listed name resolves to what was bound.
    assert_eq!(label_of(&ctx, "obj07.kind"), "listed");
}

#[test]
fn corbaname_urls_resolve_through_the_service() {
    let ns = OmniNames::start();
    let server = Server::start(&["named"]);
    let (orb, naming) = ns.client();
    naming.rebind_path("a/b.kind", &server.objects[0]).unwrap();

    let url = format!("corbaname::127.0.0.1:{}#a/b.kind", ns.port);
    let obj = orb.string_to_object(&url).unwrap();
    assert!(!obj.is_nil());
    assert!(obj.is_equivalent(&server.objects[0]));
    let it = BindingIteratorRef::narrow(obj)
        .unwrap()
        .expect("a BindingIterator");
    assert_eq!(it.next_one().unwrap().1.binding_name[0].id, "named");

    // The context itself, without a name.
    let root = orb
        .string_to_object(&format!("corbaname::127.0.0.1:{}", ns.port))
        .unwrap();
    assert_eq!(
        label_of(&NamingClient::from_object(root).unwrap(), "a/b.kind"),
        "named"
    );

    // A missing name is a BAD_PARAM from string_to_object.
    let e = orb
        .string_to_object(&format!("corbaname::127.0.0.1:{}#a/missing", ns.port))
        .unwrap_err();
    assert_eq!(e.kind, SystemExceptionKind::BadParam, "{e}");
}

#[test]
fn from_orb_needs_a_name_service_reference() {
    let ns = OmniNames::start();

    // -ORBInitRef on the command line.
    let mut args = vec![
        "prog".to_string(),
        "-ORBInitRef".to_string(),
        format!("NameService={}", ns.corbaloc()),
        "rest".to_string(),
    ];
    let orb = Orb::builder()
        .call_timeout(Duration::from_secs(10))
        .args(&mut args)
        .build()
        .unwrap();
    assert_eq!(args, ["prog", "rest"]);
    let naming = NamingClient::from_orb(&orb).unwrap();
    assert_eq!(naming.list().unwrap().count(), 0);

    // Not configured: a typed error that says how to configure it.
    let bare = client_orb(None);
    let e = NamingClient::from_orb(&bare).unwrap_err();
    assert!(matches!(e, NamingError::NotConfigured), "{e:?}");
    assert!(e.to_string().contains("-ORBInitRef NameService="), "{e}");

    // Configured, but nothing listens there: the system exception. Port
    // 1 (tcpmux) is refused on any machine that runs these tests; a port
    // freed by this test could be taken by another test's omniNames.
    let gone = client_orb(Some("corbaloc::127.0.0.1:1/NameService"));
    match NamingClient::from_orb(&gone) {
        Err(NamingError::System(e)) => {
            assert_eq!(e.kind, SystemExceptionKind::Transient, "{e}")
        }
        other => panic!("expected TRANSIENT, got {other:?}"),
    }

    // An object that is not a naming context.
    let server = Server::start(&["plain"]);
    let obj = orb
        .string_to_object(&server.orb.object_to_string(&server.objects[0]))
        .unwrap();
    assert!(matches!(
        NamingClient::from_object(obj),
        Err(NamingError::WrongType { .. })
    ));
}
