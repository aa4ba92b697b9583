//! A server whose object reference stays valid across restarts.
//!
//! A reference names a host, a port and an object key. The RootPOA's
//! objects are TRANSIENT: their keys hold a number that is new in every
//! run, so an old reference gets `OBJECT_NOT_EXIST`. A POA with the
//! PERSISTENT and USER_ID policies makes keys only from the POA's name and
//! an id the program chooses, so a server restarted on the same port
//! rebuilds exactly the same reference.
//!
//! Usage: `persistent-server <port> [IOR file]`

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use peregrine::{Orb, Policies, Servant, SystemException};

// Generated from idl/persistent.idl by build.rs (see src/lib.rs).
use peregrine_examples::idl::persistent::{Counter, CounterSkeleton};

/// The object's id in its POA: part of the object key, so it must be the
/// same in every run.
const COUNTER_ID: &[u8] = b"the-counter";

struct CounterImpl {
    count: AtomicU32,
}

impl Counter for CounterImpl {
    fn next(&self) -> Result<u32, SystemException> {
        Ok(self.count.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn get_server_pid(&self) -> Result<u32, SystemException> {
        Ok(std::process::id())
    }
}

fn main() -> std::process::ExitCode {
    // Errors are printed with `Display` (`CORBA::TRANSIENT (minor ...)`).
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("persistent-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let port: u16 = args
        .next()
        .ok_or("usage: persistent-server <port> [IOR file]")?
        .parse()?;
    let ior_file = args.next();

    // A fixed port: the reference carries it, so a restarted server must
    // listen on the same one (and the same host name).
    let orb = Orb::builder().listen("127.0.0.1", port).build()?;
    let root = orb.root_poa();

    // Sharing the root's manager: activating it below starts both POAs.
    let poa = root.create_poa(
        "counters",
        Some(&root.manager()),
        Policies::persistent_user_ids(),
    )?;
    let servant: Arc<dyn Servant> = Arc::new(CounterSkeleton::new(CounterImpl {
        count: AtomicU32::new(0),
    }));
    poa.activate_object_with_id(COUNTER_ID, servant)?;
    root.manager().activate()?;

    let obj = poa.id_to_reference(COUNTER_ID)?;
    let ior = orb.object_to_string(&obj);
    // The same object under a readable key: `corbaloc::host:port/Counter`
    // can be written down once, in a configuration file or a script (the
    // ORB answers it with a forward to the POA's reference).
    orb.bind_object_key("Counter", &obj)?;
    println!("corbaloc::127.0.0.1:{port}/Counter");
    match ior_file {
        Some(path) => {
            std::fs::write(&path, &ior)?;
            println!("wrote the Counter's IOR to {path}");
        }
        None => println!("{ior}"),
    }
    println!("serving as process {}", std::process::id());

    orb.run();
    Ok(())
}
