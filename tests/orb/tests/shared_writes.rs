//! Several threads writing on one client connection whose write lock was
//! biased to another thread (peregrine-orb's biased_lock.rs): the first
//! thread that writes on a connection takes the lock without atomic
//! read-modify-writes until another thread writes, which revokes the
//! bias once. Writes must never interleave, before, during or after the
//! revocation: large messages (several MiB, more than a socket buffer,
//! fragmented and gathered) and many small ones from several threads,
//! through a real server whose servant checks every byte, and through a
//! raw server that does not read until the owner is blocked in its write
//! and checks the framing of everything it then reads.

use std::collections::HashSet;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::time::Duration;

use peregrine_cdr::{PrimTail, Writer};
use peregrine_orb::{ObjectRef, Orb, Servant, ServerRequest, SystemException};
use peregrine_orb_tests::{bounded, client, read_giop_message};

/// Large enough to exceed the loopback socket buffers (so a write takes
/// several system calls) and the default fragment size (1 MiB).
const BIG: usize = 4 << 20;

/// The byte `i` of the payload of call `seq` of thread `t`.
fn pattern(t: u32, seq: u32, i: usize) -> u8 {
    ((i as u32).wrapping_mul(2_654_435_761) >> 24) as u8 ^ (t * 37) as u8 ^ (seq * 11) as u8
}

fn payload(t: u32, seq: u32, len: usize) -> Vec<u8> {
    (0..len).map(|i| pattern(t, seq, i)).collect()
}

fn intact(t: u32, seq: u32, data: &[u8]) -> bool {
    data.iter()
        .enumerate()
        .all(|(i, &b)| b == pattern(t, seq, i))
}

/// `put(thread, seq, octets)` (oneway or twoway) checks the octets and
/// records the call; a twoway returns the length; `count` returns
/// (calls recorded, calls with damaged data).
#[derive(Default)]
struct Checker {
    seen: Mutex<HashSet<(u32, u32)>>,
    bad: AtomicU32,
}

impl Servant for Checker {
    fn repository_id(&self) -> &'static str {
        "IDL:Test/Checker:1.0"
    }

    fn is_a(&self, repo_id: &str) -> bool {
        repo_id == self.repository_id()
    }

    fn dispatch(&self, req: &mut ServerRequest<'_>) -> Result<(), SystemException> {
        match req.operation() {
            "put" => {
                let a = req.args();
                let (t, seq) = (a.read_u32(), a.read_u32());
                let data = a.read_octet_seq();
                let (Ok(t), Ok(seq), Ok(data)) = (t, seq, data) else {
                    self.bad.fetch_add(1, Ordering::SeqCst);
                    return Ok(());
                };
                let (ok, len) = (intact(t, seq, data) && a.is_empty(), data.len());
                if !ok || !self.seen.lock().unwrap().insert((t, seq)) {
                    self.bad.fetch_add(1, Ordering::SeqCst);
                }
                req.reply().write_u32(len as u32);
                Ok(())
            }
            "count" => {
                let n = self.seen.lock().unwrap().len() as u32;
                let bad = self.bad.load(Ordering::SeqCst);
                let w = req.reply();
                w.write_u32(n);
                w.write_u32(bad);
                Ok(())
            }
            _ => Err(SystemException::new(
                peregrine_orb::SystemExceptionKind::BadOperation,
                0,
                peregrine_orb::CompletionStatus::No,
            )),
        }
    }
}

/// A server ORB with a `Checker`, and its reference as seen by `client`.
fn checker_server(client: &Orb) -> (Orb, ObjectRef) {
    let orb = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
    let root = orb.root_poa();
    root.manager().activate().unwrap();
    let s: Arc<dyn Servant> = Arc::new(Checker::default());
    let obj = root.servant_to_object(&s).unwrap();
    let seen = client.string_to_object(&obj.to_string()).unwrap();
    (orb, seen)
}

fn head(t: u32, seq: u32) -> impl FnOnce(&mut Writer) -> peregrine_cdr::Result<()> {
    move |w| {
        w.write_u32(t);
        w.write_u32(seq);
        Ok(())
    }
}

/// One `put` of `len` bytes, in one of four ways: twoway or oneway, the
/// payload gathered from the caller's memory or copied into the request.
fn put(obj: &ObjectRef, t: u32, seq: u32, len: usize, how: u32) {
    let data = payload(t, seq, len);
    match how % 4 {
        0 => {
            let n: u32 = obj
                .invoke_with_tail(
                    "put",
                    head(t, seq),
                    &PrimTail(&data[..]),
                    |r| r.read_u32(),
                    |_, _| None::<peregrine_cdr::Result<SystemException>>,
                )
                .unwrap();
            assert_eq!(n as usize, len);
        }
        1 => obj
            .invoke_oneway_with_tail("put", head(t, seq), &PrimTail(&data[..]))
            .unwrap(),
        2 => {
            let n: u32 = obj
                .invoke(
                    "put",
                    |w| {
                        head(t, seq)(w)?;
                        w.write_octet_seq(&data)
                    },
                    |r| r.read_u32(),
                    |_, _| None::<peregrine_cdr::Result<SystemException>>,
                )
                .unwrap();
            assert_eq!(n as usize, len);
        }
        _ => obj
            .invoke_oneway("put", |w| {
                head(t, seq)(w)?;
                w.write_octet_seq(&data)
            })
            .unwrap(),
    }
}

/// (calls recorded, damaged calls), once the server has seen `want`
/// calls (oneways written before may still be on their way).
fn count(obj: &ObjectRef, want: u32) -> (u32, u32) {
    loop {
        let (n, bad): (u32, u32) = obj
            .invoke(
                "count",
                |_| Ok(()),
                |r| Ok((r.read_u32()?, r.read_u32()?)),
                |_, _| None::<peregrine_cdr::Result<SystemException>>,
            )
            .unwrap();
        if n >= want || bad > 0 {
            return (n, bad);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The calls of one thread: every fourth a large one, the rest small,
/// in all four ways.
fn calls(obj: &ObjectRef, t: u32, n: u32) {
    for seq in 0..n {
        let len = if seq % 4 == 0 {
            BIG + seq as usize
        } else {
            1 + (seq as usize * 37) % 300
        };
        put(obj, t, seq, len, seq / 4 + seq);
    }
}

#[test]
fn threads_share_a_connection_biased_to_another() {
    bounded(240, || {
        let orb = client();
        let (_server, obj) = checker_server(&orb);
        // The main thread writes first: the bias is its.
        put(&obj, 0, 0, 10, 1);
        put(&obj, 0, 1, 10, 0);
        const THREADS: u32 = 4;
        const CALLS: u32 = 24;
        let start = Arc::new(Barrier::new(THREADS as usize + 1));
        let hs: Vec<_> = (1..=THREADS)
            .map(|t| {
                let (obj, start) = (obj.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    calls(&obj, t, CALLS);
                })
            })
            .collect();
        start.wait();
        // The former owner keeps writing while the others revoke its bias
        // and write (its own calls from seq 2 on).
        for seq in 2..CALLS {
            put(&obj, 0, seq, 1 + (seq as usize % 4) * BIG / 3, seq);
        }
        for h in hs {
            h.join().unwrap();
        }
        let want = CALLS * (THREADS + 1);
        assert_eq!(count(&obj, want), (want, 0));
    });
}

#[test]
fn one_thread_after_revocation() {
    bounded(120, || {
        let orb = client();
        let (_server, obj) = checker_server(&orb);
        put(&obj, 0, 0, 10, 1);
        // Another thread writes once (revoking the main thread's bias) and
        // ends.
        let o = obj.clone();
        std::thread::spawn(move || put(&o, 1, 0, 100, 1))
            .join()
            .unwrap();
        // The main thread alone again, on the mutex now.
        for seq in 1..2000 {
            let len = if seq % 500 == 0 {
                BIG
            } else {
                seq as usize % 200
            };
            put(&obj, 0, seq, len, seq);
        }
        assert_eq!(count(&obj, 2001), (2001, 0));
    });
}

// ---- A raw server that reads only when told to ----

const MARK: &[u8; 8] = b"BIASTEST";

fn u32_at(m: &[u8], at: usize, little: bool) -> u32 {
    let b: [u8; 4] = m[at..at + 4].try_into().unwrap();
    if little {
        u32::from_le_bytes(b)
    } else {
        u32::from_be_bytes(b)
    }
}

/// A server that accepts one connection, waits for `gate`, then reads
/// requests (a Request and the Fragments right after it, which must
/// follow it directly: the client writes a message's fragments under
/// one lock) and reports each call's (thread, seq, intact) found after
/// [`MARK`].
fn gated_recorder() -> (
    SocketAddr,
    mpsc::Sender<()>,
    mpsc::Receiver<(u32, u32, bool)>,
) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (gate_tx, gate) = mpsc::channel();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = l.accept() else { return };
        if gate.recv().is_err() {
            return;
        }
        while let Some(first) = read_giop_message(&mut s) {
            assert_eq!(first[7], 0, "a Request, not a stray Fragment");
            let little = first[6] & 1 != 0;
            let id = u32_at(&first, 12, little);
            let mut whole = first.clone();
            let mut more = first[6] & 2 != 0;
            while more {
                let f = read_giop_message(&mut s).expect("the rest of a fragmented request");
                assert_eq!(f[7], 7, "a Fragment follows its Request");
                assert_eq!(u32_at(&f, 12, little), id, "fragments of one request");
                whole.extend_from_slice(&f[16..]);
                more = f[6] & 2 != 0;
            }
            let at = whole
                .windows(MARK.len())
                .position(|w| w == MARK)
                .expect("the marker");
            let mut p = at + MARK.len();
            let t = u32_at(&whole, p, little);
            let seq = u32_at(&whole, p + 4, little);
            let len = u32_at(&whole, p + 8, little) as usize;
            p += 12;
            let ok = whole.len() == p + len && intact(t, seq, &whole[p..]);
            if tx.send((t, seq, ok)).is_err() {
                return;
            }
        }
    });
    (addr, gate_tx, rx)
}

/// A oneway `put` to the raw server (gathered for odd `seq`).
fn raw_put(obj: &ObjectRef, t: u32, seq: u32, len: usize) {
    let data = payload(t, seq, len);
    let args = move |w: &mut Writer| {
        // 8-aligned after the request header, like every body.
        w.write_bytes(MARK);
        w.write_u32(t);
        w.write_u32(seq);
        Ok(())
    };
    if seq % 2 == 1 {
        obj.invoke_oneway_with_tail("put", args, &PrimTail(&data[..]))
            .unwrap();
    } else {
        obj.invoke_oneway("put", |w| {
            args(w)?;
            w.write_octet_seq(&data)
        })
        .unwrap();
    }
}

#[test]
fn revocation_while_the_owner_is_blocked_writing() {
    bounded(240, || {
        let (addr, gate, got) = gated_recorder();
        let orb = client();
        let obj = orb
            .string_to_object(&format!("corbaloc:iiop:1.2@{addr}/Raw"))
            .unwrap();
        let owner_started = Arc::new(Barrier::new(4));
        // The owner: a small oneway takes the bias, then large ones fill
        // the socket buffers (nobody reads yet) and block it inside its
        // biased write.
        let owner = {
            let (obj, b) = (obj.clone(), owner_started.clone());
            std::thread::spawn(move || {
                raw_put(&obj, 0, 0, 16);
                b.wait();
                for seq in 1..4 {
                    raw_put(&obj, 0, seq, 2 * BIG + seq as usize);
                }
            })
        };
        // Others revoke the bias while the owner is (most likely) blocked,
        // and must wait for it before they write.
        let others: Vec<_> = (1..=2u32)
            .map(|t| {
                let (obj, b) = (obj.clone(), owner_started.clone());
                std::thread::spawn(move || {
                    b.wait();
                    // Not needed for correctness: gives the owner time to
                    // fill the socket and block.
                    std::thread::sleep(Duration::from_millis(20));
                    for seq in 0..200 {
                        let len = if seq % 50 == 7 { BIG } else { 1 + seq as usize };
                        raw_put(&obj, t, seq, len);
                    }
                })
            })
            .collect();
        owner_started.wait();
        std::thread::sleep(Duration::from_millis(100));
        gate.send(()).unwrap();
        owner.join().unwrap();
        for h in others {
            h.join().unwrap();
        }
        // Written after every other call returned (so after their bytes):
        // the last message the server reads.
        raw_put(&obj, 9, 0, 1);
        let mut seen = HashSet::new();
        loop {
            let (t, seq, ok) = got.recv().expect("the server read every request");
            assert!(ok, "call {seq} of thread {t} arrived damaged");
            assert!(seen.insert((t, seq)), "call {seq} of thread {t} twice");
            if t == 9 {
                break;
            }
        }
        assert_eq!(seen.len(), 4 + 2 * 200 + 1);
    });
}
