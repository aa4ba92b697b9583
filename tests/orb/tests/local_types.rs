//! Unions and exceptions holding a local interface (`idl/local_types.idl`)
//! are local types: they compile as `Clone` types with a TypeCode, travel
//! through a local interface's operations in-process, and the exception
//! is raised through the operation's error enum.

use std::sync::Arc;

use peregrine_dynamic::TcKind;
use peregrine_orb::SystemException;
use peregrine_orb_tests::idl::local_types::{l, tc_holds_l, tc_u, tc_w, HoldsL, USeq, L, S, U, W};

/// Answers `get(N(n))` with `N(n + 1)` and the argument twice; `get(L(l))`
/// asks `l` for `N(1)`; a negative `n` raises `HoldsL` naming this node.
struct Node {
    me: std::sync::Weak<Node>,
}

impl L for Node {
    fn get(&self, x: &U) -> Result<(U, USeq), l::GetError> {
        match x {
            U::N(n) if *n < 0 => Err(HoldsL {
                m: self.me.upgrade().map(|n| n as Arc<dyn L>),
                code: *n,
            }
            .into()),
            U::N(n) => Ok((U::N(n + 1), vec![x.clone(), x.clone()])),
            U::L(Some(other)) => other.get(&U::N(1)),
            U::L(None) | U::S { .. } => Err(SystemException::new(
                peregrine_orb::SystemExceptionKind::BadParam,
                0,
                peregrine_orb::CompletionStatus::No,
            )
            .into()),
        }
    }

    fn put(&self, y: &W) -> Result<(), SystemException> {
        match y {
            W::S(S { inner: U::N(_) }) => Ok(()),
            _ => Err(SystemException::new(
                peregrine_orb::SystemExceptionKind::BadParam,
                1,
                peregrine_orb::CompletionStatus::No,
            )),
        }
    }
}

fn node() -> Arc<dyn L> {
    Arc::new_cyclic(|me| Node { me: me.clone() })
}

#[test]
fn local_unions_and_exceptions_pass_in_process() {
    let a = node();
    let (r, all) = a.get(&U::N(4)).unwrap();
    assert!(matches!(r, U::N(5)));
    assert_eq!(all.len(), 2);
    assert!(all.iter().all(|u| matches!(u, U::N(4))));
    // A union holding the local interface: the call goes to it.
    let b = node();
    let (r, _) = a.get(&U::L(Some(b.clone()))).unwrap();
    assert!(matches!(r, U::N(2)));
    // The exception holds the raising node.
    match a.get(&U::N(-7)) {
        Err(l::GetError::HoldsL(e)) => {
            assert_eq!(e.code, -7);
            assert!(Arc::ptr_eq(e.m.as_ref().unwrap(), &a));
            assert_eq!(e.to_string(), "LocalTypes::HoldsL");
            assert_eq!(format!("{e:?}"), "HoldsL { .. }");
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("no exception"),
    }
    assert!(a.put(&W::S(S { inner: U::N(0) })).is_ok());
    assert!(a.put(&W::Default(false)).is_err());
    assert_eq!(U::s("x".into()).discriminator(), 0);
    assert!(U::s_with(1, "x".into()).is_err());
}

#[test]
fn local_unions_and_exceptions_have_typecodes() {
    let u = tc_u();
    assert_eq!(u.kind(), TcKind::Union);
    assert_eq!(u.id().unwrap(), U::REPOSITORY_ID);
    assert_eq!(u.member_type(0).unwrap().kind(), TcKind::LocalInterface);
    let e = tc_holds_l();
    assert_eq!(e.kind(), TcKind::Except);
    assert_eq!(e.id().unwrap(), HoldsL::REPOSITORY_ID);
    assert_eq!(e.member_count().unwrap(), 2);
    assert_eq!(tc_w().member_type(0).unwrap().kind(), TcKind::Struct);
}
