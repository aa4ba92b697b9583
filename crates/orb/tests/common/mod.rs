//! A hand-written stub/skeleton pair for a test interface (to be replaced
//! by generated code once peregrine-idl-rust lands):
//!
//! ```idl
//! module Test {
//!   interface Echo {
//!     exception Oops { long code; string why; };
//!     string echo_string(in string s);
//!     sequence<long> echo_seq(in sequence<long> s);
//!     wstring echo_wstring(in wstring s);
//!     long fail(in long how) raises (Oops); // 0: Oops, 1: BAD_PARAM, 2: panic
//!     oneway void note(in string s);
//!     void sleep_ms(in unsigned long ms);
//!     unsigned long notes();
//!     Echo me();
//!   };
//! };
//! ```
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use peregrine_cdr::{Decode, Encode};
use peregrine_orb::{
    CompletionStatus, ObjectRef, Orb, Servant, ServerRequest, SystemException, SystemExceptionKind,
};

pub const ECHO_ID: &str = "IDL:Test/Echo:1.0";
pub const OOPS_ID: &str = "IDL:Test/Echo/Oops:1.0";

/// `Echo::Oops`.
#[derive(Debug, Clone, PartialEq)]
pub struct Oops {
    pub code: i32,
    pub why: String,
}

/// The error type of `fail`.
#[derive(Debug, Clone, PartialEq)]
pub enum FailError {
    Oops(Oops),
    System(SystemException),
}

impl From<SystemException> for FailError {
    fn from(e: SystemException) -> Self {
        FailError::System(e)
    }
}

/// Client stub.
#[derive(Clone, Debug)]
pub struct EchoRef(pub ObjectRef);

impl EchoRef {
    pub fn echo_string(&self, s: &str) -> Result<String, SystemException> {
        self.0.invoke(
            "echo_string",
            |w| w.write_string(s),
            |r| r.read_string(),
            |_, _| None::<peregrine_cdr::Result<SystemException>>,
        )
    }

    #[allow(clippy::redundant_closure)] // a fn path is not higher-ranked over the reader lifetime
    pub fn echo_seq(&self, s: &[i32]) -> Result<Vec<i32>, SystemException> {
        self.0.invoke(
            "echo_seq",
            |w| s.encode(w),
            |r| Vec::<i32>::decode(r),
            |_, _| None::<peregrine_cdr::Result<SystemException>>,
        )
    }

    pub fn echo_wstring(&self, s: &str) -> Result<String, SystemException> {
        self.0.invoke(
            "echo_wstring",
            |w| w.write_wstring(s),
            |r| r.read_wstring(),
            |_, _| None::<peregrine_cdr::Result<SystemException>>,
        )
    }

    pub fn fail(&self, how: i32) -> Result<i32, FailError> {
        self.0.invoke(
            "fail",
            |w| {
                w.write_i32(how);
                Ok(())
            },
            |r| r.read_i32(),
            |id, r| {
                (id == OOPS_ID).then(|| {
                    Ok(FailError::Oops(Oops {
                        code: r.read_i32()?,
                        why: r.read_string()?,
                    }))
                })
            },
        )
    }

    pub fn note(&self, s: &str) -> Result<(), SystemException> {
        self.0.invoke_oneway("note", |w| w.write_string(s))
    }

    pub fn sleep_ms(&self, ms: u32) -> Result<(), SystemException> {
        self.0.invoke(
            "sleep_ms",
            |w| {
                w.write_u32(ms);
                Ok(())
            },
            |_| Ok(()),
            |_, _| None::<peregrine_cdr::Result<SystemException>>,
        )
    }

    pub fn notes(&self) -> Result<u32, SystemException> {
        self.0.invoke(
            "notes",
            |_| Ok(()),
            |r| r.read_u32(),
            |_, _| None::<peregrine_cdr::Result<SystemException>>,
        )
    }

    pub fn me(&self) -> Result<Option<EchoRef>, SystemException> {
        let orb = self.0.orb().clone();
        self.0.invoke(
            "me",
            |_| Ok(()),
            |r| Ok(ObjectRef::decode(r, &orb)?.map(EchoRef)),
            |_, _| None::<peregrine_cdr::Result<SystemException>>,
        )
    }
}

/// Servant.
#[derive(Default)]
pub struct EchoImpl {
    pub notes: AtomicU32,
    pub calls: AtomicU32,
    pub me: std::sync::Mutex<Option<ObjectRef>>,
}

impl Servant for EchoImpl {
    fn repository_id(&self) -> &'static str {
        ECHO_ID
    }

    fn is_a(&self, repo_id: &str) -> bool {
        repo_id == ECHO_ID
    }

    fn dispatch(&self, req: &mut ServerRequest<'_>) -> Result<(), SystemException> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        match req.operation() {
            "echo_string" => {
                let s = req.args().read_str()?;
                let s = s.into_owned();
                req.reply().write_string(&s)?;
            }
            "echo_seq" => {
                let v = Vec::<i32>::decode(req.args())?;
                v.encode(req.reply())?;
            }
            "echo_wstring" => {
                let s = req.args().read_wstring()?;
                req.reply().write_wstring(&s)?;
            }
            "fail" => match req.args().read_i32()? {
                0 => {
                    let w = req.user_exception(OOPS_ID);
                    w.write_i32(42);
                    w.write_string("on purpose")?;
                }
                1 => {
                    return Err(SystemException::new(
                        SystemExceptionKind::BadParam,
                        7,
                        CompletionStatus::Yes,
                    ))
                }
                3 => {
                    req.user_exception("IDL:Test/Unknown:1.0");
                }
                2 => panic!("servant panics on purpose"),
                n => req.reply().write_i32(n),
            },
            "note" => {
                let _ = req.args().read_str()?;
                self.notes.fetch_add(1, Ordering::SeqCst);
            }
            "sleep_ms" => {
                let ms = req.args().read_u32()?;
                std::thread::sleep(Duration::from_millis(u64::from(ms)));
            }
            "notes" => req.reply().write_u32(self.notes.load(Ordering::SeqCst)),
            "me" => {
                let me = self.me.lock().unwrap().clone();
                ObjectRef::encode_opt(me.as_ref(), req.reply())?;
            }
            _ => {
                return Err(SystemException::new(
                    SystemExceptionKind::BadOperation,
                    0,
                    CompletionStatus::No,
                ))
            }
        }
        Ok(())
    }
}

/// A server ORB on 127.0.0.1 with an active RootPOA manager and one Echo.
pub fn server() -> (Orb, Arc<EchoImpl>, EchoRef) {
    let orb = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
    let root = orb.root_poa();
    root.manager().activate().unwrap();
    let imp = Arc::new(EchoImpl::default());
    let s: Arc<dyn Servant> = imp.clone();
    let obj = root.servant_to_reference(&s).unwrap();
    *imp.me.lock().unwrap() = Some(obj.clone());
    (orb, imp, EchoRef(obj))
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
    EchoRef(orb.string_to_object(&obj.0.to_string()).unwrap().unwrap())
}

/// Runs `f` on a thread and fails the test if it takes longer than `secs`.
pub fn bounded<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("test did not finish within {secs} s")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("test thread panicked"),
    }
}

/// A complete GIOP 1.2 `echo_string(text)` request for object `key`, as a
/// raw client would send it (fault and load tests bypass the stub).
pub fn echo_request(key: &[u8], id: u32, text: &str) -> Vec<u8> {
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
            response_flags: ResponseFlags::SyncWithTarget,
            target: TargetAddress::Key(key),
            operation: "echo_string",
            service_contexts: ServiceContexts::from_slice(&[]),
            requesting_principal: &[],
        },
    )
    .unwrap();
    w.write_string(text).unwrap();
    pending.finish(&mut w).unwrap();
    w.into_vec()
}

/// The server's TCP address and the object key of `obj`.
pub fn address_and_key(obj: &EchoRef) -> (std::net::SocketAddr, Vec<u8>) {
    let p = obj.0.ior().iiop_profiles().unwrap().remove(0);
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
