//! A small naming service client, like omniORB's `nameclt`:
//!
//! ```text
//! cargo run -p peregrine-naming --example nameclt -- \
//!     -ORBInitRef NameService=corbaloc::127.0.0.1:2809/NameService list
//! ```
//!
//! Commands: `list [NAME]` (recursively), `resolve NAME` (prints the
//! IOR), `bind NAME IOR|corbaloc:...` (creating the contexts on the
//! way), `unbind NAME`, `mkdir NAME`.

use peregrine::Orb;
use peregrine_naming::{NamingClient, NamingError};

fn main() {
    if let Err(e) = run() {
        eprintln!("nameclt: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().collect();
    // Takes the -ORB options (-ORBInitRef NameService=...) out of args.
    let orb = Orb::builder().args(&mut args).build()?;
    let naming = NamingClient::from_orb(&orb)?;
    let args: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    match args.as_slice() {
        ["list"] => list(&naming, 0)?,
        ["list", name] => list(&naming.resolve_context(name)?, 0)?,
        ["resolve", name] => println!("{}", orb.object_to_string(&naming.resolve_str(name)?)),
        ["bind", name, url] => {
            let obj = orb
                .string_to_object(url)?
                .non_nil()
                .ok_or("cannot bind a nil reference")?;
            naming.rebind_path(name, &obj)?;
        }
        ["unbind", name] => naming.unbind_str(name)?,
        ["mkdir", name] => {
            naming.create_path(name)?;
        }
        _ => {
            return Err("usage: nameclt [-ORBInitRef NameService=URL] \
                        list [NAME] | resolve NAME | bind NAME URL | unbind NAME | mkdir NAME"
                .into())
        }
    }
    Ok(())
}

/// Prints the bindings under `ctx`, contexts followed by a `/` and their
/// own bindings, indented.
fn list(ctx: &NamingClient, depth: usize) -> Result<(), NamingError> {
    for binding in ctx.list()? {
        let binding = binding?;
        let name = binding.name();
        let indent = "  ".repeat(depth);
        if binding.is_context() {
            println!("{indent}{name}/");
            list(&ctx.resolve_context(&name)?, depth + 1)?;
        } else {
            println!("{indent}{name}");
        }
    }
    Ok(())
}
