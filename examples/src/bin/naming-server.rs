//! Serves a `Hello::Greeter` and binds it in the Naming Service (omniNames,
//! TAO's or JacORB's), under the name given as first argument
//! (`examples/greeter` by default), creating the `examples` context if
//! needed. Ctrl-C (or SIGTERM) stops it.
//!
//! Where the service is comes from the command line, as with omniORB:
//! `naming-server -ORBInitRef NameService=corbaloc::localhost:2809/NameService`

use std::sync::Arc;

use peregrine::{Orb, SystemException};
use peregrine_examples::idl::hello::{Greeter, GreeterSkeleton};
use peregrine_naming::NamingClient;

struct Hi;

impl Greeter for Hi {
    fn greet(&self, name: &str) -> Result<String, SystemException> {
        Ok(format!("Hello, {name}, from the naming example!"))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().collect();
    let orb = Orb::init(&mut args)?;
    let name = args.get(1).map_or("examples/greeter", String::as_str);

    let poa = orb.root_poa();
    poa.manager().activate()?;
    let greeter = poa.servant_to_reference(&Arc::new(GreeterSkeleton::new(Hi)))?;

    // `from_orb` resolves the initial reference "NameService" and checks
    // that it is a naming context.
    let naming = NamingClient::from_orb(&orb)?;
    // `rebind_path` creates the missing contexts on the way (`mkdir -p`)
    // and replaces a binding a previous run left behind.
    naming.rebind_path(name, greeter.object())?;
    println!("bound {name} in the naming service");

    // The binding outlives this process, as with every naming service: a
    // client that resolves it after we stop gets TRANSIENT when it calls,
    // and the next run's `rebind_path` replaces it.
    orb.shutdown_on_signals()?;
    orb.run();
    println!("shut down");
    Ok(())
}
