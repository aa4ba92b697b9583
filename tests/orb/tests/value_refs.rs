//! Valuetypes whose state holds object references (`idl/value_refs.idl`)
//! over real TCP: a `Wallet` carries a reference to an `Account` servant
//! (also as `Object`, inside a struct, a sequence, a union, a value box
//! and an abstract interface member) and the receiver calls through it;
//! nil references; a value shared between two values; a reference made
//! by the server coming back to the client; a user exception raised by
//! a valuetype's operation; the table-driven form (`Teller`); an `Any`
//! and DII requests; structs and sequences holding such values;
//! a truncatable (chunked) value truncated to its base with a reference
//! in the part skipped; and hostile input (a malformed IOR inside a
//! value, a value read where no ORB was handed over).

use std::sync::{Arc, Mutex};

use peregrine_cdr::{
    read_value, write_value, ByteOrder, CdrError, Decode, Reader, ValueObject, ValueRef, ValueSlot,
    Writer,
};
use peregrine_dynamic::{Any, DynValue, ToAny};
use peregrine_giop::system_exception::minor;
use peregrine_orb::{ObjectRef, Orb, SystemException, SystemExceptionKind as K};
use peregrine_orb_tests::idl::value_refs::{
    wallet::SpendError, Account, AccountBox, AccountRef, AccountSkeleton, Bank, BankRef,
    BankSkeleton, Describable, DescribableAbstract, Envelope, Note, Owner, Shop, ShopRef,
    ShopSkeleton, Slot, Tagged, Teller, TellerRef, TellerSkeleton, Wallet, WalletOperations,
    Wallets,
};
use peregrine_orb_tests::{bounded, client};

type R<T> = Result<T, SystemException>;
type Vb = ValueSlot<dyn ValueObject>;

/// The `Wallet` a `ValueBase` slot holds, if it holds one.
fn as_wallet(v: &Vb) -> Option<ValueRef<Wallet>> {
    v.get()?.clone().into_any_value().downcast::<Wallet>().ok()
}

// ---- the server's side ----

struct AccountImpl(Mutex<i32>);

impl Account for AccountImpl {
    fn balance(&self) -> R<i32> {
        Ok(*self.0.lock().unwrap())
    }
    fn deposit(&self, amount: i32) -> R<()> {
        *self.0.lock().unwrap() += amount;
        Ok(())
    }
}

struct ShopImpl;

impl Describable for ShopImpl {
    fn describe(&self) -> R<String> {
        Ok("the shop".into())
    }
}

impl Shop for ShopImpl {
    fn name(&self) -> R<String> {
        Ok("shop".into())
    }
}

/// The bank: pays into the wallet's account through its reference.
struct BankImpl {
    own: AccountRef,
}

fn pay_into(purse: &ValueSlot<Wallet>, amount: i32) -> R<i32> {
    let w = purse.get().expect("a wallet");
    let acct = w.main.as_ref().expect("a reference to an account");
    acct.deposit(amount)?;
    acct.balance()
}

impl Bank for BankImpl {
    fn pay_into(&self, purse: &ValueSlot<Wallet>, amount: i32) -> R<i32> {
        pay_into(purse, amount)
    }
    fn echo(&self, purse: &ValueSlot<Wallet>) -> R<ValueSlot<Wallet>> {
        Ok(purse.clone())
    }
    fn make(&self) -> R<ValueSlot<Wallet>> {
        Ok(ValueRef::new(wallet("made", Some(self.own.clone()), None)).into())
    }
    fn total(&self, env: &Envelope, all: &[ValueSlot<Wallet>]) -> R<(i32, Wallets)> {
        let main = |w: &ValueSlot<Wallet>| -> R<i32> {
            w.get()
                .and_then(|w| w.main.as_ref())
                .expect("main")
                .balance()
        };
        let mut sum = main(&env.purse)? + env.stamp;
        for w in all {
            sum += main(w)?;
        }
        Ok((sum, all.to_vec()))
    }
    fn base_balance(&self, v: &Vb) -> R<(i32, Vb)> {
        let w = as_wallet(v).expect("a wallet");
        Ok((w.main.as_ref().expect("main").balance()?, v.clone()))
    }
    fn about(&self, purse: &ValueSlot<Wallet>) -> R<String> {
        match purse.get().and_then(|w| w.about.as_ref()) {
            None => Ok("nil".into()),
            Some(a) => {
                let kind = if a.object().is_some() { "ref" } else { "value" };
                Ok(format!("{kind}: {}", a.describe()?))
            }
        }
    }
}

impl Teller for BankImpl {
    fn pay_into(&self, purse: &ValueSlot<Wallet>, amount: i32) -> R<i32> {
        pay_into(purse, amount)
    }
    fn echo(&self, purse: &ValueSlot<Wallet>) -> R<ValueSlot<Wallet>> {
        Ok(purse.clone())
    }
    fn base_balance(&self, v: &Vb) -> R<(i32, Vb)> {
        Bank::base_balance(self, v)
    }
}

/// A wallet whose every reference member designates `acct`.
fn wallet(label: &str, acct: Option<AccountRef>, about: Option<DescribableAbstract>) -> Wallet {
    Wallet::new(
        label.into(),
        acct.clone(),
        acct.clone().map(ObjectRef::from),
        Owner {
            name: "ann".into(),
            acct: acct.clone(),
        },
        vec![acct.clone(), None],
        Slot::Acct(acct.clone()),
        ValueSlot::default(),
        ValueRef::new(AccountBox(acct)).into(),
        about,
    )
}

struct World {
    _server: Orb,
    client: Orb,
    bank: BankRef,
    teller: TellerRef,
    /// The account, seen from the client.
    acct: AccountRef,
    shop: ShopRef,
}

fn world() -> World {
    let server = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
    let root = server.root_poa();
    root.manager().activate().unwrap();
    let acct: AccountRef = root
        .servant_to_reference(&Arc::new(AccountSkeleton::new(AccountImpl(Mutex::new(
            100,
        )))))
        .unwrap();
    let own: AccountRef = root
        .servant_to_reference(&Arc::new(AccountSkeleton::new(AccountImpl(Mutex::new(5)))))
        .unwrap();
    let shop: ShopRef = root
        .servant_to_reference(&Arc::new(ShopSkeleton::new(ShopImpl)))
        .unwrap();
    let bank: BankRef = root
        .servant_to_reference(&Arc::new(BankSkeleton::new(BankImpl { own: own.clone() })))
        .unwrap();
    let teller: TellerRef = root
        .servant_to_reference(&Arc::new(TellerSkeleton::new(BankImpl { own })))
        .unwrap();
    let client = client();
    let see = |o: &ObjectRef| client.string_to_object(&o.to_string()).unwrap();
    World {
        bank: BankRef::unchecked_narrow(see(bank.object())),
        teller: TellerRef::unchecked_narrow(see(teller.object())),
        acct: AccountRef::unchecked_narrow(see(acct.object())),
        shop: ShopRef::unchecked_narrow(see(shop.object())),
        client,
        _server: server,
    }
}

/// Every reference member of `w` designates an account with `balance`
/// (called through each), or is nil.
fn check_refs(w: &Wallet, balance: i32) {
    assert_eq!(w.main.as_ref().unwrap().balance().unwrap(), balance);
    let obj = w.any_obj.as_ref().expect("Object member");
    let as_acct = AccountRef::unchecked_narrow(obj.clone());
    assert_eq!(as_acct.balance().unwrap(), balance);
    assert_eq!(w.owner.acct.as_ref().unwrap().balance().unwrap(), balance);
    assert_eq!(w.more.len(), 2);
    assert_eq!(w.more[0].as_ref().unwrap().balance().unwrap(), balance);
    assert!(w.more[1].is_none(), "a nil reference stays nil");
    match &w.slot {
        Slot::Acct(Some(a)) => assert_eq!(a.balance().unwrap(), balance),
        other => panic!("slot: {other:?}"),
    }
    let boxed = w.boxed.get().expect("box");
    assert_eq!(boxed.0.as_ref().unwrap().balance().unwrap(), balance);
}

#[test]
fn the_receiver_calls_through_a_reference_in_a_value() {
    bounded(60, || {
        let w = world();
        let purse: ValueSlot<Wallet> =
            ValueRef::new(wallet("mine", Some(w.acct.clone()), None)).into();
        assert_eq!(w.bank.pay_into(&purse, 20).unwrap(), 120);
        assert_eq!(w.acct.balance().unwrap(), 120);
        // The table-driven skeleton binds the references as well.
        assert_eq!(w.teller.pay_into(&purse, 1).unwrap(), 121);
        assert_eq!(w.acct.balance().unwrap(), 121);
    });
}

#[test]
fn values_with_references_come_back_whole_and_shared() {
    bounded(60, || {
        let w = world();
        // Two wallets sharing one box (written once, then an
        // indirection), the first listing the second.
        let shared = ValueSlot::from(ValueRef::new(AccountBox(Some(w.acct.clone()))));
        let mut second = wallet("second", Some(w.acct.clone()), None);
        second.boxed = shared.clone();
        let mut first = wallet("first", Some(w.acct.clone()), None);
        first.boxed = shared;
        first.next = ValueRef::new(second).into();
        let purse: ValueSlot<Wallet> = ValueRef::new(first).into();
        for back in [w.bank.echo(&purse).unwrap(), w.teller.echo(&purse).unwrap()] {
            let first = back.get().expect("a wallet");
            assert_eq!(first.label, "first");
            check_refs(first, 100);
            let second = first.next.get().expect("the second wallet");
            assert_eq!(second.label, "second");
            check_refs(second, 100);
            assert!(
                ValueRef::ptr_eq(first.boxed.get().unwrap(), second.boxed.get().unwrap()),
                "the shared box stays shared"
            );
        }
        // All nil: a nil reference in every place.
        let empty: ValueSlot<Wallet> = ValueRef::new(wallet("empty", None, None)).into();
        let back = w.bank.echo(&empty).unwrap();
        let e = back.get().unwrap();
        assert!(e.main.is_none() && e.any_obj.is_none() && e.owner.acct.is_none());
        assert!(e.more.iter().all(Option::is_none));
        assert!(matches!(e.slot, Slot::Acct(None)));
        assert!(e.boxed.get().unwrap().0.is_none());
        // A null value is still null.
        assert!(w.bank.echo(&ValueSlot::default()).unwrap().get().is_none());
    });
}

#[test]
fn a_value_made_by_the_server_is_bound_to_the_client_orb() {
    bounded(60, || {
        let w = world();
        let made = w.bank.make().unwrap();
        let made = made.get().expect("a wallet");
        assert_eq!(made.label, "made");
        check_refs(made, 5);
        // The value's operation (local) calls through its reference and
        // raises the user exception the IDL declares.
        assert_eq!(made.spend(2).unwrap(), 3);
        match made.spend(10) {
            Err(SpendError::Overdrawn(o)) => assert_eq!(o.missing, 7),
            other => panic!("spend(10): {other:?}"),
        }
        assert_eq!(made.main.as_ref().unwrap().balance().unwrap(), 3);
    });
}

#[test]
fn abstract_interface_members_hold_a_reference_a_value_or_nil() {
    bounded(60, || {
        let w = world();
        let cases = [
            (
                Some(DescribableAbstract::Object(w.shop.clone().into())),
                "ref: the shop",
            ),
            (
                Some(DescribableAbstract::Value(
                    ValueRef::new(Note::new("hi".into())).upcast(),
                )),
                "value: note: hi",
            ),
            (None, "nil"),
        ];
        for (about, want) in cases {
            let purse: ValueSlot<Wallet> = ValueRef::new(wallet("a", None, about)).into();
            assert_eq!(w.bank.about(&purse).unwrap(), want);
            // And back to the client, where the reference is callable.
            let back = w.bank.echo(&purse).unwrap();
            let got = match back.get().unwrap().about.as_ref() {
                None => "nil".to_string(),
                Some(a) => a.describe().unwrap(),
            };
            assert!(want.ends_with(&got), "{want} / {got}");
        }
    });
}

#[test]
fn an_any_holds_a_value_with_references() {
    bounded(60, || {
        let w = world();
        let purse: ValueSlot<Wallet> =
            ValueRef::new(wallet("in any", Some(w.acct.clone()), None)).into();
        let any = Any::new(
            <Wallet as peregrine_dynamic::IdlType>::type_code(),
            purse.to_dyn(),
        );
        // The dynamic layer holds the references as IORs, as it does
        // for a struct's, and its interpreter carries them through CDR.
        let mut wr = Writer::new(ByteOrder::Big);
        peregrine_cdr::Encode::encode(&any, &mut wr).unwrap();
        let bytes = wr.into_vec();
        let any = <Any as Decode>::decode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap();
        let DynValue::Value(Some(node)) = &any.value else {
            panic!("not a value: {:?}", any.value)
        };
        let node = node.node().expect("alive");
        let ior = |v: &DynValue| match v {
            DynValue::ObjRef(ior) => ior.type_id.clone(),
            other => panic!("not a reference: {other:?}"),
        };
        assert_eq!(
            ior(&node.member("main").unwrap()),
            "IDL:ValueRefs/Account:1.0"
        );
        assert_eq!(
            ior(&node.member("any_obj").unwrap()),
            "IDL:ValueRefs/Account:1.0"
        );
        let DynValue::Sequence(more) = node.member("more").unwrap() else {
            panic!("more")
        };
        assert_eq!(ior(&more[1]), "", "a nil reference");
        // Extraction binds them to an ORB; without one it finds nothing.
        assert!(any.get::<ValueSlot<Wallet>>().is_none());
        let back = Wallet::from_any_in(&any, &w.client).expect("a wallet");
        check_refs(back.get().unwrap(), 100);
    });
}

/// The client ORB as a reader's value context.
fn bound<'a>(bytes: &'a [u8], orb: &Orb) -> Reader<'a> {
    let mut r = Reader::new(bytes, ByteOrder::Big);
    let orb = orb.clone();
    r.set_value_context(move || Arc::new(orb));
    r
}

#[test]
fn a_truncatable_value_is_cut_down_past_its_reference() {
    bounded(60, || {
        let w = world();
        let mut other = w.acct.clone();
        let extra = w.bank.make().unwrap();
        if let Some(own) = extra.get().and_then(|x| x.main.clone()) {
            other = own;
        }
        let base = wallet("tagged", Some(w.acct.clone()), None);
        let tagged = ValueRef::new(Tagged::new(
            base.label,
            base.main,
            base.any_obj,
            base.owner,
            base.more,
            base.slot,
            base.next,
            base.boxed,
            base.about,
            Some(other.clone()),
        ));
        let mut wr = Writer::new(ByteOrder::Big);
        write_value(&mut wr, Some(&tagged)).unwrap();
        // The same value twice: the second is an indirection.
        write_value(&mut wr, Some(&tagged)).unwrap();
        let bytes = wr.into_vec();
        // Read whole, the extra reference works...
        let mut r = bound(&bytes, &w.client);
        let whole = read_value::<Tagged>(&mut r).unwrap().take_slot();
        let whole = whole.get().unwrap();
        assert_eq!(whole.extra.as_ref().unwrap().balance().unwrap(), 5);
        check_refs_tagged(whole);
        // ...and read as a `Wallet` the chunks holding `extra`'s IOR are
        // skipped, and the indirection leads to the same truncated value.
        let mut r = bound(&bytes, &w.client);
        let a = read_value::<Wallet>(&mut r).unwrap().take_slot();
        let b = read_value::<Wallet>(&mut r).unwrap().take_slot();
        assert!(ValueRef::ptr_eq(a.get().unwrap(), b.get().unwrap()));
        assert_eq!(r.remaining(), 0);
        check_refs(a.get().unwrap(), 100);
    });
}

fn check_refs_tagged(t: &Tagged) {
    assert_eq!(t.main.as_ref().unwrap().balance().unwrap(), 100);
    assert_eq!(t.owner.acct.as_ref().unwrap().balance().unwrap(), 100);
}

/// The bytes of a `Wallet` with `label`, and a malformed IOR for `main`
/// (its type id's length runs past the input).
fn hostile_wallet() -> Vec<u8> {
    let mut w = Writer::new(ByteOrder::Big);
    w.write_u32(0x7fff_ff02);
    w.write_string(Wallet::REPOSITORY_ID).unwrap();
    w.write_string("evil").unwrap();
    // IOR: type id length far past the end.
    w.write_u32(0x00ff_ffff);
    w.write_u32(0);
    w.into_vec()
}

#[test]
fn a_malformed_reference_inside_a_value_is_marshal() {
    let orb = client();
    let bytes = hostile_wallet();
    let mut r = bound(&bytes, &orb);
    let err = <ValueSlot<Wallet> as Decode>::decode(&mut r).unwrap_err();
    let e = SystemException::from_cdr(&err, peregrine_orb::CompletionStatus::No);
    assert_eq!(e.kind, K::Marshal, "{err}");
    assert_eq!(e.minor, minor::MARSHAL_LENGTH_EXCEEDS_INPUT, "{err}");
    // Every truncation of the bytes: an error, never a panic.
    let acct =
        AccountRef::unchecked_narrow(orb.string_to_object("corbaloc::127.0.0.1:9/acct").unwrap());
    let whole = {
        let purse: ValueSlot<Wallet> = ValueRef::new(wallet("w", Some(acct), None)).into();
        let mut w = Writer::new(ByteOrder::Big);
        purse.encode_to(&mut w);
        w.into_vec()
    };
    for n in 0..whole.len() {
        let mut r = bound(&whole[..n], &orb);
        assert!(
            <ValueSlot<Wallet> as Decode>::decode(&mut r).is_err(),
            "{n}"
        );
    }
    let mut r = bound(&whole, &orb);
    assert!(<ValueSlot<Wallet> as Decode>::decode(&mut r).is_ok());
    // Every octet changed in turn (lengths, tags, IOR fields): a value
    // or an error, never a panic.
    for i in 0..whole.len() {
        for b in [0x00, 0x7f, 0xff] {
            let mut bad = whole.clone();
            bad[i] = b;
            let mut r = bound(&bad, &orb);
            let _ = <ValueSlot<Wallet> as Decode>::decode(&mut r);
        }
    }
}

#[test]
fn a_value_with_references_read_without_an_orb_is_marshal() {
    let purse: ValueSlot<Wallet> = ValueRef::new(wallet("w", None, None)).into();
    let mut w = Writer::new(ByteOrder::Big);
    purse.encode_to(&mut w);
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes, ByteOrder::Big);
    let err = <ValueSlot<Wallet> as Decode>::decode(&mut r).unwrap_err();
    assert_eq!(err, CdrError::NoValueContext);
    let e = SystemException::from_cdr(&err, peregrine_orb::CompletionStatus::No);
    assert_eq!(
        (e.kind, e.minor),
        (K::Marshal, minor::MARSHAL_NO_VALUE_CONTEXT)
    );
}

trait EncodeTo {
    fn encode_to(&self, w: &mut Writer);
}

impl EncodeTo for ValueSlot<Wallet> {
    fn encode_to(&self, w: &mut Writer) {
        peregrine_cdr::Encode::encode(self, w).unwrap();
    }
}

#[test]
fn a_malformed_reference_inside_a_value_over_tcp_is_marshal_and_the_server_lives() {
    bounded(60, || {
        let w = world();
        for obj in [w.bank.object(), w.teller.object()] {
            // `pay_into` with a wallet whose `main` IOR announces a type id
            // far longer than the request.
            let got: Result<i32, SystemException> = obj.invoke(
                "pay_into",
                |wr: &mut Writer| {
                    wr.write_u32(0x7fff_ff02);
                    wr.write_string(Wallet::REPOSITORY_ID)?;
                    wr.write_string("evil")?;
                    wr.write_u32(0x00ff_ffff);
                    wr.write_u32(0);
                    Ok(())
                },
                |r: &mut Reader<'_>| {
                    let v = i32::decode(r)?;
                    Ok(v)
                },
                |_: &str, _: &mut Reader<'_>| None::<peregrine_cdr::Result<SystemException>>,
            );
            let e = got.unwrap_err();
            assert_eq!(
                (e.kind, e.minor),
                (K::Marshal, minor::MARSHAL_LENGTH_EXCEEDS_INPUT),
                "{e}"
            );
        }
        // The server goes on serving.
        let purse: ValueSlot<Wallet> =
            ValueRef::new(wallet("after", Some(w.acct.clone()), None)).into();
        assert_eq!(w.bank.pay_into(&purse, 1).unwrap(), 101);
    });
}

#[test]
fn dii_requests_carry_values_with_references_both_ways() {
    bounded(60, || {
        let w = world();
        let tc = <Wallet as peregrine_dynamic::IdlType>::type_code();
        let purse: ValueSlot<Wallet> =
            ValueRef::new(wallet("dii", Some(w.acct.clone()), None)).into();
        // The interpreter writes the value (its references as IORs) and
        // the compiled skeleton calls through them.
        let mut req = w.bank.object().request("pay_into");
        req.add_in_arg("purse", Any::new(tc.clone(), purse.to_dyn()))
            .add_in_arg("amount", Any::insert(&30i32))
            .set_return_type(peregrine_dynamic::TypeCode::long());
        req.invoke().unwrap();
        assert_eq!(req.return_value().get::<i32>(), Some(130));
        // And reads one back, extracted with the client's ORB.
        let mut req = w.bank.object().request("echo");
        req.add_in_arg("purse", Any::new(tc.clone(), purse.to_dyn()))
            .set_return_type(tc);
        req.invoke().unwrap();
        let back = Wallet::from_any_in(req.return_value(), &w.client).expect("a wallet");
        check_refs(back.get().unwrap(), 130);
    });
}

#[test]
fn structs_and_sequences_hold_values_with_references() {
    bounded(60, || {
        let w = world();
        let one: ValueSlot<Wallet> =
            ValueRef::new(wallet("one", Some(w.acct.clone()), None)).into();
        let env = Envelope {
            purse: one.clone(),
            stamp: 1,
        };
        // The same wallet three times: written once, then indirections.
        let (sum, back) = w.bank.total(&env, &[one.clone(), one.clone()]).unwrap();
        assert_eq!(sum, 301);
        assert_eq!(back.len(), 2);
        assert!(ValueRef::ptr_eq(
            back[0].get().unwrap(),
            back[1].get().unwrap()
        ));
        check_refs(back[0].get().unwrap(), 100);
    });
}

#[test]
fn a_value_with_references_in_a_value_base_slot_is_bound_too() {
    bounded(60, || {
        let w = world();
        let purse = ValueRef::new(wallet("base", Some(w.acct.clone()), None));
        let v: Vb = ValueSlot::new(purse.upcast());
        // The skeleton and the stub hand the ORB to the reader before the
        // `ValueBase` slot, whose reader finds a value with references.
        let (balance, back) = w.bank.base_balance(&v).unwrap();
        assert_eq!(balance, 100);
        check_refs(&as_wallet(&back).expect("a wallet back"), 100);
        // The table-driven form: the engine's `ValueBase` reader gets the
        // call's ORB.
        let (balance, back) = w.teller.base_balance(&v).unwrap();
        assert_eq!(balance, 100);
        check_refs(&as_wallet(&back).expect("a wallet back"), 100);
    });
}
