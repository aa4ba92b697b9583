//! Calls `Hello::Greeter::greet` without generated code, through the
//! Dynamic Invocation Interface (DII): the request is built at run time
//! from an operation name, `Any` arguments and the TypeCode of the
//! result. Works against `hello-server` (a generated skeleton) and
//! `dynamic-server` (DSI) alike.
//!
//! Usage: `dynamic-client <IOR | corbaloc URL | file> [name]`

use peregrine::orb::RequestError;
use peregrine::{Any, Orb, TypeCode};

fn main() -> std::process::ExitCode {
    // Errors are printed with `Display` (`CORBA::TRANSIENT (minor ...)`).
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dynamic-client: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let target = args
        .next()
        .ok_or("usage: dynamic-client <IOR | corbaloc URL | file> [name]")?;
    let name = args.next().unwrap_or_else(|| "world".to_string());
    // Servers often write their IOR to a file: accept either.
    let reference = match std::fs::read_to_string(&target) {
        Ok(text) => text.trim().to_string(),
        Err(_) => target,
    };

    let orb = Orb::builder().build()?;
    let obj = orb.string_to_object(&reference)?;
    // Without stubs the client checks the interface by its repository id.
    println!("the IOR names the type {:?}", obj.type_id());
    if !obj.is_a("IDL:Hello/Greeter:1.0")? {
        return Err("the object is not a Hello::Greeter".into());
    }

    // IDL: string greet(in string name);
    let mut greet = obj.request("greet");
    greet
        .add_in_arg("name", Any::from(name.as_str()))
        .set_return_type(TypeCode::string_tc(0));
    greet.invoke()?;
    let reply = greet.return_value().get::<String>().ok_or("not a string")?;
    println!("the server answered: {reply}");

    // An operation the interface does not have: the server's ORB answers
    // BAD_OPERATION, which DII reports as a system exception (a user
    // exception would come as `RequestError::User` holding an `Any`).
    let mut shout = obj.request("shout");
    shout.set_return_type(TypeCode::string_tc(0));
    match shout.invoke() {
        Ok(()) => println!("shout worked?"),
        Err(RequestError::System(e)) => println!("shout failed: {e}"),
        Err(RequestError::User(any)) => println!("shout raised {:?}", any.tc.id()),
    }
    Ok(())
}
