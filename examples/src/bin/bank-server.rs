//! A bank: a `Bank::Teller` that opens `Bank::Account` objects on demand.
//!
//! Shows servants that create and activate other objects, attributes,
//! user exceptions raised by a servant, a oneway operation, and a client
//! stopping the server through a `shutdown` operation.
//!
//! Usage: `bank-server [IOR file]` (without a file the IOR is printed)

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use peregrine::{CompletionStatus, Orb, Poa, SystemException, SystemExceptionKind};

// Generated from idl/bank.idl by build.rs (see src/lib.rs).
use peregrine_examples::idl::bank::{
    account, teller, Account, AccountList, AccountRef, AccountSkeleton, InsufficientFunds, Teller,
    TellerSkeleton, UnknownAccount,
};

/// One account. Upcalls run on the ORB's threads, possibly several at
/// once, so the mutable state sits behind a `Mutex`.
struct AccountImpl {
    owner: String,
    balance: Mutex<f64>,
    nickname: Mutex<String>,
}

impl Account for AccountImpl {
    fn get_owner(&self) -> Result<String, SystemException> {
        Ok(self.owner.clone())
    }

    fn get_balance(&self) -> Result<f64, SystemException> {
        Ok(*self.balance.lock().unwrap())
    }

    fn get_nickname(&self) -> Result<String, SystemException> {
        Ok(self.nickname.lock().unwrap().clone())
    }

    fn set_nickname(&self, value: &str) -> Result<(), SystemException> {
        *self.nickname.lock().unwrap() = value.to_string();
        Ok(())
    }

    fn deposit(&self, amount: f64) -> Result<(), SystemException> {
        // Not in the IDL's `raises`: a bad argument is a system exception.
        if !amount.is_finite() || amount <= 0.0 {
            return Err(SystemException::new(
                SystemExceptionKind::BadParam,
                0,
                CompletionStatus::No,
            ));
        }
        *self.balance.lock().unwrap() += amount;
        Ok(())
    }

    fn withdraw(&self, amount: f64) -> Result<(), account::WithdrawError> {
        let mut balance = self.balance.lock().unwrap();
        if amount > *balance {
            // The generated error enum has a variant per exception the
            // IDL lets `withdraw` raise; the client receives exactly this.
            return Err(InsufficientFunds { balance: *balance }.into());
        }
        *balance -= amount;
        Ok(())
    }
}

/// The teller: keeps a reference to every account it opened.
struct Bank {
    /// Where new accounts are activated.
    poa: Poa,
    /// To stop the server from the `shutdown` operation.
    orb: Orb,
    accounts: Mutex<BTreeMap<String, AccountRef>>,
}

impl Teller for Bank {
    fn open(&self, owner: &str, initial: f64) -> Result<Option<AccountRef>, SystemException> {
        let mut accounts = self.accounts.lock().unwrap();
        if let Some(existing) = accounts.get(owner) {
            return Ok(Some(existing.clone()));
        }
        let servant = Arc::new(AccountSkeleton::new(AccountImpl {
            owner: owner.to_string(),
            balance: Mutex::new(initial),
            nickname: Mutex::new(String::new()),
        }));
        // The root POA activates a servant the first time a reference to
        // it is asked for (IMPLICIT_ACTIVATION), and the skeleton's type
        // makes it an `AccountRef`. POA errors are not exceptions a client
        // can receive: report OBJ_ADAPTER.
        let account = self.poa.servant_to_reference(&servant).map_err(|e| {
            eprintln!("activating {owner}'s account: {e}");
            SystemException::new(SystemExceptionKind::ObjAdapter, 0, CompletionStatus::No)
        })?;
        accounts.insert(owner.to_string(), account.clone());
        println!("opened an account for {owner} with {initial:.2}");
        Ok(Some(account))
    }

    fn find(&self, owner: &str) -> Result<Option<AccountRef>, teller::FindError> {
        match self.accounts.lock().unwrap().get(owner) {
            Some(account) => Ok(Some(account.clone())),
            None => Err(UnknownAccount {
                owner: owner.to_string(),
            }
            .into()),
        }
    }

    fn accounts(&self) -> Result<AccountList, SystemException> {
        // A sequence of object references maps to `Vec<Option<_>>`
        // (`None` would be a nil reference).
        let accounts = self.accounts.lock().unwrap();
        Ok(accounts.values().cloned().map(Some).collect())
    }

    fn audit(&self, note: &str) -> Result<(), SystemException> {
        println!("audit: {note}");
        Ok(())
    }

    fn shutdown(&self) -> Result<(), SystemException> {
        println!("shutdown requested");
        // `false`: do not wait for the ORB's threads, one of which is
        // running this very call. The reply still goes out before the
        // connection is closed; `main` returns from `orb.run()`.
        self.orb.shutdown(false);
        Ok(())
    }
}

fn main() -> std::process::ExitCode {
    // Errors are printed with `Display` (`CORBA::TRANSIENT (minor ...)`).
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bank-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let ior_file = std::env::args().nth(1);

    let orb = Orb::builder().listen("127.0.0.1", 0).build()?;
    let poa = orb.root_poa();
    poa.manager().activate()?;

    let bank = Arc::new(TellerSkeleton::new(Bank {
        poa: poa.clone(),
        orb: orb.clone(),
        accounts: Mutex::new(BTreeMap::new()),
    }));
    let ior = orb.object_to_string(poa.servant_to_reference(&bank)?.object());
    match ior_file {
        Some(path) => {
            std::fs::write(&path, &ior)?;
            println!("wrote the Teller's IOR to {path}");
        }
        None => println!("{ior}"),
    }

    orb.run();
    // Wait for the last replies to go out and release every object.
    orb.destroy();
    println!("bank closed");
    Ok(())
}
