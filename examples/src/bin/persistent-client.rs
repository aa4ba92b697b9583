//! Calls the `Persistent::Counter` of `persistent-server`. Run it, restart
//! the server on the same port, and run it again with the same reference:
//! a new process answers.
//!
//! Usage: `persistent-client <IOR | corbaloc URL | file>`

use peregrine::Orb;

// Generated from idl/persistent.idl by build.rs (see src/lib.rs).
use peregrine_examples::idl::persistent::CounterRef;

fn main() -> std::process::ExitCode {
    // Errors are printed with `Display` (`CORBA::TRANSIENT (minor ...)`).
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("persistent-client: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let target = std::env::args()
        .nth(1)
        .ok_or("usage: persistent-client <IOR | corbaloc URL | file>")?;
    // Servers often write their IOR to a file: accept either.
    let reference = match std::fs::read_to_string(&target) {
        Ok(text) => text.trim().to_string(),
        Err(_) => target,
    };

    let orb = Orb::builder().build()?;
    let obj = orb.string_to_object(&reference)?;
    // A corbaloc URL carries no interface name, so `narrow` (which asks
    // the server) is what makes it a typed Counter.
    let counter = CounterRef::narrow(obj)?.ok_or("the object is not a Persistent::Counter")?;

    let count = counter.next()?;
    println!(
        "count is {count}, served by process {}",
        counter.get_server_pid()?
    );
    Ok(())
}
