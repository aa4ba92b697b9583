//! A `Hello::Greeter` implemented without generated code, through the
//! Dynamic Skeleton Interface (DSI).
//!
//! A `DynamicImplementation` receives every request as an operation name
//! plus arguments it decodes by describing them (an `NVList` of
//! TypeCodes). Gateways, bridges and interpreters are built this way: they
//! serve interfaces that were not known when they were compiled. The
//! typed `hello-client` cannot tell this server from `hello-server`.
//!
//! Usage: `dynamic-server [IOR file]`

use std::sync::Arc;

use peregrine::dynamic::DynValue;
use peregrine::orb::{DynServerRequest, DynamicImplementation, DynamicServant, NVList};
use peregrine::{Any, CompletionStatus, Orb, SystemException, SystemExceptionKind, TypeCode};

struct DynamicGreeter;

impl DynamicImplementation for DynamicGreeter {
    fn invoke(&self, req: &mut DynServerRequest<'_>) -> Result<(), SystemException> {
        match req.operation() {
            // IDL: string greet(in string name);
            "greet" => {
                // Describe the parameters; the ORB decodes them into the
                // list. An empty `Any` gives the type to decode.
                let mut params = NVList::new();
                params.add_in("name", Any::new(TypeCode::string_tc(0), DynValue::Null));
                let args = req.arguments(params)?;
                let name = args[0].value.get::<String>().unwrap_or_default();
                println!("greet({name:?}) called (DSI)");
                req.set_result(Any::from(format!("Hello, {name}!")))
            }
            // What a generated skeleton answers to an operation it lacks.
            _ => Err(SystemException::new(
                SystemExceptionKind::BadOperation,
                peregrine::orb::minor::BAD_OPERATION_UNKNOWN_OPERATION,
                CompletionStatus::No,
            )),
        }
    }

    /// The interface this object claims to be: the ORB answers `_is_a`
    /// (and so clients' `narrow`) from it.
    fn primary_interface(&self, _object_id: &[u8]) -> String {
        "IDL:Hello/Greeter:1.0".into()
    }
}

fn main() -> std::process::ExitCode {
    // Errors are printed with `Display` (`CORBA::TRANSIENT (minor ...)`).
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dynamic-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let ior_file = std::env::args().nth(1);

    let orb = Orb::builder().listen("127.0.0.1", 0).build()?;
    let poa = orb.root_poa();
    poa.manager().activate()?;

    // `DynamicServant` adapts a `DynamicImplementation` to the POA, as a
    // generated skeleton adapts a typed servant.
    let servant = Arc::new(DynamicServant::new(DynamicGreeter));
    let ior = orb.object_to_string(&poa.servant_to_reference(&servant)?);
    match ior_file {
        Some(path) => {
            std::fs::write(&path, &ior)?;
            println!("wrote the dynamic Greeter's IOR to {path}");
        }
        None => println!("{ior}"),
    }

    orb.run();
    Ok(())
}
