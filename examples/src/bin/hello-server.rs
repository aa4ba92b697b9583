//! The smallest CORBA server: one `Hello::Greeter` object. It prints the
//! object's reference (an IOR) and serves until Ctrl-C.

use std::sync::Arc;

use peregrine::{Orb, SystemException};
// Generated from the IDL; in a crate of your own, the generated code is
// `mod idl { peregrine::include_idl!(); }` and this is `idl::hello`.
use peregrine_examples::idl::hello::{Greeter, GreeterSkeleton};

/// The servant: implements the trait generated from the IDL.
struct Hi;

impl Greeter for Hi {
    fn greet(&self, name: &str) -> Result<String, SystemException> {
        println!("greet({name:?}) called");
        Ok(format!("Hello, {name}!"))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Takes `-ORB...` options from the command line, as omniORB does:
    // `-ORBendPoint giop:tcp::2809` picks the port, for example.
    let orb = Orb::init(&mut std::env::args().collect())?;
    let poa = orb.root_poa();
    poa.manager().activate()?; // until then, requests wait
    let greeter = poa.servant_to_reference(&Arc::new(GreeterSkeleton::new(Hi)))?;
    println!("{}", orb.object_to_string(greeter.object()));
    orb.shutdown_on_signals()?; // Ctrl-C makes `run` return
    orb.run();
    Ok(())
}
