//! Finds the `Hello::Greeter` that `naming-server` bound, by name, calls
//! it, and lists the context it is in.
//!
//! `naming-client -ORBInitRef NameService=corbaloc::localhost:2809/NameService [name]`

use peregrine::Orb;
use peregrine_examples::idl::hello::GreeterRef;
use peregrine_naming::NamingClient;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().collect();
    let orb = Orb::init(&mut args)?;
    let name = args.get(1).map_or("examples/greeter", String::as_str);

    let naming = NamingClient::from_orb(&orb)?;
    // A typed resolve: checks (`_is_a`) that the object is a Greeter.
    let greeter: GreeterRef = naming.resolve_as(name)?;
    println!("the server answered: {}", greeter.greet("naming")?);

    // What else is bound beside it (the context part of the name).
    if let Some((context, _)) = name.rsplit_once('/') {
        for binding in naming.resolve_context(context)?.list()? {
            println!("{context}/{}", binding?.name());
        }
    }
    Ok(())
}
