//! How IDL maps to Rust, by example.
//!
//! This module holds no code, only documentation: one section per kind of
//! IDL definition, each with the IDL and a tested Rust example of what
//! the code generator (`peregrine-build` in a build script, or the `idlc`
//! command) makes of it and how to use it. The complete mapping table,
//! with the rules behind every choice, is `docs/mapping.md` in the
//! Peregrine repository.
//!
//! All examples use one IDL file, a small shop, shown piece by piece
//! below. Its generated code is included the way the crate's front page
//! does it; in your own crate the build script writes it and
//! `mod idl { peregrine::include_idl!(); }` includes it.
//!
//! # Names
//!
//! Every IDL name keeps its words and takes Rust's case conventions:
//! modules, operations, attributes, members and parameters become
//! `snake_case` (`Shop` -> `shop`, `sendShortSeq` -> `send_short_seq`),
//! types and enumerators `UpperCamelCase` (`standard` -> `Standard`,
//! `IORTable` -> `IorTable`), constants `SCREAMING_SNAKE_CASE`
//! (`MaxLines` -> `MAX_LINES`). A name that is a Rust keyword becomes a
//! raw identifier (`type` -> `r#type`), or gets a `_` suffix where Rust
//! has none (`self` -> `self_`). IDL comments become the items' rustdoc.
//!
//! # Modules
//!
//! ```idl
//! module Shop {
//!   module Tax {
//!     const double Rate = 0.25;
//!   };
//!   interface Till { /* ... */ };
//! };
//! ```
//!
//! An IDL module is a Rust module (`Shop` -> `shop`, nested `Tax` ->
//! `shop::tax`). Types defined inside an interface, struct, union or
//! exception go into a module named after it, and every interface has
//! one: `shop::till` holds the error enums of `Till`'s operations (see
//! [Exceptions](#exceptions)). Repository ids keep the IDL's scopes.
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use idl::shop;
//!
//! assert_eq!(shop::tax::RATE, 0.25);
//! assert_eq!(shop::Article::REPOSITORY_ID, "IDL:Shop/Article:1.0");
//!
//! // The errors `Till::sell` can raise, in `Till`'s module.
//! let e = shop::till::SellError::from(shop::OutOfStock { item: "tea".into(), available: 0 });
//! assert!(matches!(e, shop::till::SellError::OutOfStock(_)));
//! ```
//!
//! # Constants
//!
//! ```idl
//! const unsigned long MaxLines = 3;
//! const string Currency = "EUR";
//! const double Pi = 3.25;
//! const Grade Usual = standard;   // an enum constant
//! ```
//!
//! A `const` is a Rust `const` of the mapped type holding the evaluated
//! value (IDL constant expressions are evaluated by the generator);
//! `string` constants are `&str`.
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use idl::shop::{self, Grade};
//!
//! let lines: u32 = shop::MAX_LINES;
//! let currency: &str = shop::CURRENCY;
//! assert_eq!((lines, currency, shop::PI), (3, "EUR", 3.25));
//! assert_eq!(shop::USUAL, Grade::Standard);
//! ```
//!
//! # Typedefs
//!
//! ```idl
//! typedef string Text;
//! typedef long Cents;
//! ```
//!
//! A `typedef` is a Rust type alias (`pub type Text = String;`), so a
//! `Cents` is an `i32` and mixes with one freely. Basic types map as
//! `short`/`long`/`long long` -> `i16`/`i32`/`i64` (`u16`/`u32`/`u64`
//! unsigned), `float`/`double` -> `f32`/`f64`, `boolean` -> `bool`,
//! `char` and `octet` -> `u8`, `wchar` -> `char`, `string` and `wstring`
//! -> `String`. Because an alias cannot carry trait impls, each typedef
//! also gets free functions: its TypeCode `tc_<name>()` and
//! `<name>_to_any` / `<name>_from_any` (see [`any` and
//! TypeCode](#any-and-typecode)).
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use idl::shop::{self, Cents, Text};
//! use peregrine::dynamic::TcKind;
//!
//! let name: Text = String::from("tea");
//! let price: Cents = 250;
//! let doubled: i32 = price * 2;
//! assert_eq!((name.as_str(), doubled), ("tea", 500));
//!
//! // The TypeCode is an alias of `long`, named as in the IDL.
//! let tc = shop::tc_cents();
//! assert_eq!(tc.kind(), TcKind::Alias);
//! assert_eq!(tc.id()?, "IDL:Shop/Cents:1.0");
//! assert_eq!(tc.content_type()?.kind(), TcKind::Long);
//! # Ok::<(), peregrine::dynamic::DynError>(())
//! ```
//!
//! # Structs
//!
//! ```idl
//! struct Article {
//!   Text  name;
//!   Cents price;
//!   Grade quality;
//! };
//! ```
//!
//! A struct is a Rust struct with public fields, deriving `Debug`,
//! `Clone` and `PartialEq` (`Default` only for the plain-data structs
//! below, so build one with all its fields), with a `REPOSITORY_ID` and
//! the CDR traits `peregrine::cdr::Encode` and `Decode`, which the ORB
//! uses to marshal it and which you can call directly:
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use idl::shop::{Article, Grade};
//! use peregrine::cdr::{ByteOrder, Decode, Encode, Reader, Writer};
//!
//! let tea = Article { name: "tea".into(), price: 250, quality: Grade::Standard };
//! let copy = tea.clone();
//! assert_eq!(copy, tea);
//! assert_eq!(Article::REPOSITORY_ID, "IDL:Shop/Article:1.0");
//!
//! // CDR: the string (length 4 including its NUL), the long, the enum.
//! let mut w = Writer::new(ByteOrder::Big);
//! tea.encode(&mut w)?;
//! assert_eq!(w.as_slice(), b"\0\0\0\x04tea\0\0\0\0\xfa\0\0\0\x01");
//!
//! let mut r = Reader::new(w.as_slice(), ByteOrder::Big);
//! assert_eq!(Article::decode(&mut r)?, tea);
//! assert!(r.is_empty());
//!
//! // The same value in the other byte order.
//! let mut w = Writer::new(ByteOrder::Little);
//! tea.encode(&mut w)?;
//! assert_eq!(Article::decode(&mut Reader::new(w.as_slice(), ByteOrder::Little))?, tea);
//! # Ok::<(), peregrine::cdr::CdrError>(())
//! ```
//!
//! Structs made only of numbers, `char`, `octet` and arrays of them whose
//! memory layout equals their CDR layout are additionally `#[repr(C)]`
//! and `Copy`, and sequences of them are copied in bulk.
//!
//! # Enums
//!
//! ```idl
//! enum Grade { basic, standard, premium };
//! ```
//!
//! An enum is a `#[repr(u32)]` Rust enum deriving `Copy`, `Eq`, `Hash`
//! and `Ord`; its value on the wire is the ordinal. `from_u32` converts
//! back and rejects values outside the enum, as decoding does.
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use idl::shop::Grade;
//! use peregrine::cdr::CdrError;
//!
//! assert_eq!(Grade::Premium as u32, 2);
//! assert_eq!(Grade::COUNT, 3);
//! assert_eq!(Grade::from_u32(1), Ok(Grade::Standard));
//! assert_eq!(Grade::from_u32(7), Err(CdrError::InvalidEnum(7)));
//! assert!(Grade::Basic < Grade::Premium);
//! ```
//!
//! # Unions
//!
//! ```idl
//! union Payment switch (short) {
//!   case 1: Cents cash;
//!   case 2: case 3: Text card_holder;
//!   default: boolean pending;
//! };
//! ```
//!
//! A union is a Rust enum with one variant per branch, named after the
//! branch. A branch with one label is a tuple variant (`Cash(Cents)`). A
//! branch with several labels, and the `default:` branch, keep the
//! discriminator they were built or decoded with: `CardHolder { disc,
//! value }`, so a value sent with label 3 is echoed with 3, as omniORB
//! and JacORB do. Constructors pick the first label (`card_holder(v)`,
//! `pending(v)` takes the first value no label uses); `card_holder_with(3,
//! v)` picks another and refuses a label of another branch;
//! `discriminator()` is C++'s `_d()`. Encoding a value whose `disc`
//! selects another branch fails before anything is written. (A union
//! without `default:` whose labels leave values uncovered gets a
//! `Default(D)` variant for "no branch selected".)
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use idl::shop::Payment;
//! use peregrine::cdr::{ByteOrder, CdrError, Decode, Encode, Reader, Writer};
//!
//! fn describe(p: &Payment) -> String {
//!     match p {
//!         Payment::Cash(cents) => format!("{cents} cents cash"),
//!         Payment::CardHolder { value, .. } => format!("card of {value}"),
//!         Payment::Pending { value: urgent, .. } => format!("pending (urgent: {urgent})"),
//!     }
//! }
//! assert_eq!(describe(&Payment::Cash(250)), "250 cents cash");
//!
//! // Label 3 on the wire decodes as the `card_holder` branch...
//! let mut w = Writer::new(ByteOrder::Big);
//! 3i16.encode(&mut w)?;
//! "Ada".encode(&mut w)?;
//! let card = Payment::decode(&mut Reader::new(w.as_slice(), ByteOrder::Big))?;
//! assert_eq!(card, Payment::card_holder_with(3, "Ada".into())?);
//! assert_eq!(card.discriminator(), 3);
//!
//! // ...and encodes again with label 3.
//! let mut w = Writer::new(ByteOrder::Big);
//! card.encode(&mut w)?;
//! assert_eq!(&w.as_slice()[..2], &[0, 3]);
//! assert_eq!(Payment::card_holder("Bo".into()).discriminator(), 2);
//!
//! // The default branch keeps its discriminator; a label of another
//! // branch is refused, when building and when encoding.
//! let mut w = Writer::new(ByteOrder::Big);
//! Payment::pending_with(7, true)?.encode(&mut w)?;
//! let back = Payment::decode(&mut Reader::new(w.as_slice(), ByteOrder::Big))?;
//! assert_eq!(back, Payment::Pending { disc: 7, value: true });
//! assert_eq!(Payment::pending_with(2, true), Err(CdrError::InvalidDiscriminator));
//! let forged = Payment::Pending { disc: 2, value: true };
//! assert_eq!(forged.encode(&mut Writer::new(ByteOrder::Big)), Err(CdrError::InvalidDiscriminator));
//! # Ok::<(), CdrError>(())
//! ```
//!
//! # Sequences and arrays
//!
//! ```idl
//! typedef sequence<Article> Articles;
//! typedef Cents PriceGrid[2][3];
//! ```
//!
//! `sequence<T>` is `Vec<T>` (`in` parameters are borrowed as `&[T]`, or
//! `&[u8]` for `sequence<octet>`), and an array `T x[N][M]` is
//! `[[T; M]; N]`. On the wire a sequence has a length first, an array
//! does not.
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use idl::shop::{Article, Articles, Grade, PriceGrid};
//! use peregrine::cdr::{ByteOrder, Encode, Writer};
//!
//! let stock: Articles = vec![
//!     Article { name: "tea".into(), price: 250, quality: Grade::Standard },
//!     Article { name: "cake".into(), price: 300, quality: Grade::Premium },
//! ];
//! assert_eq!(stock.iter().map(|a| a.price).sum::<i32>(), 550);
//!
//! let mut grid: PriceGrid = [[0; 3]; 2];
//! grid[1][2] = 99;
//! let mut w = Writer::new(ByteOrder::Big);
//! grid.encode(&mut w)?;
//! assert_eq!(w.len(), 6 * 4); // six longs, no length
//! assert_eq!(&w.as_slice()[20..], &[0, 0, 0, 99]);
//! # Ok::<(), peregrine::cdr::CdrError>(())
//! ```
//!
//! # Bounded strings and sequences
//!
//! ```idl
//! typedef sequence<Article, MaxLines> Basket;
//! typedef string<8> Sku;
//!
//! struct Order {
//!   Sku    code;
//!   Basket lines;
//! };
//! ```
//!
//! Bounded types are plain `String` and `Vec<T>` too (the aliases `Sku`
//! and `Basket` say nothing about the bound, and no constant names it),
//! so building an over-long value compiles and runs. The bound is checked
//! by the generated marshaling code wherever the bounded type is used (a
//! member, a parameter, a result), on encode and on decode, as
//! `peregrine::cdr::CdrError::BoundExceeded`; a call whose arguments
//! break a bound fails with `BAD_PARAM` before anything is sent.
//! `Encode` on a bare `Vec` or `String` knows no bound, and the
//! typedef's `<name>_to_any` cannot fail: given an over-long value it
//! returns an `Any` that fails when it is marshaled. A `string<N>` bound
//! counts UTF-8 octets, a `wstring<N>` bound characters.
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use idl::shop::{self, Article, Grade, Order};
//! use peregrine::cdr::{ByteOrder, CdrError, Decode, Encode, Reader, Writer};
//!
//! let tea = Article { name: "tea".into(), price: 250, quality: Grade::Standard };
//! let mut order = Order { code: "TEA-0001".into(), lines: vec![tea.clone(); 3] };
//! order.encode(&mut Writer::new(ByteOrder::Big))?; // 8 octets, 3 lines: fits
//!
//! order.lines.push(tea);
//! assert_eq!(order.lines.len() as u32, shop::MAX_LINES + 1);
//! assert_eq!(
//!     order.encode(&mut Writer::new(ByteOrder::Big)),
//!     Err(CdrError::BoundExceeded { bound: 3, len: 4 })
//! );
//!
//! // Decoding checks too: a 9-octet code from a peer is refused.
//! let mut w = Writer::new(ByteOrder::Big);
//! "TEA-00001".encode(&mut w)?;
//! w.write_u32(0); // no lines
//! assert_eq!(
//!     Order::decode(&mut Reader::new(w.as_slice(), ByteOrder::Big)),
//!     Err(CdrError::BoundExceeded { bound: 8, len: 9 })
//! );
//!
//! // `basket_to_any` cannot fail: an `Any` holding too long a basket is
//! // refused only when it is encoded.
//! let fits = shop::basket_to_any(&order.lines[..3].to_vec());
//! assert!(fits.encode(&mut Writer::new(ByteOrder::Big)).is_ok());
//! let too_long = shop::basket_to_any(&order.lines);
//! assert!(too_long.encode(&mut Writer::new(ByteOrder::Big)).is_err());
//! # Ok::<(), CdrError>(())
//! ```
//!
//! # Exceptions
//!
//! ```idl
//! exception OutOfStock {
//!   Text  item;
//!   short available;
//! };
//!
//! interface Till : Named {
//!   Cents sell(in Article item, in short count, in Cents paid, out Cents change)
//!     raises (OutOfStock);
//!   // ...
//! };
//! ```
//!
//! A user exception is a struct like any other (public fields, `Clone`,
//! `PartialEq`) that also implements `std::error::Error`. An operation
//! with a `raises` clause returns a per-operation error enum, in the
//! interface's module: `shop::till::SellError` has one variant per
//! exception the operation can raise and `System(SystemException)` for
//! the CORBA system exceptions every call can end with, and `From` impls
//! for all of them, so `?` and `.into()` convert. Operations without
//! `raises` return `Result<_, SystemException>`.
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use idl::shop::{till::SellError, OutOfStock};
//! use peregrine::{CompletionStatus, SystemException, SystemExceptionKind};
//!
//! // What a servant returns (the server sends it as a user exception)...
//! fn refuse(count: i16) -> Result<(i32, i32), SellError> {
//!     if count > 2 {
//!         return Err(OutOfStock { item: "tea".into(), available: 2 }.into());
//!     }
//!     Err(SystemException::new(SystemExceptionKind::NoResources, 0, CompletionStatus::No).into())
//! }
//!
//! // ...and what a client matches on.
//! match refuse(5) {
//!     Err(SellError::OutOfStock(e)) => assert_eq!((e.item.as_str(), e.available), ("tea", 2)),
//!     other => panic!("expected OutOfStock, got {other:?}"),
//! }
//! match refuse(1) {
//!     Err(SellError::System(e)) => assert_eq!(e.kind, SystemExceptionKind::NoResources),
//!     other => panic!("expected a system exception, got {other:?}"),
//! }
//!
//! // `Display` names the exception by its repository id.
//! let e = OutOfStock { item: "tea".into(), available: 2 };
//! assert_eq!(e.to_string(), "IDL:Shop/OutOfStock:1.0");
//! assert_eq!(SellError::from(e).to_string(), OutOfStock::REPOSITORY_ID);
//! ```
//!
//! # Interfaces
//!
//! ```idl
//! interface Named {
//!   readonly attribute Text name;
//! };
//!
//! interface Till : Named {
//!   attribute Cents balance;
//!   Cents sell(in Article item, in short count, in Cents paid, out Cents change)
//!     raises (OutOfStock);
//!   void round(inout Cents amount);
//!   oneway void log(in string line);
//! };
//! ```
//!
//! An interface `Till` gives three things:
//!
//! * the **servant trait** `Till`, which the server implements: one method
//!   per operation, and `get_x` (plus `set_x` unless `readonly`) per
//!   attribute. Methods take `&self` (calls may arrive on several threads
//!   at once, so mutable state goes behind a `Mutex` or atomics). `in`
//!   arguments are borrowed (`&Article`, `&str`, `&[T]`; numbers and
//!   enums by value), `inout` ones are `&mut T`, and `out` ones are
//!   returned after the result as a tuple: `sell` returns
//!   `(price, change)`. A derived interface's trait has its bases as
//!   supertraits (`trait Till: Named`), so a `Till` servant implements
//!   `Named` too;
//! * the **skeleton** `TillSkeleton<S>`, which wraps a servant
//!   (`TillSkeleton::new(servant)`) into something a POA can activate
//!   (a [`Servant`](crate::Servant): it answers `is_a` for `Till`, `Named`
//!   and `CORBA::Object` and dispatches requests to the trait's methods);
//! * the **stub** `TillRef`, an object reference with the same methods
//!   (its own and inherited ones) that calls the object wherever it is.
//!   `TillRef::narrow(obj)` turns a plain [`ObjectRef`](crate::ObjectRef)
//!   into a `TillRef` after checking the object's type (`Ok(None)` if it is
//!   not a `Till`), `TillRef::unchecked_narrow(obj)` trusts the caller,
//!   `.object()` gives the `ObjectRef` back, and `From` converts a
//!   `TillRef` into a `NamedRef` (an upcast) or an `ObjectRef`.
//!
//! A `oneway` operation returns once the request is sent, without waiting
//! for the servant. Activating a `TillSkeleton` with
//! [`Poa::servant_to_reference`](crate::Poa::servant_to_reference) gives a
//! `TillRef` directly.
//!
//! Here a server ORB and a client ORB in one process talk over TCP on
//! the loopback interface:
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use std::sync::{mpsc, Arc, Mutex};
//! use std::time::Duration;
//!
//! use idl::shop::{till::SellError, Article, Cents, Grade, Named, NamedRef, OutOfStock, Text};
//! use idl::shop::{Till, TillRef, TillSkeleton};
//! use peregrine::{CompletionStatus, Orb, SystemException, SystemExceptionKind};
//!
//! /// The servant: state behind a `Mutex`, as methods take `&self`.
//! struct Counter {
//!     balance: Mutex<Cents>,
//!     stock: i16,
//!     log: Mutex<mpsc::Sender<String>>,
//! }
//!
//! impl Named for Counter {
//!     fn get_name(&self) -> Result<Text, SystemException> {
//!         Ok("front desk".into())
//!     }
//! }
//!
//! impl Till for Counter {
//!     fn get_balance(&self) -> Result<Cents, SystemException> {
//!         Ok(*self.balance.lock().unwrap())
//!     }
//!     fn set_balance(&self, value: Cents) -> Result<(), SystemException> {
//!         *self.balance.lock().unwrap() = value;
//!         Ok(())
//!     }
//!     fn sell(
//!         &self,
//!         item: &Article,
//!         count: i16,
//!         paid: Cents,
//!     ) -> Result<(Cents, Cents), SellError> {
//!         if count > self.stock {
//!             return Err(OutOfStock { item: item.name.clone(), available: self.stock }.into());
//!         }
//!         let price = item.price * Cents::from(count);
//!         if paid < price {
//!             let kind = SystemExceptionKind::BadParam;
//!             return Err(SystemException::new(kind, 0, CompletionStatus::No).into());
//!         }
//!         *self.balance.lock().unwrap() += price;
//!         Ok((price, paid - price)) // the result, then the `out` parameter
//!     }
//!     fn round(&self, amount: &mut Cents) -> Result<(), SystemException> {
//!         *amount = (*amount + 2) / 5 * 5;
//!         Ok(())
//!     }
//!     fn log(&self, line: &str) -> Result<(), SystemException> {
//!         let _ = self.log.lock().unwrap().send(line.to_owned());
//!         Ok(())
//!     }
//! }
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Server: activate the servant, publish its reference as a string.
//!     let server = Orb::builder().listen("127.0.0.1", 0).build()?;
//!     let poa = server.root_poa();
//!     poa.manager().activate()?;
//!     let (log, logged) = mpsc::channel();
//!     let servant = Counter { balance: Mutex::new(0), stock: 2, log: Mutex::new(log) };
//!     let till: TillRef = poa.servant_to_reference(&Arc::new(TillSkeleton::new(servant)))?;
//!     let ior = server.object_to_string(till.object());
//!
//!     // Client: narrow the reference, then call.
//!     let client = Orb::builder().build()?;
//!     let till = TillRef::narrow(client.string_to_object(&ior)?)?.expect("a Till");
//!
//!     // Attributes.
//!     till.set_balance(1000)?;
//!     assert_eq!(till.get_balance()?, 1000);
//!
//!     // `in` and `out` parameters: the result and `change` as a tuple.
//!     let tea = Article { name: "tea".into(), price: 250, quality: Grade::Standard };
//!     let (price, change) = till.sell(&tea, 2, 600)?;
//!     assert_eq!((price, change), (500, 100));
//!     assert_eq!(till.get_balance()?, 1500);
//!
//!     // A user exception and a system exception, through the same error enum.
//!     match till.sell(&tea, 3, 1000) {
//!         Err(SellError::OutOfStock(e)) => assert_eq!(e.available, 2),
//!         other => panic!("expected OutOfStock, got {other:?}"),
//!     }
//!     match till.sell(&tea, 1, 100) {
//!         Err(SellError::System(e)) => assert_eq!(e.kind, SystemExceptionKind::BadParam),
//!         other => panic!("expected BAD_PARAM, got {other:?}"),
//!     }
//!
//!     // An `inout` parameter is changed in place.
//!     let mut amount = 1234;
//!     till.round(&mut amount)?;
//!     assert_eq!(amount, 1235);
//!
//!     // `oneway`: returns at once; the servant runs later.
//!     till.log("closing")?;
//!     assert_eq!(logged.recv_timeout(Duration::from_secs(10))?, "closing");
//!
//!     // Inheritance: inherited operations on the stub, and an upcast.
//!     assert_eq!(till.get_name()?, "front desk");
//!     let named: NamedRef = till.clone().into();
//!     assert_eq!(named.get_name()?, "front desk");
//!     assert!(NamedRef::narrow(till.object().clone())?.is_some());
//!
//!     server.shutdown(true);
//!     Ok(())
//! }
//! ```
//!
//! # Object references as parameters and results
//!
//! ```idl
//! interface Directory {
//!   void add(in Text key, in Named entry);
//!   Named find(in Text key);   // nil if nothing was added under `key`
//! };
//! ```
//!
//! An interface used as a type is `Option<NamedRef>`, `None` being the
//! nil reference; `in` parameters are borrowed as `Option<&NamedRef>`.
//! (`Object` is `Option<ObjectRef>`.) A reference the servant receives
//! talks through the server's ORB, one the client receives through the
//! client's.
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use std::collections::HashMap;
//! use std::sync::{Arc, Mutex};
//!
//! use idl::shop::{Directory, DirectoryRef, DirectorySkeleton, Named, NamedRef, NamedSkeleton};
//! use idl::shop::{Text, TillRef};
//! use peregrine::{Orb, SystemException};
//!
//! struct Label(String);
//!
//! impl Named for Label {
//!     fn get_name(&self) -> Result<Text, SystemException> {
//!         Ok(self.0.clone())
//!     }
//! }
//!
//! #[derive(Default)]
//! struct Entries(Mutex<HashMap<String, NamedRef>>);
//!
//! impl Directory for Entries {
//!     fn add(&self, key: &str, entry: Option<&NamedRef>) -> Result<(), SystemException> {
//!         let mut entries = self.0.lock().unwrap();
//!         match entry {
//!             Some(e) => entries.insert(key.to_owned(), e.clone()),
//!             None => entries.remove(key), // adding nil removes
//!         };
//!         Ok(())
//!     }
//!     fn find(&self, key: &str) -> Result<Option<NamedRef>, SystemException> {
//!         Ok(self.0.lock().unwrap().get(key).cloned())
//!     }
//! }
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Orb::builder().listen("127.0.0.1", 0).build()?;
//!     let poa = server.root_poa();
//!     poa.manager().activate()?;
//!     let dir = Arc::new(DirectorySkeleton::new(Entries::default()));
//!     let dir: DirectoryRef = poa.servant_to_reference(&dir)?;
//!     let tea = Arc::new(NamedSkeleton::new(Label("tea".into())));
//!     let tea: NamedRef = poa.servant_to_reference(&tea)?;
//!     let dir_ior = server.object_to_string(dir.object());
//!     let tea_ior = server.object_to_string(tea.object());
//!
//!     let client = Orb::builder().build()?;
//!     // `unchecked_narrow`: no question to the server; a wrong type shows
//!     // only when a call fails.
//!     let dir = DirectoryRef::unchecked_narrow(client.string_to_object(&dir_ior)?);
//!     let tea = NamedRef::unchecked_narrow(client.string_to_object(&tea_ior)?);
//!
//!     dir.add("drinks", Some(&tea))?;
//!     let found = dir.find("drinks")?.expect("added above");
//!     assert_eq!(found, tea); // the same object
//!     assert_eq!(found.get_name()?, "tea");
//!     assert_eq!(dir.find("cakes")?, None); // nil
//!
//!     dir.add("drinks", None)?;
//!     assert_eq!(dir.find("drinks")?, None);
//!
//!     // A checked narrow asks the object: a `Named` that is no `Till`.
//!     assert_eq!(TillRef::narrow(found.object().clone())?, None);
//!
//!     server.shutdown(true);
//!     Ok(())
//! }
//! ```
//!
//! # `any` and TypeCode
//!
//! ```idl
//! interface Inspector {
//!   string describe(in any value);
//! };
//! ```
//!
//! IDL `any` is [`peregrine::Any`](crate::Any): a value together with
//! its [`TypeCode`](crate::TypeCode). Every generated struct, union, enum,
//! exception and stub has its TypeCode (`tc_article()`, also through the
//! `peregrine::dynamic::IdlType` trait) and inserts into an `Any`
//! with `Any::insert(&value)`; structs, unions, enums and exceptions
//! extract with `any.get::<Article>()`, which is `None` when the `Any`
//! holds another type. Typedefs use their `<name>_to_any` /
//! `<name>_from_any` functions instead, basic types convert with
//! `Any::from`, and a reference extracts with
//! `NamedRef::from_any_in(&any, &orb)`, as it needs an ORB to talk
//! through. `in any` parameters are `&Any`.
//!
//! ```
//! # mod idl { include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mapping/generated/_include.rs")); }
//! use std::sync::Arc;
//!
//! use idl::shop::{self, Article, Grade, Inspector, InspectorRef, InspectorSkeleton, Order};
//! use peregrine::dynamic::{IdlType, TcKind};
//! use peregrine::{Any, Orb, SystemException};
//!
//! /// Describes articles, and names the type of anything else.
//! struct Describer;
//!
//! impl Inspector for Describer {
//!     fn describe(&self, value: &Any) -> Result<String, SystemException> {
//!         Ok(match value.get::<Article>() {
//!             Some(a) => format!("{} at {} cents", a.name, a.price),
//!             None => format!("a {}", value.tc.kind().name()),
//!         })
//!     }
//! }
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // The TypeCode of a generated type, as the IDL declares it.
//!     let tc = shop::tc_article();
//!     assert_eq!(tc.kind(), TcKind::Struct);
//!     assert_eq!((tc.id()?, tc.name()?), ("IDL:Shop/Article:1.0", "Article"));
//!     assert_eq!(tc.member_name(2)?, "quality");
//!     assert!(Article::type_code().equal(&tc));
//!
//!     // Insertion and extraction.
//!     let tea = Article { name: "tea".into(), price: 250, quality: Grade::Standard };
//!     let any = Any::insert(&tea);
//!     assert_eq!(any.get::<Article>(), Some(tea.clone()));
//!     assert_eq!(any.get::<Order>(), None); // holds another type
//!     assert_eq!(Any::from(7i32).get::<i32>(), Some(7));
//!     let stock = vec![tea.clone()];
//!     let any_stock = shop::articles_to_any(&stock); // a typedef
//!     assert_eq!(shop::articles_from_any(&any_stock), Some(stock));
//!
//!     // An `any` parameter, through the ORB.
//!     let server = Orb::builder().listen("127.0.0.1", 0).build()?;
//!     let poa = server.root_poa();
//!     poa.manager().activate()?;
//!     let inspector = Arc::new(InspectorSkeleton::new(Describer));
//!     let inspector: InspectorRef = poa.servant_to_reference(&inspector)?;
//!     let ior = server.object_to_string(inspector.object());
//!     let client = Orb::builder().build()?;
//!     let inspector = InspectorRef::narrow(client.string_to_object(&ior)?)?.expect("an Inspector");
//!     assert_eq!(inspector.describe(&any)?, "tea at 250 cents");
//!     assert_eq!(inspector.describe(&Any::from("hello"))?, "a tk_string");
//!
//!     server.shutdown(true);
//!     Ok(())
//! }
//! ```
