//! The interpreted marshaling form (issue #6): tables, stub and handler
//! shapes, per-interface selection and compiled fallbacks.

use peregrine_idl_rust::{Builder, Marshal};

const IDL: &str = r#"
exception Oops { long code; };
interface A {
  short op(in short s1, inout string s2, out sequence<long> s3) raises (Oops);
  oneway void note(in string s);
  string<8> bounded(in string<8> s);
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
        "pub static OP_OP: ::peregrine_orb::interp::OpDesc",
        "pub static TY_SHORT: ::peregrine_orb::interp::TypeDesc",
        "type_code: Some(::peregrine_dynamic::TypeCode::short)",
        "mode: ::peregrine_orb::interp::Mode::InOut",
        "raises: &[\"IDL:Oops:1.0\"]",
        "a::OpError,",
        "::peregrine_orb::interp::ExcDesc {",
        "::peregrine_orb::interp::call_oneway(",
        "::peregrine_orb::interp::read_args(",
        "::peregrine_orb::interp::write_results(",
        "::peregrine_orb::interp::write_user_exception(",
        "#[inline(never)]",
    ] {
        assert!(s.contains(needle), "missing {needle:?} in\n{s}");
    }
    // Bounded strings need structural code: that operation stays compiled.
    assert!(!s.contains("OP_BOUNDED"), "{s}");
    assert!(s.contains("encode_bounded_string"), "{s}");
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
