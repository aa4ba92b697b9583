//! Calls one `Concurrency::Worker` from many threads at once, then shows
//! what a call that misses its deadline returns.
//!
//! References are cheap to clone and safe to share between threads; all
//! clones (and all references to the same server) share one connection,
//! on which replies are matched to calls by request id, so calls from
//! different threads overlap on the wire.
//!
//! Usage: `concurrency-client <IOR | corbaloc URL | file>`

use std::time::{Duration, Instant};

use peregrine::Orb;

// Generated from idl/concurrency.idl by build.rs (see src/lib.rs).
use peregrine_examples::idl::concurrency::WorkerRef;

const THREADS: u32 = 8;
const CALLS_PER_THREAD: u32 = 4;
const CALL_MS: u32 = 100;

fn main() -> std::process::ExitCode {
    // Errors are printed with `Display` (`CORBA::TRANSIENT (minor ...)`).
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("concurrency-client: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let target = std::env::args()
        .nth(1)
        .ok_or("usage: concurrency-client <IOR | corbaloc URL | file>")?;
    // Servers often write their IOR to a file: accept either.
    let reference = match std::fs::read_to_string(&target) {
        Ok(text) => text.trim().to_string(),
        Err(_) => target,
    };

    // Every call made through this ORB fails with TIMEOUT if no reply
    // comes within 3 s (the default is 30 s), so a hung server cannot
    // hang the client; a reference can override it.
    let orb = Orb::builder()
        .call_timeout(Duration::from_secs(3))
        .build()?;
    let obj = orb.string_to_object(&reference)?;
    let worker = WorkerRef::narrow(obj)?.ok_or("the object is not a Concurrency::Worker")?;

    let start = Instant::now();
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                let worker = worker.clone();
                s.spawn(move || {
                    for _ in 0..CALLS_PER_THREAD {
                        worker.work(CALL_MS)?;
                    }
                    Ok::<(), peregrine::SystemException>(())
                })
            })
            .collect();
        threads
            .into_iter()
            .try_for_each(|t| t.join().expect("a calling thread panicked"))
    })?;
    let took = start.elapsed();
    println!(
        "{} calls of {CALL_MS} ms from {THREADS} threads took {} ms over {} connection(s)",
        THREADS * CALLS_PER_THREAD,
        took.as_millis(),
        orb.client_connections()
    );
    println!(
        "the server ran up to {} calls at once",
        worker.get_busiest()?
    );

    // A per-reference deadline: the same object, but calls through this
    // reference give up after 200 ms. The server still runs the call to
    // its end, so the outcome is unknown: COMPLETED_MAYBE.
    let impatient =
        WorkerRef::unchecked_narrow(worker.object().with_timeout(Duration::from_millis(200)));
    match impatient.work(2000) {
        Ok(_) => println!("work(2000) finished within 200 ms?"),
        Err(e) => {
            // The exception carries its cause: the phase, the peer, the
            // operation and the deadline, so printing it says it all.
            println!("work(2000) with a 200 ms deadline failed: {e}");
        }
    }
    // The late reply is dropped when it comes; the connection stays
    // usable. The server is still running the abandoned call.
    println!(
        "afterwards, work(1) saw {} call(s) running in the server",
        worker.work(1)?
    );
    Ok(())
}
