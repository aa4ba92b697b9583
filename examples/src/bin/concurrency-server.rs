//! A server that runs calls from one connection concurrently, on a pool
//! of threads, and counts how many ran at once.
//!
//! Usage: `concurrency-server [IOR file]`

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use peregrine::{Orb, SystemException, ThreadModel};

// Generated from idl/concurrency.idl by build.rs (see src/lib.rs).
use peregrine_examples::idl::concurrency::{Worker, WorkerSkeleton};

/// Several upcalls run this servant at the same time: its state is atomics.
#[derive(Default)]
struct Busy {
    running: AtomicU32,
    busiest: AtomicU32,
}

impl Worker for Busy {
    fn work(&self, ms: u32) -> Result<u32, SystemException> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.busiest.fetch_max(now, Ordering::SeqCst);
        // Stands for real work (a database query, a computation).
        std::thread::sleep(Duration::from_millis(u64::from(ms)));
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(now)
    }

    fn get_busiest(&self) -> Result<u32, SystemException> {
        Ok(self.busiest.load(Ordering::SeqCst))
    }
}

fn main() -> std::process::ExitCode {
    // Errors are printed with `Display` (`CORBA::TRANSIENT (minor ...)`).
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("concurrency-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let ior_file = std::env::args().nth(1);

    // The default model serves each connection on one thread, one request
    // after another: the cheapest for short calls. A client's threads
    // share one connection, so to overlap their slow calls the server
    // hands requests to a pool of workers instead.
    let orb = Orb::builder()
        .listen("127.0.0.1", 0)
        .thread_model(ThreadModel::ThreadPool(8))
        .build()?;
    let poa = orb.root_poa();
    poa.manager().activate()?;

    let servant = Arc::new(WorkerSkeleton::new(Busy::default()));
    let ior = orb.object_to_string(poa.servant_to_reference(&servant)?.object());
    match ior_file {
        Some(path) => {
            std::fs::write(&path, &ior)?;
            println!("wrote the Worker's IOR to {path}");
        }
        None => println!("{ior}"),
    }

    orb.run();
    Ok(())
}
