//! Uses the bank of `bank-server`: opens accounts, moves money, reads
//! and writes attributes, catches the user exceptions `InsufficientFunds`
//! and `UnknownAccount`, lists accounts, sends a oneway note, and with
//! `shutdown` as its second argument stops the server.
//!
//! Usage: `bank-client <IOR | corbaloc URL | file> [shutdown]`

use peregrine::Orb;

// Generated from idl/bank.idl by build.rs (see src/lib.rs).
use peregrine_examples::idl::bank::{account, teller, AccountRef, TellerRef};

fn main() -> std::process::ExitCode {
    // Errors are printed with `Display` (`CORBA::TRANSIENT (minor ...)`).
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bank-client: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let target = args
        .next()
        .ok_or("usage: bank-client <IOR | corbaloc URL | file> [shutdown]")?;
    let shutdown = args.next().as_deref() == Some("shutdown");
    // Servers often write their IOR to a file: accept either.
    let reference = match std::fs::read_to_string(&target) {
        Ok(text) => text.trim().to_string(),
        Err(_) => target,
    };

    let orb = Orb::builder().build()?;
    let obj = orb.string_to_object(&reference)?;
    let teller = TellerRef::narrow(obj)?.ok_or("the object is not a Bank::Teller")?;

    // Operations returning an interface return `Option`: IDL allows a
    // nil reference, which the server would send as `None`.
    let alice = teller.open("alice", 100.0)?.ok_or("no account for alice")?;
    let bob = teller.open("bob", 20.0)?.ok_or("no account for bob")?;

    alice.deposit(50.0)?;
    // A readonly attribute is read with `get_<name>`.
    println!(
        "{} has {:.2} after depositing 50.00",
        alice.get_owner()?,
        alice.get_balance()?
    );

    // A user exception arrives as a variant of the operation's error
    // enum, with its members; system exceptions are the `System` variant.
    match bob.withdraw(80.0) {
        Ok(()) => println!("bob withdrew 80.00"),
        Err(account::WithdrawError::InsufficientFunds(e)) => {
            println!(
                "bob cannot withdraw 80.00: only {:.2} on the account",
                e.balance
            )
        }
        Err(account::WithdrawError::System(e)) => return Err(e.into()),
    }

    // Amounts the servant refuses raise a system exception (BAD_PARAM),
    // which every operation may raise without declaring it.
    if let Err(e) = alice.deposit(-5.0) {
        println!("depositing -5.00 failed: {e}");
    }

    // A writable attribute has `set_<name>` as well.
    alice.set_nickname("Al")?;
    println!("alice's nickname is now {:?}", alice.get_nickname()?);

    match teller.find("carol") {
        Ok(_) => println!("carol has an account"),
        Err(teller::FindError::UnknownAccount(e)) => println!("no account for {}", e.owner),
        Err(teller::FindError::System(e)) => return Err(e.into()),
    }

    // A sequence of references: each element is a live reference to call.
    let mut listing = Vec::new();
    for account in teller.accounts()?.into_iter().flatten() {
        listing.push(describe(&account)?);
    }
    println!("accounts: {}", listing.join(", "));

    // Oneway: returns as soon as the request is written; the server
    // prints the note whenever it gets to it.
    teller.audit("bank-client was here")?;
    println!("sent an audit note (oneway: no reply to wait for)");

    if shutdown {
        teller.shutdown()?;
        println!("asked the server to shut down");
    }
    Ok(())
}

/// "owner balance", read through the account's attributes.
fn describe(account: &AccountRef) -> Result<String, peregrine::SystemException> {
    Ok(format!(
        "{} {:.2}",
        account.get_owner()?,
        account.get_balance()?
    ))
}
