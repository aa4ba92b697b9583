//! Issue #3 item 5: a server with N (default 1,000,000) activated objects,
//! one small servant each, and a client holding N references to it through
//! one connection.
//!
//! ```text
//! cargo run --release -p peregrine-orb-tests --example million -- [N] [--pin same|none] [--calls C] [--user-ids]
//! cargo run --release -p peregrine-orb-tests --example million -- server N   # the server alone
//! ```
//!
//! Both sides go through the stubs and skeletons generated from
//! `idl/test.idl` (`Test::Tiny`, `Test::TinyFactory`) by build.rs.
//!
//! The client (this process) starts the server as a child process, both
//! pinned to CPU 0 by default (BENCHMARKS.md: on this VM a cross-CPU
//! round trip costs ~55-65 us of host wake-up against ~13 us on one CPU).
//! With `--user-ids` the objects live in a USER_ID POA (8-byte ids, as an
//! application naming its objects would have) instead of the RootPOA's
//! system ids (a slot vector): the active object map's hash table is what
//! is measured then.
//!
//! Printed figures:
//!
//! * server: activation time (ns per `activate_object`), resident memory
//!   per servant (an `Arc` of the generated `TinySkeleton` wrapping a
//!   4-byte struct: what the application pays)
//!   and per activation beyond the servant (what the POA pays), from
//!   `/proc/self/statm`;
//! * client: resident memory per reference (decoded from IORs received
//!   from a factory), and again after every reference made a call;
//! * twoway latency (a no-argument operation): p50/mean/p99 at 1 object
//!   and at N objects in round-robin order, interleaved in rounds so both
//!   see the same machine, and their ratio.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_orb::{Orb, Servant, SystemException};
use peregrine_orb_tests::idl::test::{
    Tiny, TinyFactory, TinyFactoryRef, TinyFactorySkeleton, TinyRef, TinySeq, TinySkeleton,
};

fn rss_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = s
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}

fn pin(cpu: Option<usize>) {
    let Some(c) = cpu else { return };
    // SAFETY: cpu_set_t is plain data; c < CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(c, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn bad_op() -> SystemException {
    SystemException::new(
        peregrine_orb::SystemExceptionKind::BadOperation,
        0,
        peregrine_orb::CompletionStatus::No,
    )
}

/// The small servant: `Test::Tiny::ping`.
struct TinyImpl {
    calls: AtomicU32,
}

impl Tiny for TinyImpl {
    fn ping(&self) -> Result<(), SystemException> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// `Test::TinyFactory::refs(start, count)`: references to the activated
/// Tiny objects, from the `start`th.
struct FactoryImpl {
    poa: peregrine_orb::Poa,
    ids: Vec<[u8; 8]>,
}

impl TinyFactory for FactoryImpl {
    fn refs(&self, start: u32, count: u32) -> Result<TinySeq, SystemException> {
        let ids = self.ids.get(start as usize..).unwrap_or(&[]);
        let ids = &ids[..(count as usize).min(ids.len())];
        ids.iter()
            .map(|id| {
                self.poa
                    .create_reference_with_id::<TinyRef>(id)
                    .map(Some)
                    .map_err(|_| bad_op())
            })
            .collect()
    }
}

fn server(n: usize, cpu: Option<usize>, user_ids: bool) {
    pin(cpu);
    let orb = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
    let root = orb.root_poa();
    let poa = if user_ids {
        let p = peregrine_orb::Policies {
            id_assignment: peregrine_orb::IdAssignment::User,
            ..peregrine_orb::Policies::default()
        };
        root.create_poa("users", Some(&root.manager()), p).unwrap()
    } else {
        root.clone()
    };
    // Scaffolding first, so it is in the baseline: the servants' handles
    // and the ids kept for the factory.
    let mut ids: Vec<[u8; 8]> = Vec::with_capacity(n);
    let rss0 = rss_bytes();
    let servants: Vec<Arc<dyn Servant>> = (0..n)
        .map(|_| {
            Arc::new(TinySkeleton::new(TinyImpl {
                calls: AtomicU32::new(0),
            })) as Arc<dyn Servant>
        })
        .collect();
    let rss1 = rss_bytes();
    let t = Instant::now();
    for (i, s) in servants.iter().enumerate() {
        if user_ids {
            let id = (i as u64).to_be_bytes();
            poa.activate_object_with_id(&id, s.clone()).unwrap();
            ids.push(id);
        } else {
            let id = poa.activate_object(s.clone()).unwrap();
            ids.push(id.as_slice().try_into().unwrap());
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let rss2 = rss_bytes();
    drop(servants);
    let servant_bytes = (rss1 - rss0) as f64 / n as f64 - 8.0 * 2.0; // minus the Vec<Arc<dyn>> slot
    let poa_bytes = (rss2 as f64 - rss1 as f64) / n as f64 - 8.0; // minus the ids Vec
    println!("activate_secs {secs:.3}");
    println!("activate_ns_per_object {:.0}", secs * 1e9 / n as f64);
    println!("servant_bytes_per_object {servant_bytes:.1}");
    println!(
        "servant_struct_bytes {}",
        std::mem::size_of::<TinySkeleton<TinyImpl>>()
    );
    println!("poa_bytes_per_object {poa_bytes:.1}");
    let factory: Arc<dyn Servant> = Arc::new(TinyFactorySkeleton::new(FactoryImpl { poa, ids }));
    let f = root.servant_to_object(&factory).unwrap();
    root.manager().activate().unwrap();
    println!("factory {}", orb.object_to_string(&f));
    std::io::stdout().flush().unwrap();
    // Serve until the parent closes our stdin.
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    orb.shutdown(false);
}

fn ping(o: &TinyRef) {
    o.ping().unwrap();
}

struct Stats {
    p50: f64,
    mean: f64,
    p99: f64,
}

fn stats(mut v: Vec<f64>) -> Stats {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q) as usize];
    Stats {
        p50: at(0.5),
        mean: v.iter().sum::<f64>() / v.len() as f64,
        p99: at(0.99),
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut cpu = Some(0);
    let mut calls: Option<usize> = None;
    if let Some(i) = args.iter().position(|a| a == "--pin") {
        cpu = match args.get(i + 1).map(String::as_str) {
            Some("none") => None,
            _ => Some(0),
        };
        args.drain(i..(i + 2).min(args.len()));
    }
    if let Some(i) = args.iter().position(|a| a == "--calls") {
        calls = args.get(i + 1).and_then(|v| v.parse().ok());
        args.drain(i..(i + 2).min(args.len()));
    }
    let user_ids = args.iter().any(|a| a == "--user-ids");
    args.retain(|a| a != "--user-ids");
    if args.first().map(String::as_str) == Some("server") {
        let n = args
            .get(1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(1_000_000);
        return server(n, cpu, user_ids);
    }
    let n: usize = args
        .first()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let timed_rr = calls.unwrap_or(n.max(20_000));
    pin(cpu);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["server", &n.to_string(), "--pin"])
        .arg(if cpu.is_some() { "same" } else { "none" })
        .args(user_ids.then_some("--user-ids"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut factory = String::new();
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 {
        if let Some(f) = line.strip_prefix("factory ") {
            factory = f.trim().to_string();
            break;
        }
        print!("server {line}");
        line.clear();
    }
    let orb = Orb::builder()
        .call_timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let f = TinyFactoryRef::unchecked_narrow(orb.string_to_object(&factory).unwrap());

    let mut refs: Vec<TinyRef> = Vec::with_capacity(n);
    let rss0 = rss_bytes();
    let t = Instant::now();
    const BATCH: usize = 10_000;
    let mut start = 0;
    while start < n {
        let count = BATCH.min(n - start);
        let got: Vec<TinyRef> = f
            .refs(start as u32, count as u32)
            .unwrap()
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(got.len(), count);
        refs.extend(got);
        start += count;
    }
    let fetch = t.elapsed().as_secs_f64();
    let rss1 = rss_bytes();
    println!("client fetch_secs {fetch:.3}");
    println!(
        "client bytes_per_reference {:.1}",
        (rss1 - rss0) as f64 / n as f64
    );
    // Warm-up: one call on every reference (each binds to the shared
    // connection).
    let t = Instant::now();
    for r in &refs {
        ping(r);
    }
    println!("client warmup_pass_secs {:.3}", t.elapsed().as_secs_f64());
    println!(
        "client bytes_per_reference_after_a_call {:.1}",
        (rss_bytes() - rss0) as f64 / n as f64
    );
    assert_eq!(
        orb.client_connections(),
        1,
        "one connection for all references"
    );

    // Interleaved rounds: 1 object, then the next slice of the round robin.
    let rounds = 5;
    let single_per_round = 20_000;
    let rr_per_round = timed_rr.div_ceil(rounds);
    let mut single = Vec::with_capacity(rounds * single_per_round);
    let mut rr = Vec::with_capacity(rounds * rr_per_round);
    let mut next = 0usize;
    for _ in 0..rounds {
        let one = &refs[0];
        for _ in 0..2_000 {
            ping(one);
        }
        for _ in 0..single_per_round {
            let t = Instant::now();
            ping(one);
            single.push(t.elapsed().as_secs_f64() * 1e6);
        }
        for _ in 0..rr_per_round {
            let r = &refs[next % n];
            next += 1;
            let t = Instant::now();
            ping(r);
            rr.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    let (s1, sn) = (stats(single), stats(rr));
    let pin_s = if cpu.is_some() { "same" } else { "none" };
    println!(
        "latency objects=1 pin={pin_s} p50_us={:.2} mean_us={:.2} p99_us={:.2}",
        s1.p50, s1.mean, s1.p99
    );
    println!(
        "latency objects={n} order=round-robin pin={pin_s} p50_us={:.2} mean_us={:.2} p99_us={:.2}",
        sn.p50, sn.mean, sn.p99
    );
    println!("latency_ratio_p50 {:.3}", sn.p50 / s1.p50);
    drop(child.stdin.take());
    let _ = child.wait();
}
