//! The smallest CORBA server: one `Hello::Greeter` object.
//!
//! It prints the object's stringified reference (an IOR), or writes it to
//! the file named by its first argument, then serves until killed. Run
//! `hello-client` with that IOR (or the file) in another terminal.

use std::sync::Arc;

use peregrine::{Orb, Servant, SystemException};

// Generated from idl/hello.idl by build.rs (see src/lib.rs).
use peregrine_examples::idl::hello::{Greeter, GreeterSkeleton};

/// The servant: the object's implementation. The ORB calls it from its
/// own threads, which is why servant traits take `&self` (use atomics or
/// a `Mutex` for state).
struct Hi;

impl Greeter for Hi {
    fn greet(&self, name: &str) -> Result<String, SystemException> {
        println!("greet({name:?}) called");
        Ok(format!("Hello, {name}!"))
    }
}

fn main() -> std::process::ExitCode {
    // Errors are printed with `Display` (`CORBA::TRANSIENT (minor ...)`).
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hello-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let ior_file = std::env::args().nth(1);

    // Port 0 lets the OS pick a free port; the IOR carries whichever it
    // picked. Loopback keeps the example private to this machine: listen
    // on "0.0.0.0" to be reachable from other hosts.
    let orb = Orb::builder().listen("127.0.0.1", 0).build()?;

    // The root POA holds requests until its manager is activated, so a
    // client that calls early waits instead of failing.
    let poa = orb.root_poa();
    poa.manager().activate()?;

    // The generated skeleton turns GIOP requests into calls on `Hi`.
    let servant: Arc<dyn Servant> = Arc::new(GreeterSkeleton::new(Hi));
    let ior = orb.object_to_string(&poa.servant_to_reference(&servant)?);

    match ior_file {
        Some(path) => {
            std::fs::write(&path, &ior)?;
            println!("wrote the Greeter's IOR to {path}");
        }
        None => println!("{ior}"),
    }
    println!("serving; stop with Ctrl-C");

    // Connections are served by the ORB's own threads; `run` only keeps
    // the main thread (and so the process) alive until a shutdown.
    orb.run();
    Ok(())
}
