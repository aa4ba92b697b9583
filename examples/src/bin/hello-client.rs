//! Calls `Hello::Greeter::greet` on the object that `hello-server`
//! published.
//!
//! Usage: `hello-client <IOR | corbaloc URL | file holding either> [name]`

use peregrine::Orb;

// Generated from idl/hello.idl by build.rs (see src/lib.rs).
use peregrine_examples::idl::hello::GreeterRef;

fn main() -> std::process::ExitCode {
    // Errors are printed with `Display` (`CORBA::TRANSIENT (minor ...)`).
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hello-client: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let target = args
        .next()
        .ok_or("usage: hello-client <IOR | corbaloc URL | file> [name]")?;
    let name = args.next().unwrap_or_else(|| "world".to_string());
    // Servers often write their IOR to a file: accept either.
    let reference = match std::fs::read_to_string(&target) {
        Ok(text) => text.trim().to_string(),
        Err(_) => target,
    };

    // A client ORB needs no listener: it only opens connections.
    let orb = Orb::builder().build()?;
    let obj = orb
        .string_to_object(&reference)?
        .ok_or("the reference is nil")?;

    // `narrow` asks the server whether the object really is a Greeter
    // (one `_is_a` round trip) before we call typed operations on it.
    let greeter = GreeterRef::narrow(obj)?.ok_or("the object is not a Hello::Greeter")?;

    println!("calling greet({name:?})");
    let reply = greeter.greet(&name)?;
    println!("the server answered: {reply}");
    Ok(())
}
