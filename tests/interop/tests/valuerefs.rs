//! Valuetypes whose state holds object references between Peregrine and
//! omniORB (C++ and omniORBpy, `idl/valuerefs.idl`), both directions
//! over GIOP 1.2: a `Wallet` carries references (typed, `Object`, in a
//! struct, in a sequence with a nil one, an abstract interface member
//! holding a reference, a value or nil) and the receiver calls through
//! them; a cycle through two such values; a `Tagged` (truncatable,
//! chunked) truncated past its own reference.
//!
//! The peers are `cxx/vrefs_server.cc` and `cxx/vrefs_client.cc`
//! (omniidl + g++, see `src/peers.rs`), `python/vrefs_server.py` and
//! `python/vrefs_client.py`. Where omniORBpy is missing its tests print
//! that they were skipped (under CI they fail instead).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use peregrine_cdr::{ValueRef, ValueSlot};
use peregrine_interop_tests::omniorbpy::omniorbpy;
use peregrine_interop_tests::peers::{extra_args, peers, Peer};
use peregrine_interop_tests::valuerefs_idl::v_refs::{self as v, Describable as _};
use peregrine_interop_tests::{bounded, serving_orb};
use peregrine_orb::{ObjectRef, Orb, SystemException};

type R<T> = Result<T, SystemException>;

struct AccountImpl(Mutex<i32>);

impl v::Account for AccountImpl {
    fn balance(&self) -> R<i32> {
        Ok(*self.0.lock().unwrap())
    }
    fn deposit(&self, amount: i32) -> R<()> {
        *self.0.lock().unwrap() += amount;
        Ok(())
    }
}

struct ShopImpl;

impl v::Describable for ShopImpl {
    fn describe(&self) -> R<String> {
        Ok("rust shop".into())
    }
}

impl v::Shop for ShopImpl {}

/// A wallet whose every reference member is `acct` (and a nil one in
/// `more`), as `wallet` in python/vrefs_common.py builds it.
fn wallet(label: &str, acct: &v::AccountRef, about: Option<v::DescribableAbstract>) -> v::Wallet {
    let a = Some(acct.clone());
    v::Wallet::new(
        label.into(),
        a.clone(),
        a.clone().map(ObjectRef::from),
        v::Holder {
            name: "rust".into(),
            acct: a.clone(),
        },
        vec![a, None],
        ValueSlot::default(),
        about,
    )
}

/// "ref:<text>", "value:<text>" or "nil", calling `describe` on `d`.
fn describe(d: Option<&v::DescribableAbstract>) -> R<String> {
    Ok(match d {
        None => "nil".into(),
        Some(d) => {
            let kind = if d.object().is_some() { "ref" } else { "value" };
            format!("{kind}:{}", d.describe()?)
        }
    })
}

/// The balances read through each reference of `w`, and whether the
/// nil one stayed nil.
fn refs(w: &v::Wallet) -> (i32, i32, i32, i32, bool) {
    let b = |a: &Option<v::AccountRef>| a.as_ref().expect("a reference").balance().unwrap();
    let obj = v::AccountRef::unchecked_narrow(w.obj.clone().expect("Object member"));
    (
        b(&w.main),
        obj.balance().unwrap(),
        b(&w.owner.acct),
        b(&w.more[0]),
        w.more[1].is_none(),
    )
}

/// An ORB with an account (50) and a shop of its own, for the peer to
/// call back.
fn orb_with_servants() -> (Orb, v::AccountRef, v::ShopRef) {
    let orb = serving_orb();
    let root = orb.root_poa();
    let acct = root
        .servant_to_reference(&Arc::new(v::AccountSkeleton::new(AccountImpl(Mutex::new(
            50,
        )))))
        .unwrap();
    let shop = root
        .servant_to_reference(&Arc::new(v::ShopSkeleton::new(ShopImpl)))
        .unwrap();
    (orb, acct, shop)
}

#[test]
fn peregrine_client_omniorb_server() {
    bounded(300, || {
        let p = peers();
        let server = Peer::spawn("omniORB vrefs_server", &p.vrefs_server, &extra_args());
        call_server(server, "cxx");
    });
}

#[test]
fn peregrine_client_omniorbpy_server() {
    bounded(300, || {
        let Some(py) = omniorbpy() else { return };
        call_server(
            py.spawn("omniORBpy vrefs server", "vrefs_server.py", &[]),
            "py",
        );
    });
}

/// Calls the `Bank` that `server` serves (`peer` is how its Note describes
/// itself) and checks what comes back.
fn call_server(mut server: Peer, peer: &str) {
    {
        let t = Duration::from_secs(60);
        let ior = server.wait_for("BANK ", t);
        server.wait_for("READY", t);
        let (orb, mine, shop) = orb_with_servants();
        let bank = v::BankRef::unchecked_narrow(orb.string_to_object(&ior).unwrap());

        // The peer deposits through the reference sent, and reads the
        // balance through another member.
        let w: ValueSlot<v::Wallet> = ValueRef::new(wallet("rust", &mine, None)).into();
        assert_eq!(bank.pay_into(&w, 7).unwrap(), 57);
        assert_eq!(mine.balance().unwrap(), 57);

        // Back from the peer: every reference is this side's account,
        // and the listed wallet came along.
        let mut first = wallet("first", &mine, None);
        first.next = ValueRef::new(wallet("second", &mine, None)).into();
        let back = bank.echo(&ValueRef::new(first).into()).unwrap();
        let back = back.get().expect("a wallet");
        assert_eq!(back.label, "first");
        assert_eq!(refs(back), (57, 57, 57, 57, true));
        assert_eq!(refs(back.next.get().expect("next")), (57, 57, 57, 57, true));

        // Made by the peer: two wallets listing each other, every
        // reference its own account (5).
        let made = bank.make().unwrap();
        let m = made.get().expect("a wallet");
        let second = m.next.get().expect("second");
        assert_eq!(
            (m.label.as_str(), second.label.as_str()),
            ("made", "second")
        );
        assert!(ValueRef::ptr_eq(second.next.get().expect("a cycle"), m));
        assert_eq!(refs(m), (5, 5, 5, 5, true));
        assert_eq!(refs(second), (5, 5, 5, 5, true));
        assert_eq!(bank.own().unwrap().unwrap().balance().unwrap(), 5);

        // Abstract interface members: the peer calls describe() on what
        // arrives (its own Note implementation for a value).
        let about = |d: Option<v::DescribableAbstract>| {
            bank.about(&ValueRef::new(wallet("a", &mine, d)).into())
                .unwrap()
        };
        assert_eq!(
            about(Some(v::DescribableAbstract::Object(shop.clone().into()))),
            "ref:rust shop"
        );
        let note =
            || v::DescribableAbstract::Value(ValueRef::new(v::Note::new("hi".into())).upcast());
        assert_eq!(about(Some(note())), format!("value:{peer} note hi"));
        assert_eq!(about(None), "nil");
        let back = bank
            .echo(&ValueRef::new(wallet("a", &mine, Some(note()))).into())
            .unwrap();
        assert_eq!(
            describe(back.get().unwrap().about.as_ref()).unwrap(),
            "value:rust note hi"
        );
        // A plain Wallet where the peer checks for a Tagged.
        assert_eq!(
            bank.extra(&ValueRef::new(wallet("t", &mine, None)).into())
                .unwrap(),
            -57
        );
        orb.shutdown(true);
    }
}

/// `VRefs::Bank` on Peregrine's side: its own account holds 5.
struct Bank {
    own: v::AccountRef,
}

impl v::Bank for Bank {
    fn pay_into(&self, purse: &ValueSlot<v::Wallet>, amount: i32) -> R<i32> {
        let w = purse.get().expect("a wallet");
        w.main.as_ref().expect("main").deposit(amount)?;
        w.owner.acct.as_ref().expect("owner's account").balance()
    }
    fn echo(&self, purse: &ValueSlot<v::Wallet>) -> R<ValueSlot<v::Wallet>> {
        Ok(purse.clone())
    }
    fn make(&self) -> R<ValueSlot<v::Wallet>> {
        // Two wallets, the second listing the first through a slot
        // filled once the first exists.
        let second = ValueRef::new(wallet("second", &self.own, None));
        let mut first = wallet("made", &self.own, None);
        first.next = second.clone().into();
        let first = ValueRef::new(first);
        second.next.set(first.clone()).expect("empty slot");
        Ok(first.into())
    }
    fn own(&self) -> R<Option<v::AccountRef>> {
        Ok(Some(self.own.clone()))
    }
    fn about(&self, purse: &ValueSlot<v::Wallet>) -> R<String> {
        describe(purse.get().and_then(|w| w.about.as_ref()))
    }
    fn extra(&self, purse: &ValueSlot<v::Wallet>) -> R<i32> {
        // A `Tagged` arrives truncated to the `Wallet` this slot holds.
        let w = purse.get().expect("a wallet");
        Ok(-w.main.as_ref().expect("main").balance()?)
    }
}

#[test]
fn omniorb_client_peregrine_server() {
    bounded(300, || {
        let p = peers();
        serve_client(|ior| {
            let mut args = vec![ior];
            args.extend(extra_args());
            Peer::spawn("omniORB vrefs_client", &p.vrefs_client, &args)
        });
    });
}

#[test]
fn omniorbpy_client_peregrine_server() {
    bounded(300, || {
        let Some(py) = omniorbpy() else { return };
        serve_client(|ior| py.spawn("omniORBpy vrefs client", "vrefs_client.py", &[ior]));
    });
}

/// Serves a `Bank` to the client `spawn` starts with its IOR, and checks
/// that the client passed every step.
fn serve_client(spawn: impl FnOnce(String) -> Peer) {
    {
        let (orb, own, _shop) = {
            let orb = serving_orb();
            let own = orb
                .root_poa()
                .servant_to_reference(&Arc::new(v::AccountSkeleton::new(AccountImpl(Mutex::new(
                    5,
                )))))
                .unwrap();
            (orb, own, ())
        };
        let bank = orb
            .root_poa()
            .servant_to_reference(&Arc::new(v::BankSkeleton::new(Bank { own })))
            .unwrap();
        let ior = orb.object_to_string(bank.object());
        let mut client = spawn(ior);
        let status = client.finish(Duration::from_secs(240));
        let lines = client.lines().to_vec();
        let stderr = client.stderr();
        assert!(status.success(), "{status}: {lines:#?}\n{stderr}");
        let oks: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("OK ")).collect();
        assert_eq!(
            oks,
            [
                "pay into",
                "echo",
                "make",
                "own",
                "about ref",
                "about value",
                "about nil",
                "echo about",
                "extra truncated",
            ],
            "{lines:#?}\n{stderr}"
        );
        orb.shutdown(true);
    }
}
