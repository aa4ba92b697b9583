//! Calls `Hello::Greeter::greet` on the object named by the first
//! argument (an IOR or a `corbaloc:` URL): `hello-client IOR [name]`.

use peregrine::Orb;
// Generated from the IDL (in your crate: `mod idl { peregrine::include_idl!(); }`).
use peregrine_examples::idl::hello::GreeterRef;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().collect();
    let orb = Orb::init(&mut args)?; // takes out the `-ORB...` options
    let Some(reference) = args.get(1) else {
        return Err("usage: hello-client <IOR or corbaloc URL> [name]".into());
    };
    let name = args.get(2).map_or("world", String::as_str);
    // `narrow` checks that the object is a Greeter (asking the server
    // when the reference does not say).
    let obj = orb.string_to_object(reference)?;
    let greeter = GreeterRef::narrow(obj)?.ok_or("not a Hello::Greeter")?;
    println!("the server answered: {}", greeter.greet(name)?);
    Ok(())
}
