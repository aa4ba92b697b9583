//! Compiled `custom` valuetypes in the value tree.
//!
//! A custom value's state is whatever its application code writes, so
//! no TypeCode describes it and the interpreter cannot read or write it
//! member by member. It can still carry one: a [`crate::ValueNode`] made
//! with [`crate::ValueNode::compiled`] holds the compiled value itself
//! (an `Arc<dyn ValueObject>`), and the encoder writes it through its
//! own `ValueObject` code on the message's one writer, so sharing with
//! the rest of the message is kept.
//!
//! To read one, the decoder needs the compiled type of the repository
//! id on the wire: a process makes it known with
//! [`register_custom_value`] (the generated `Any` support of a custom
//! valuetype does, as does that of every type holding one). A custom
//! value of an id nobody registered stays `NO_IMPLEMENT` minor 1: there
//! is nothing else that could know its state.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use peregrine_cdr::{Reader, ValueInfo, ValueObject, ValueRef, ValueType};

/// Reads the state of a value of one compiled custom type, after its
/// header (what [`register_custom_value`] records).
pub type CustomReader =
    fn(&mut Reader<'_>, &ValueInfo<'_>) -> peregrine_cdr::Result<ValueRef<dyn ValueObject>>;

type Registry = RwLock<HashMap<&'static str, CustomReader>>;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Default::default)
}

fn read_as<T: ValueType>(
    r: &mut Reader<'_>,
    info: &ValueInfo<'_>,
) -> peregrine_cdr::Result<ValueRef<dyn ValueObject>> {
    T::read_state(r, info).map(ValueRef::upcast)
}

/// Makes the compiled type `T` the reader of values whose TypeCode is a
/// custom valuetype with `T`'s repository id, wherever the interpreter
/// meets one (an `Any`, DII and DSI arguments). Returns false when `T`
/// (or another type with its id) was registered before, which is then
/// kept: the first registration wins, as for value TypeCodes. Cheap to
/// repeat (a read lock).
pub fn register_custom_value<T: ValueType>() -> bool {
    let known = registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(T::REPO_ID);
    if known {
        return false;
    }
    let mut reg = registry().write().unwrap_or_else(|e| e.into_inner());
    if reg.contains_key(T::REPO_ID) {
        return false;
    }
    reg.insert(T::REPO_ID, read_as::<T>);
    true
}

/// Forgets the compiled type registered for `id`; true if there was one.
pub fn unregister_custom_value(id: &str) -> bool {
    registry()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(id)
        .is_some()
}

/// The reader registered for custom values of repository id `id`.
pub(crate) fn custom_reader(id: &str) -> Option<CustomReader> {
    registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(id)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiled::{from_dyn_with, to_dyn_with};
    use crate::error::{minor, DynError};
    use crate::typecode::{TypeCode, ValueMember};
    use crate::valuetype::{ValueNode, VM_CUSTOM};
    use crate::{Any, DynValue, FromAny, IdlType};
    use peregrine_cdr::{read_value, write_value, ByteOrder, Decode, Encode, ValueSlot, Writer};

    /// A hand-written custom value: its state is a count and a label
    /// written in reverse order of the TypeCode's members, which only
    /// its own code knows.
    #[derive(Debug, PartialEq)]
    struct Tally {
        count: u32,
        label: String,
    }

    impl ValueType for Tally {
        const REPO_ID: &'static str = "IDL:CustomTest/Tally:1.0";
        const IDS: &'static [&'static str] = &[Self::REPO_ID];
        const CHUNKED: bool = true;
        fn write_state(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
            self.label.encode(w)?;
            w.write_u32(self.count);
            Ok(())
        }
        fn read_state(
            r: &mut Reader<'_>,
            _: &ValueInfo<'_>,
        ) -> peregrine_cdr::Result<ValueRef<Self>> {
            let label = String::decode(r)?;
            let count = r.read_u32()?;
            Ok(r.new_value(Self { count, label }))
        }
    }

    fn tally_tc() -> TypeCode {
        let member = |name: &str, tc| ValueMember {
            name: name.into(),
            tc,
            visibility: 1,
        };
        TypeCode::value_tc(
            Tally::REPO_ID,
            "Tally",
            VM_CUSTOM,
            None,
            vec![
                member("count", TypeCode::ulong()),
                member("label", TypeCode::string_tc(0)),
            ],
        )
    }

    /// As generated code does: the type registers its reader.
    impl IdlType for Tally {
        fn type_code() -> TypeCode {
            register_custom_value::<Tally>();
            tally_tc()
        }
    }

    fn tally(count: u32, label: &str) -> ValueRef<Tally> {
        ValueRef::new(Tally {
            count,
            label: label.into(),
        })
    }

    fn object_of(v: &DynValue) -> ValueRef<Tally> {
        let DynValue::Value(Some(r)) = v else {
            panic!("not a value: {v:?}")
        };
        let obj = r.node().unwrap().object().unwrap().clone();
        obj.into_any_value().downcast::<Tally>().unwrap()
    }

    #[test]
    fn compiled_custom_value_round_trips_through_an_any() {
        let sent = tally(7, "seven");
        let any = Any::insert(&ValueSlot::from(sent.clone()));
        assert!(any.tc.equivalent(&tally_tc()));
        assert_eq!(*object_of(&any.value), *sent);
        // On the wire as an `Any`, and back, as the compiled code reads it.
        let mut w = Writer::new(ByteOrder::Big);
        any.encode(&mut w).unwrap();
        let bytes = w.into_vec();
        let back = Any::decode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap();
        let slot: ValueSlot<Tally> = back.get().expect("a Tally");
        assert_eq!(**slot.get().unwrap(), *sent);
        // The interpreter writes exactly the compiled octets.
        let mut compiled = Writer::new(ByteOrder::Big);
        write_value(&mut compiled, Some(&sent)).unwrap();
        let mut interp = Writer::new(ByteOrder::Big);
        crate::encode_value(&any.tc, &any.value, &mut interp).unwrap();
        assert_eq!(interp.into_vec(), compiled.into_vec());
        // A null slot stays null.
        let none = Any::insert(&ValueSlot::<Tally>::default());
        assert_eq!(none.value, DynValue::Value(None));
        assert!(ValueSlot::<Tally>::from_dyn(&none.value).unwrap().is_null());
    }

    #[test]
    fn a_custom_value_shared_twice_stays_one_value() {
        register_custom_value::<Tally>();
        let tc = TypeCode::struct_tc(
            "IDL:CustomTest/Pair:1.0",
            "Pair",
            [("a", tally_tc()), ("b", tally_tc())],
        );
        let shared = tally(2, "two");
        let v = to_dyn_with(&tc, |w| {
            write_value(w, Some(&shared))?;
            write_value(w, Some(&shared))
        })
        .unwrap();
        let DynValue::Struct(m) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(m[0], m[1], "one node for the value met twice");
        let (a, b) = from_dyn_with(&tc, &v, |r| {
            let a = read_value::<Tally>(r)?.ready()?.unwrap();
            let b = read_value::<Tally>(r)?.ready()?.unwrap();
            Ok((a, b))
        })
        .unwrap();
        assert!(
            ValueRef::ptr_eq(&a, &b),
            "written once, then an indirection"
        );
        assert_eq!(*a, *shared);
    }

    #[test]
    fn unknown_custom_id_is_no_implement_minor_1() {
        struct Ghost;
        impl ValueType for Ghost {
            const REPO_ID: &'static str = "IDL:CustomTest/Ghost:1.0";
            const IDS: &'static [&'static str] = &[Self::REPO_ID];
            const CHUNKED: bool = true;
            fn write_state(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
                w.write_u32(1);
                Ok(())
            }
            fn read_state(
                r: &mut Reader<'_>,
                _: &ValueInfo<'_>,
            ) -> peregrine_cdr::Result<ValueRef<Self>> {
                r.read_u32()?;
                Ok(ValueRef::new(Ghost))
            }
        }
        let tc = TypeCode::value_tc(Ghost::REPO_ID, "Ghost", VM_CUSTOM, None, Vec::new());
        let e = to_dyn_with(&tc, |w| write_value(w, Some(&ValueRef::new(Ghost)))).unwrap_err();
        assert!(
            matches!(
                e,
                DynError::NoImplement {
                    minor: minor::NO_IMPLEMENT_NO_VALUE_IMPL,
                    ..
                }
            ),
            "{e:?}"
        );
        // Registered, it reads; forgotten, it is refused again.
        assert!(register_custom_value::<Ghost>());
        assert!(!register_custom_value::<Ghost>(), "first one kept");
        let v = to_dyn_with(&tc, |w| write_value(w, Some(&ValueRef::new(Ghost)))).unwrap();
        assert!(matches!(v, DynValue::Value(Some(_))));
        assert!(unregister_custom_value(Ghost::REPO_ID));
        assert!(to_dyn_with(&tc, |w| write_value(w, Some(&ValueRef::new(Ghost)))).is_err());
    }

    #[test]
    fn compiled_node_checks_its_id_and_keeps_no_state() {
        let other = TypeCode::value_tc(
            "IDL:CustomTest/Other:1.0",
            "Other",
            VM_CUSTOM,
            None,
            Vec::new(),
        );
        assert!(ValueNode::compiled(other, tally(1, "x").upcast()).is_err());
        assert!(ValueNode::compiled(TypeCode::long(), tally(1, "x").upcast()).is_err());
        let n = ValueNode::compiled(tally_tc(), tally(1, "x").upcast()).unwrap();
        assert!(n.state().is_empty());
        assert!(n
            .set_state(vec![DynValue::ULong(1), DynValue::String("x".into())])
            .is_err());
        // Built by hand, it goes into an `Any` and out as a `Tally`.
        let any = Any::new(tally_tc(), DynValue::Value(Some(n.into())));
        let slot: ValueSlot<Tally> = any.get().unwrap();
        assert_eq!(**slot.get().unwrap(), *tally(1, "x"));
    }

    /// A custom value whose own state holds a plain value: what its code
    /// reads stays its own.
    struct Wrapper(ValueRef<Tally>);

    impl ValueType for Wrapper {
        const REPO_ID: &'static str = "IDL:CustomTest/Wrapper:1.0";
        const IDS: &'static [&'static str] = &[Self::REPO_ID];
        const CHUNKED: bool = true;
        fn write_state(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
            write_value(w, Some(&self.0))
        }
        fn read_state(
            r: &mut Reader<'_>,
            _: &ValueInfo<'_>,
        ) -> peregrine_cdr::Result<ValueRef<Self>> {
            let inner = read_value::<Tally>(r)?.ready()?;
            inner
                .map(|t| r.new_value(Wrapper(t)))
                .ok_or(peregrine_cdr::CdrError::NoValueFactory)
        }
    }

    #[test]
    fn indirection_into_a_custom_state_is_marshal_minor_1() {
        register_custom_value::<Tally>();
        register_custom_value::<Wrapper>();
        let wrapper_tc =
            TypeCode::value_tc(Wrapper::REPO_ID, "Wrapper", VM_CUSTOM, None, Vec::new());
        let tc = TypeCode::struct_tc(
            "IDL:CustomTest/Mixed:1.0",
            "Mixed",
            [("w", wrapper_tc.clone()), ("t", tally_tc())],
        );
        let inner = tally(5, "inner");
        let wrapper = ValueRef::new(Wrapper(inner.clone()));
        // Apart, both read.
        let v = to_dyn_with(&tc, |w| {
            write_value(w, Some(&wrapper))?;
            write_value(w, Some(&tally(5, "inner")))
        })
        .unwrap();
        let DynValue::Struct(m) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(*object_of(&m[1]), *inner);
        // `t` an indirection to the value inside the wrapper's state:
        // the interpreter does not hold that value.
        let e = to_dyn_with(&tc, |w| {
            write_value(w, Some(&wrapper))?;
            write_value(w, Some(&inner))
        })
        .unwrap_err();
        assert!(
            matches!(
                e,
                DynError::Marshal {
                    minor: minor::MARSHAL_NO_VALUE_FACTORY,
                    ..
                }
            ),
            "{e:?}"
        );
    }
}
