//! Operations with an IDL `context` clause through generated stubs and
//! skeletons over real TCP (`idl/contexts.idl`): the servant sees exactly
//! the caller's properties the clause names (names and `PREFIX*`
//! patterns), in the compiled and the table-driven interface; an empty
//! context sends an empty list; and the request body of a oneway sent to
//! a raw socket ends with the argument and the hand-encoded context (both
//! forms).

use std::io::Read;
use std::net::TcpListener;
use std::sync::Arc;

use peregrine_orb::{Context, Orb, SystemException};
use peregrine_orb_tests::idl::ctx::{
    Names, Props, PropsRef, PropsSkeleton, PropsTable, PropsTableRef, PropsTableSkeleton,
};
use peregrine_orb_tests::{bounded, client};

type R<T> = Result<T, SystemException>;

struct Imp;

fn seen(tag: i32, context: &Context) -> Names {
    std::iter::once(tag.to_string())
        .chain(context.iter().map(|(n, v)| format!("{n}={v}")))
        .collect()
}

impl Props for Imp {
    fn seen(&self, tag: i32, context: &Context) -> R<Names> {
        Ok(seen(tag, context))
    }
    fn note(&self, _a: i32, _context: &Context) -> R<()> {
        Ok(())
    }
    fn twice(&self, a: i32) -> R<i32> {
        Ok(2 * a)
    }
}

impl PropsTable for Imp {
    fn seen(&self, tag: i32, context: &Context) -> R<Names> {
        Ok(seen(tag, context))
    }
    fn note(&self, _a: i32, _context: &Context) -> R<()> {
        Ok(())
    }
    fn twice(&self, a: i32) -> R<i32> {
        Ok(2 * a)
    }
}

fn serve() -> (Orb, PropsRef, PropsTableRef) {
    let orb = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
    let root = orb.root_poa();
    root.manager().activate().unwrap();
    let p: PropsRef = root
        .servant_to_reference(&Arc::new(PropsSkeleton::new(Imp)))
        .unwrap();
    let t: PropsTableRef = root
        .servant_to_reference(&Arc::new(PropsTableSkeleton::new(Imp)))
        .unwrap();
    (orb, p, t)
}

fn caller_context() -> Context {
    Context::new()
        .with("LANG", "en")
        .with("LANGUAGE", "not named")
        .with("X_1", "one")
        .with("Y", "not named")
        .with("X_2", "two")
        .with("X", "no underscore")
}

#[test]
fn servant_sees_exactly_the_named_properties() {
    bounded(30, || {
        let (_server, p, t) = serve();
        let c = client();
        let p = PropsRef::unchecked_narrow(c.string_to_object(&p.object().to_string()).unwrap());
        let t =
            PropsTableRef::unchecked_narrow(c.string_to_object(&t.object().to_string()).unwrap());
        let want = ["7", "LANG=en", "X_1=one", "X_2=two"];
        assert_eq!(p.seen(7, &caller_context()).unwrap(), want);
        assert_eq!(t.seen(7, &caller_context()).unwrap(), want);
        // Nothing matching: an empty list, the argument still arrives.
        let none = Context::new().with("Y", "1");
        assert_eq!(p.seen(-3, &none).unwrap(), ["-3"]);
        assert_eq!(t.seen(-3, &Context::new()).unwrap(), ["-3"]);
        // Operations without a clause are unaffected.
        assert_eq!(p.twice(21).unwrap(), 42);
        assert_eq!(t.twice(21).unwrap(), 42);
    });
}

/// The body of the `note` request `send` makes to a raw socket (at the
/// `corbaloc` object it is given) ends with the argument and the context
/// strings, hand-encoded here.
fn check_note_body(send: fn(&Orb, &str, &Context)) {
    bounded(30, move || {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let reader = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut header = [0u8; 12];
            s.read_exact(&mut header).unwrap();
            assert_eq!(&header[..4], b"GIOP");
            assert_eq!(header[7], 0, "a Request");
            let little = header[6] & 1 == 1;
            let len = if little {
                u32::from_le_bytes(header[8..12].try_into().unwrap())
            } else {
                u32::from_be_bytes(header[8..12].try_into().unwrap())
            };
            let mut body = vec![0u8; len as usize];
            s.read_exact(&mut body).unwrap();
            (little, body)
        });
        let orb = client();
        // "A*" selects "A" and "AB", not "B".
        let ctx = Context::new()
            .with("B", "no")
            .with("AB", "xy")
            .with("A", "z");
        send(&orb, &format!("corbaloc::1.2@127.0.0.1:{port}/raw"), &ctx);
        let (little, body) = reader.join().unwrap();
        let u32b = |n: u32| {
            if little {
                n.to_le_bytes()
            } else {
                n.to_be_bytes()
            }
        };
        // From an 8-aligned offset: the long, the count of strings, then
        // each string (length, bytes, NUL) aligned to 4.
        let mut want = Vec::new();
        want.extend(u32b(0x0102_0304));
        want.extend(u32b(4));
        want.extend(u32b(3));
        want.extend(b"AB\0\0");
        want.extend(u32b(3));
        want.extend(b"xy\0\0");
        want.extend(u32b(2));
        want.extend(b"A\0\0\0");
        want.extend(u32b(2));
        want.extend(b"z\0");
        assert!(
            body.ends_with(&want),
            "body {body:02x?}\ndoes not end with {want:02x?}"
        );
        // The long starts 8-aligned in the message (12-byte header).
        assert_eq!((12 + body.len() - want.len()) % 8, 0);
    });
}

#[test]
fn compiled_request_body_ends_with_the_context_strings() {
    check_note_body(|orb, url, ctx| {
        let p = PropsRef::unchecked_narrow(orb.string_to_object(url).unwrap());
        p.note(0x0102_0304, ctx).unwrap();
    });
}

#[test]
fn table_driven_request_body_ends_with_the_context_strings() {
    check_note_body(|orb, url, ctx| {
        let p = PropsTableRef::unchecked_narrow(orb.string_to_object(url).unwrap());
        p.note(0x0102_0304, ctx).unwrap();
    });
}
