//! The interpreted marshaling form: tables, stub and handler
//! shapes, per-interface selection, typed entries (bounds, wide strings,
//! references).

use peregrine_idl_rust::{Builder, Marshal};

const IDL: &str = r#"
exception Oops { long code; };
interface A {
  short op(in short s1, inout string s2, out sequence<long> s3) raises (Oops);
  oneway void note(in string s);
  string<8> bounded(in string<8> s);
  wstring<4> wide(in wstring a, inout wchar c, out sequence<long, 3> n);
  A again(in A x, inout Object o, out sequence<A, 2> more);
};
interface B { long plain(in long x); };
"#;

fn gen(b: Builder) -> String {
    b.compile_to_string("t.idl", IDL)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn interpreted_interfaces_get_tables_and_engine_calls() {
    let s = gen(Builder::new().marshal(Marshal::Interpreted));
    for needle in [
        "pub static OP_OP: ::peregrine::orb::interp::OpDesc",
        "pub static TY_SHORT: ::peregrine::orb::interp::TypeDesc",
        "type_code: Some(::peregrine::dynamic::TypeCode::short)",
        "mode: ::peregrine::orb::interp::Mode::InOut",
        "raises: &[\"IDL:Oops:1.0\"]",
        "a::OpError,",
        "::peregrine::orb::interp::ExcDesc {",
        "::peregrine::orb::interp::call_oneway(",
        "::peregrine::orb::interp::read_args(",
        "::peregrine::orb::interp::write_results(",
        "::peregrine::orb::interp::write_user_exception(",
        "#[inline(never)]",
    ] {
        assert!(s.contains(needle), "missing {needle:?} in\n{s}");
    }
    // Bounded strings, wide strings and references are table-driven
    // too: the bound and element types live in the descriptors.
    for needle in [
        "pub static OP_BOUNDED:",
        "pub static OP_WIDE:",
        "pub static OP_AGAIN:",
        "kind: ::peregrine::orb::interp::Kind::String(8)",
        "kind: ::peregrine::orb::interp::Kind::WString(4)",
        "kind: ::peregrine::orb::interp::Kind::WString(u32::MAX)",
        "kind: ::peregrine::orb::interp::Kind::Sequence(3, &TY_LONG)",
        "kind: ::peregrine::orb::interp::Kind::Sequence(2, &TY_A)",
        "pub static TY_A: ::peregrine::orb::interp::TypeDesc",
        "kind: ::peregrine::orb::interp::Kind::Object",
        "::peregrine::orb::interp::TIn(s)",
        "::peregrine::orb::interp::TOut::new()",
        "::peregrine::orb::interp::RefIn(x)",
        "::peregrine::orb::interp::TInOut(o)",
        "std::borrow::Cow<'_, str>,",
        "::peregrine::orb::interp::TVal::<String>::empty()",
        "impl ::peregrine::orb::Reference for ARef",
        "impl ::peregrine::orb::interp::Put for Oops",
    ] {
        assert!(s.contains(needle), "missing {needle:?} in\n{s}");
    }
    assert_no_compiled_operation(&s);
}

/// No stub calls `ObjectRef::invoke*` itself and every skeleton handler
/// is the interpreted one.
fn assert_no_compiled_operation(s: &str) {
    assert!(
        !s.contains("self.0.invoke"),
        "a compiled stub is left:\n{s}"
    );
    let handlers = s.matches("/// Skeleton handler of `").count();
    let interpreted = s.matches("` (interpreted).").count();
    assert!(handlers > 0);
    assert_eq!(handlers, interpreted, "a compiled handler is left:\n{s}");
    assert!(!s.contains("idl_rt::write_reply"), "{s}");
}

#[test]
fn references_bounds_and_wide_strings_are_all_interpreted() {
    let s = Builder::new()
        .marshal(Marshal::Interpreted)
        .compile_to_string(
            "t.idl",
            r#"
struct S { string<2> txt; Object o; };
exception E { S val; };
interface I;
typedef sequence<I> Is;
interface I {
  S get(in S v, inout Is all, out wstring<3> w) raises (E);
  Is many(in sequence<sequence<string<2>, 2> > deep, out wchar c);
  oneway void tell(in I who, in wstring<2> what);
  fixed<5,2> cost(in sequence<fixed<3,1>, 2> parts, out fixed<4,0> whole);
};
"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_no_compiled_operation(&s);
    assert!(
        s.contains("let orb = cx.orb();"),
        "exception holding a reference: {s}"
    );
}

/// `ValueBase` parameters, results and sequences are table-driven: the
/// descriptor carries the generated reader of such slots.
#[test]
fn value_base_operations_are_interpreted() {
    let s = Builder::new()
        .marshal(Marshal::Interpreted)
        .compile_to_string(
            "t.idl",
            r#"
valuetype P { public long x; };
typedef ValueBase VB;
typedef sequence<ValueBase> VBs;
struct T { string tag; ValueBase v; };
interface K {
  ValueBase echo(in ValueBase v, inout VB io, out ValueBase again);
  VBs all(in VBs vs, in sequence<ValueBase, 2> two, out T tagged);
  attribute ValueBase last;
};
"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_no_compiled_operation(&s);
    for needle in [
        "pub static OP_ECHO:",
        "pub static OP_ALL:",
        "pub static OP_GET_LAST:",
        "pub static OP_SET_LAST:",
        "kind: ::peregrine::orb::interp::Kind::ValueBase(|r, orb| {\n            if super::idl_rt::VALUES_NEED_ORB {\n                super::idl_rt::bind_values(r, orb);\n            }\n            super::idl_rt::VALUE_BASE.read_value(r).and_then(|v| v.nested(r))",
        "kind: ::peregrine::orb::interp::Kind::Sequence(2, &TY_VALUE_BASE)",
        "kind: ::peregrine::orb::interp::Kind::Sequence(u32::MAX, &TY_VALUE_BASE)",
        "::peregrine::orb::interp::TInOut(io_)",
    ] {
        assert!(s.contains(needle), "missing {needle:?} in\n{s}");
    }
}

/// Abstract valuetype parameters, results, sequences and struct members
/// are table-driven: the descriptor says `AbstractValue`, and the trait
/// object gets the engine's entry, reading through the type's
/// `__VALUES`.
#[test]
fn abstract_value_operations_are_interpreted() {
    let s = Builder::new()
        .marshal(Marshal::Interpreted)
        .compile_to_string(
            "t.idl",
            r#"
abstract valuetype Shape { double area(); };
valuetype Sq : Shape { public double side; };
typedef Shape S;
typedef sequence<Shape> Shapes;
struct T { string tag; Shape v; };
interface K {
  Shape echo(in Shape v, inout S io, out Shape again);
  Shapes all(in Shapes vs, in sequence<Shape, 2> two, out T tagged);
  attribute Shape last;
};
"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_no_compiled_operation(&s);
    for needle in [
        "pub static OP_ECHO:",
        "pub static OP_ALL:",
        "pub static OP_GET_LAST:",
        "pub static OP_SET_LAST:",
        "kind: ::peregrine::orb::interp::Kind::AbstractValue",
        "kind: ::peregrine::orb::interp::Kind::Sequence(2, &TY_SHAPE)",
        "impl ::peregrine::orb::interp::SlotValue for dyn Shape",
        "::peregrine::orb::interp::take_abstract(ty, r, &shape::__VALUES)",
        "::peregrine::orb::interp::TInOut(io_)",
    ] {
        assert!(s.contains(needle), "missing {needle:?} in\n{s}");
    }
}

#[test]
fn the_form_is_chosen_per_interface() {
    let s = gen(Builder::new().interface_marshal("::B", Marshal::Interpreted));
    assert!(s.contains("OP_PLAIN"), "{s}");
    assert!(!s.contains("OP_OP"), "A stays compiled: {s}");
    let s = gen(Builder::new()
        .marshal(Marshal::Interpreted)
        .interface_marshal("A", Marshal::Compiled));
    assert!(s.contains("OP_PLAIN") && !s.contains("OP_OP"), "{s}");
    let s = gen(Builder::new());
    assert!(!s.contains("interp::"), "compiled by default: {s}");
}

#[test]
fn marshal_names_parse() {
    assert_eq!(Marshal::from_name("compiled"), Some(Marshal::Compiled));
    assert_eq!(
        Marshal::from_name("interpreted"),
        Some(Marshal::Interpreted)
    );
    assert_eq!(Marshal::from_name("fast"), None);
    assert_eq!(Marshal::default(), Marshal::Compiled);
}
