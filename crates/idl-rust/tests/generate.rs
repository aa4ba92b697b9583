//! Golden snippets of generated code, diagnostics for unsupported
//! constructs, and every IDL file shipped with omniORB.

use std::path::{Path, PathBuf};

use peregrine_idl::DiagKind;
use peregrine_idl_rust::Builder;

fn gen(src: &str) -> String {
    Builder::new()
        .compile_to_string("t.idl", src)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Compares ignoring whitespace differences, so that the snippets stay
/// readable here.
fn assert_contains(code: &str, snippet: &str) {
    // prettyplease may wrap a signature with a trailing comma.
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<String>()
            .replace(",)", ")")
            .replace(",}", "}")
    };
    assert!(
        norm(code).contains(norm(snippet).trim_end_matches(',')),
        "snippet not found:\n{snippet}\n--- in ---\n{code}"
    );
}

#[test]
fn module_struct_enum_const_typedef() {
    let code = gen(r#"
        /// Doc of M.
        module CosThing {
          /// A point.
          struct Point { long x; long y; };
          enum Kind { small_one, BigOne };
          const unsigned short MaxLen = 1 << 4;
          const string Name = "n\"q";
          typedef sequence<Point> PointSeq;
          typedef Point Grid[2][3];
        };
    "#);
    assert_contains(&code, "/// Doc of M.");
    assert_contains(&code, "pub mod cos_thing {");
    assert_contains(
        &code,
        "/// A point.
        #[repr(C)]
        #[derive(Debug, Clone, Copy, PartialEq, Default)]
        pub struct Point {
            /// IDL member `x`.
            pub x: i32,
            /// IDL member `y`.
            pub y: i32,
        }",
    );
    assert_contains(
        &code,
        r#"pub const REPOSITORY_ID: &'static str = "IDL:CosThing/Point:1.0";"#,
    );
    assert_contains(&code, "unsafe impl ::peregrine::cdr::PlainData for Point {");
    assert_contains(&code, "const PADDING: &'static [(usize, usize)] = &[];");
    assert_contains(
        &code,
        "#[repr(u32)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Kind {",
    );
    assert_contains(&code, "SmallOne = 0,");
    assert_contains(&code, "BigOne = 1,");
    assert_contains(
        &code,
        "v => Err(::peregrine::cdr::CdrError::InvalidEnum(v)),",
    );
    assert_contains(&code, "pub const MAX_LEN: u16 = 16;");
    assert_contains(&code, r#"pub const NAME: &str = "n\"q";"#);
    assert_contains(&code, "pub type PointSeq = Vec<Point>;");
    assert_contains(&code, "pub type Grid = [[Point; 3]; 2];");
}

#[test]
fn plain_struct_write_native_is_word_wise() {
    let code = gen("struct B { short s; char c; long l; octet o; double d; octet pad[8]; };");
    assert_contains(
        &code,
        "const _: () = {
            let size = core::mem::size_of::<B>();
            let align = core::mem::align_of::<B>();
            assert!(size == 32);
            assert!(align <= 8);
            assert!(core::mem::offset_of!(B, s) == 0);
            assert!(core::mem::offset_of!(B, c) == 2);
            assert!(core::mem::offset_of!(B, l) == 4);
            assert!(core::mem::offset_of!(B, o) == 8);
            assert!(core::mem::offset_of!(B, d) == 16);
            assert!(core::mem::offset_of!(B, pad) == 24);
        };",
    );
    assert_contains(
        &code,
        "let mut w0 = [0u8; 8];
        w0[0..2].copy_from_slice(&self.s.to_ne_bytes());
        w0[2] = self.c;
        w0[4..8].copy_from_slice(&self.l.to_ne_bytes());
        let mut w1 = [0u8; 8];
        w1[0] = self.o;",
    );
    assert_contains(
        &code,
        "elem.cast::<[u64; 4]>().write_unaligned([
            u64::from_ne_bytes(w0),
            u64::from_ne_bytes(w1),
            u64::from_ne_bytes(self.d.to_ne_bytes()),
            u64::from_ne_bytes(self.pad),
        ]);",
    );
    assert_contains(
        &code,
        "fn encode_slice(items: &[Self], w: &mut ::peregrine::cdr::Writer) -> ::peregrine::cdr::Result<()> {
            w.write_plain(items, Self::encode)
        }",
    );
    // boolean members and trailing padding make a struct non-plain.
    for src in [
        "struct F { long l; boolean b; };",
        "struct T { double d; octet o; };",
    ] {
        let code = gen(src);
        // (The runtime module names the trait in a generic helper.)
        assert!(!code.contains("PlainData for"), "{src}:\n{code}");
        assert!(!code.contains("repr(C)"), "{src}");
    }
}

#[test]
fn union_mapping() {
    let code = gen("enum E { a, b, c };
         union U switch (E) { case a: long x; case b: case c: string y; };
         union D switch (short) { case 1: long p; default: octet q; };
         union N switch (long) { case 1: long only; };
         union Both switch (boolean) { case TRUE: long t; case FALSE: long f; };");
    assert_contains(&code, "pub enum U {");
    // One label: a tuple variant, the label written as a constant.
    assert_contains(&code, "X(i32),");
    assert_contains(&code, "E::A => Self::X(");
    assert_contains(&code, "Self::X(_) => E::A,");
    // Several labels: the variant keeps the discriminator it was decoded
    // with and encodes it.
    assert_contains(
        &code,
        "Y {
            /// The discriminator: one of `b`, `c`.
            disc: E,
            /// The branch's value.
            value: String,
        },",
    );
    assert_contains(&code, "E::B | E::C => { Self::Y { disc: d, value:");
    assert_contains(
        &code,
        "Self::Y { disc, value: v } => { ::peregrine::cdr::Encode::encode(disc, w)?;",
    );
    // ... checked before anything is written.
    assert_contains(
        &code,
        "if !self.selects_own_branch() { return Err(::peregrine::cdr::CdrError::InvalidDiscriminator); }",
    );
    assert_contains(
        &code,
        "Self::Y { disc, .. } => matches!(*disc, E::B | E::C),",
    );
    // Constructors: the first label, and checked.
    assert_contains(
        &code,
        "pub fn y(value: String) -> Self { Self::Y { disc: E::B, value } }",
    );
    assert_contains(
        &code,
        "pub fn y_with(disc: E, value: String) -> ::peregrine::cdr::Result<Self> {",
    );
    assert_contains(&code, "pub fn discriminator(&self) -> E {");
    // All enumerators covered: no default variant.
    assert!(!code.contains("U::Default"));
    // Explicit default: the variant carries the discriminator, built
    // with the first value no label uses; explicit labels are refused.
    assert_contains(
        &code,
        "Q { /// The discriminator: a value that no other branch's label uses.\n disc: i16,",
    );
    assert_contains(&code, "d => { Self::Q { disc: d, value:");
    assert_contains(
        &code,
        "pub fn q(value: u8) -> Self { Self::Q { disc: 0, value } }",
    );
    assert_contains(&code, "Self::Q { disc, .. } => !matches!(*disc, 1),");
    // Not all values covered, no default: an empty Default variant with
    // its discriminator.
    assert_contains(&code, "Default(i32),");
    assert_contains(&code, "Self::Default(d) => !matches!(*d, 1),");
    assert_contains(&code, "Self::Default(d) => *d,");
    assert_contains(
        &code,
        "Err(::peregrine::cdr::CdrError::InvalidDiscriminator)",
    );
    // One-label branches covering every value: nothing to check.
    let n = &code[code.find("pub enum Both").unwrap()..];
    let n = &n[..n.find("pub fn tc_both").unwrap()];
    assert!(!n.contains("selects_own_branch"), "{n}");
}

#[test]
fn union_discriminator_defaults_and_names() {
    let code = gen("enum E { a, b, c };
         union Ch switch (char) { case 'a': case 'b': long two; default: E other; };
         union Bo switch (boolean) { case TRUE: long t; default: string f; };
         union F switch (E) { case a: long x; default: long rest; };
         union W switch (wchar) { case L'\\0': long z; default: long w; };
         union K switch (long) {
           case 1: case 2: long discriminator;
           case 3: case 4: long discriminator_with;
           case 5: case 6: long decode_in;
         };");
    // The first free value of each discriminator type.
    assert_contains(
        &code,
        "pub fn two(value: i32) -> Self { Self::Two { disc: 97, value } }",
    );
    assert_contains(
        &code,
        "pub fn other(value: E) -> Self { Self::Other { disc: 0, value } }",
    );
    assert_contains(
        &code,
        "pub fn f(value: String) -> Self { Self::F { disc: false, value } }",
    );
    assert_contains(
        &code,
        "pub fn rest(value: i32) -> Self { Self::Rest { disc: E::B, value } }",
    );
    assert_contains(
        &code,
        "pub fn w(value: i32) -> Self { Self::W { disc: '\\u{1}', value } }",
    );
    // Constructor names that would collide with generated methods or
    // with each other take a `new_` prefix.
    assert_contains(&code, "pub fn new_discriminator(value: i32) -> Self");
    assert_contains(
        &code,
        "pub fn new_discriminator_with(disc: i32, value: i32)",
    );
    assert_contains(&code, "pub fn discriminator_with(value: i32) -> Self");
    assert_contains(
        &code,
        "pub fn discriminator_with_with(disc: i32, value: i32)",
    );
    assert_contains(&code, "pub fn new_decode_in(value: i32) -> Self");
}

#[test]
fn interface_mapping() {
    let code = gen(r#"
        module M {
          exception Bad { string why; };
          interface Base { readonly attribute long id; void hello(); };
          interface I : Base {
            string op(in string s, in sequence<octet> data, inout long n, out double d) raises (Bad);
            oneway void note(in I peer);
            attribute string label;
          };
        };
    "#);
    // Servant trait with supertrait, borrowed in-args, inout as &mut,
    // return value then outs.
    assert_contains(&code, "pub trait I: Base {");
    assert_contains(
        &code,
        "fn op(&self, s: &str, data: &[u8], n: &mut i32) -> Result<(String, f64), i::OpError>;",
    );
    assert_contains(
        &code,
        "fn note(&self, peer: Option<&IRef>) -> Result<(), ::peregrine::orb::SystemException>;",
    );
    assert_contains(
        &code,
        "fn get_label(&self) -> Result<String, ::peregrine::orb::SystemException>;",
    );
    assert_contains(
        &code,
        "fn set_label(&self, value: &str) -> Result<(), ::peregrine::orb::SystemException>;",
    );
    // Error enum per operation.
    assert_contains(&code, "pub enum OpError {");
    assert_contains(&code, "Bad(super::Bad),");
    assert_contains(&code, "System(::peregrine::orb::SystemException),");
    // Stub with narrowing and upcasts, inherited operations included.
    assert_contains(&code, "pub struct IRef(::peregrine::orb::ObjectRef);");
    assert_contains(&code, "pub fn narrow(");
    assert_contains(&code, "pub fn unchecked_narrow(");
    assert_contains(&code, "impl From<IRef> for BaseRef {");
    assert_contains(&code, "impl From<IRef> for ::peregrine::orb::ObjectRef {");
    assert_contains(&code, "pub fn hello(&self)");
    // Skeleton: the in-args borrow from the request buffer; O(1) demux.
    assert_contains(
        &code,
        "let a_s = super::super::idl_rt::decode_str(r, u32::MAX)?;",
    );
    assert_contains(
        &code,
        "let a_data = super::super::idl_rt::decode_octets(r, u32::MAX)?;",
    );
    assert_contains(&code, "fn op_index(op: &[u8]) -> Option<u32> {");
    assert_contains(&code, "match op.len() {");
    assert!(!code.contains("== \"op\""), "no string compare chain");
    assert_contains(&code, "Some(0) => i::__handle_op(&self.servant, req),");
    assert_contains(&code, "base::__handle_hello(&self.servant, req)");
    assert_contains(
        &code,
        r#"matches!(repo_id, "IDL:M/I:1.0" | "IDL:M/Base:1.0" | "IDL:omg.org/CORBA/Object:1.0")"#,
    );
    // Wire names of attributes.
    assert_contains(&code, r#""_get_label""#);
    assert_contains(&code, r#""_set_label""#);
}

#[test]
fn unsupported_constructs_are_diagnosed_at_their_location() {
    let src = "module M {\n  native N;\n  struct S { N nat; };\n  interface I { void f(in N t); long g(); };\n  typedef fixed<5,2> F;\n};\n";
    let err = Builder::new().compile_to_string("u.idl", src).unwrap_err();
    let r = &err.rendered;
    let unknown = "native type `::M::N` has no Rust mapping yet (the mapping knows \
                   `PortableServer::Servant` and `PortableServer::ServantLocator::Cookie`)";
    assert!(
        r.contains(&format!("{unknown}: `::M::S` cannot be generated")),
        "{r}"
    );
    assert!(r.contains("u.idl:3:"), "{r}");
    assert!(r.contains(&format!("{unknown}: `::M::I::f`")), "{r}");
    assert!(r.contains("u.idl:4:"), "{r}");
    // `fixed` is supported: the typedef is not diagnosed.
    assert!(!r.contains("fixed"), "{r}");
    assert!(err.errors().all(|d| d.kind == DiagKind::Unsupported));
    // Skipping leaves the rest: g() is generated, f() and S are not.
    let code = Builder::new()
        .skip_unsupported(true)
        .compile_to_string("u.idl", src)
        .unwrap();
    assert!(code.contains("fn g(&self)"));
    assert!(!code.contains("fn f(&self"));
    assert!(!code.contains("pub struct S"));
}

#[test]
fn abstract_interfaces_hold_a_reference_or_a_value() {
    let src = "module M {
  abstract interface A { string name(); };
  abstract interface B : A { long depth(); };
  interface C : B { void ping(); };
  valuetype V supports B { public long n; };
  abstract interface Empty {};
  valuetype W supports Empty { public long n; };
  abstract valuetype T supports A {};
  valuetype U : T { public long n; };
  interface I { B echo(in B x, out A y); };
};
";
    let code = gen(src);
    // The operations trait, the stub, the holder and the value trait.
    assert_contains(&code, "pub trait B: A {");
    assert_contains(&code, "pub struct BRef(::peregrine::orb::ObjectRef);");
    assert_contains(&code, "pub enum BAbstract { /// An object reference");
    assert_contains(&code, "Object(BRef),");
    assert_contains(&code, "Value(::peregrine::cdr::ValueRef<dyn BValue>),");
    assert_contains(
        &code,
        "pub trait BValue: B + ::peregrine::cdr::ValueObject {",
    );
    // No skeleton of its own; handlers for derived skeletons.
    assert!(!code.contains("pub struct BSkeleton"));
    assert_contains(&code, "pub fn __handle_depth<S: super::B + ?Sized>(");
    // The derived interface dispatches the abstract bases' operations and
    // claims their ids.
    assert_contains(
        &code,
        r#"matches!(repo_id, "IDL:M/C:1.0" | "IDL:M/B:1.0" | "IDL:M/A:1.0" | "IDL:omg.org/CORBA/Object:1.0")"#,
    );
    assert_contains(&code, "Some(1) => b::__handle_depth(&self.servant, req),");
    // Conversions: references, derived holders, values.
    assert_contains(&code, "impl From<CRef> for BAbstract {");
    assert_contains(&code, "impl From<CRef> for AAbstract {");
    assert_contains(&code, "impl From<BAbstract> for AAbstract {");
    assert_contains(
        &code,
        "::peregrine::cdr::ValueRef::map(v, |v| BValue::__as_m_a(v)),",
    );
    // The holder forwards the operations (remote or local).
    assert_contains(&code, "impl A for BAbstract {");
    assert_contains(&code, "Self::Object(r) => r.name(),");
    assert_contains(&code, "Self::Value(v) => A::name(&**v),");
    // CDR: a boolean, then an IOR or a value.
    assert_contains(&code, "w.write_bool(true);");
    assert_contains(&code, "if r.read_bool()? {");
    // Signatures.
    assert_contains(
        &code,
        "fn echo(&self, x: Option<&BAbstract>) -> Result<(Option<BAbstract>, Option<AAbstract>),",
    );
    assert_contains(&code, "BAbstract::encode_opt(x, w)?;");
    // The candidates a value slot reads: V supports B (and so A).
    assert_contains(&code, "super::V::REPOSITORY_ID => {");
    assert_contains(
        &code,
        "pub const __VALUES: ::peregrine::cdr::Polymorphic<dyn super::AValue>",
    );
    // A trait without operations is implemented by the generated code.
    assert_contains(&code, "impl Empty for W {}");
    // An abstract valuetype supporting an abstract interface: a
    // supertrait, not implemented for the application (A has operations).
    assert_contains(
        &code,
        "pub trait T: Send + Sync + ::peregrine::cdr::ValueObject + A {}",
    );
    assert!(!code.contains("impl T for U"));
    assert_contains(&code, "super::U::REPOSITORY_ID => {");
    assert!(!code.contains("impl B for V"));
    // TypeCode kind.
    assert_contains(
        &code,
        r#"TypeCode::abstract_interface_tc("IDL:M/B:1.0", "B")"#,
    );
}

#[test]
fn abstract_valuetype_slots_are_polymorphic() {
    let src = "module M {
  abstract valuetype Shape { double area(); };
  typedef sequence<Shape, 4> Shapes;
  valuetype Sq : Shape { public double side; public Shape next; public Shapes near; };
  valuetype Circle : Shape { public double r; };
  struct S { Shape s; };
  interface I { Shape biggest(in sequence<Shape> all); };
};
";
    let code = gen(src);
    assert_contains(
        &code,
        "pub trait Shape: Send + Sync + ::peregrine::cdr::ValueObject {",
    );
    assert_contains(&code, "pub s: ::peregrine::cdr::ValueSlot<dyn Shape>,");
    assert_contains(
        &code,
        "::peregrine::cdr::write_value_object(w, self.s.get())?;",
    );
    // A state member closes cycles like a concrete one.
    assert_contains(&code, "let next = shape::__VALUES.read_value(r)?;");
    assert_contains(&code, "shape::__VALUES.fixup(next, r, &v, |s| &s.next);");
    // So does a sequence member, element by element.
    assert_contains(&code, "let mut near = shape::__VALUES.read_values(r, 4)?;");
    assert_contains(
        &code,
        "shape::__VALUES.fixup_values(near, r, &v, |s| &s.near[..]);",
    );
    // Both concrete types are candidates.
    assert_contains(&code, "super::Sq::REPOSITORY_ID => {");
    assert_contains(&code, "super::Circle::REPOSITORY_ID => {");
    assert_contains(
        &code,
        "fn biggest(&self, all: &[::peregrine::cdr::ValueSlot<dyn Shape>])",
    );
}

#[test]
fn slots_in_plain_members_are_walked_to_close_cycles() {
    let src = "module M {
  valuetype Node;
  struct Edge { long weight; Node target; };
  typedef sequence<Edge> Edges;
  valuetype Node { public string name; public M::Edges edges; };
  union Pick switch (long) { case 1: Node n; case 2: case 3: Edges es; default: long x; };
  typedef Node Grid[2][3];
  valuetype EdgeBox Edge;
  valuetype Holder { public Pick p; public Grid g; public sequence<sequence<ValueBase> > vbs; };
  struct Plain { long a; string b; };
  valuetype Flat { public long a; public Plain p; public Node next; };
};
";
    let code = gen(src);
    // The owner reads its state in a scope and walks its plain members.
    assert_contains(&code, "let scope = r.open_value_scope();");
    assert_contains(
        &code,
        "r.close_value_scope(scope, v, |s: &Node, w: &mut ::peregrine::cdr::ValueWalk<'_>| {
            for e0 in s.edges.iter() { e0.__walk_values(w); }
        })",
    );
    // A struct meets its slots in member order, a union its branch's.
    assert_contains(
        &code,
        "pub fn __walk_values(&self, w: &mut ::peregrine::cdr::ValueWalk<'_>) {
            w.value(&self.target);
        }",
    );
    assert_contains(&code, "Self::N(v) => { w.value(v); }");
    assert_contains(
        &code,
        "Self::Es { value: v, .. } => { for e0 in v.iter() { e0.__walk_values(w); } }",
    );
    // Each dimension of an array, sequences of `ValueBase` (counted when
    // read) and a box's content.
    assert_contains(
        &code,
        "s.p.__walk_values(w);
        for e0 in s.g.iter() { for e1 in e0.iter() { w.value(e1); } }
        for e0 in s.vbs.iter() { for e1 in e0.iter() { w.poly(e1, &super::idl_rt::VALUE_BASE); } }",
    );
    assert_contains(&code, ".read_value(r).and_then(|v| v.nested(r))");
    assert_contains(
        &code,
        "|s: &EdgeBox, w: &mut ::peregrine::cdr::ValueWalk<'_>| { s.0.__walk_values(w); }",
    );
    // Types without slots in plain members are read as before.
    let plain = &code[code.find("pub struct Plain").unwrap()..];
    assert!(!plain[..plain.find("pub fn tc_plain").unwrap()].contains("__walk_values"));
    let flat = &code[code
        .find("impl ::peregrine::cdr::ValueType for Flat")
        .unwrap()..];
    let flat = &flat[..flat.find("pub fn tc_flat").unwrap()];
    assert!(!flat.contains("open_value_scope"), "{flat}");
    assert_contains(flat, "next.fixup(r, &v, |s| &s.next);");
}

#[test]
fn any_and_typecode_map_to_the_dynamic_crate() {
    let src = "module M {\n  struct S { any a; TypeCode t; };\n  interface I { any f(in any a, in TypeCode t, out any o); };\n};\n";
    let code = gen(src);
    assert_contains(&code, "pub a: ::peregrine::dynamic::Any,");
    assert_contains(&code, "pub t: ::peregrine::dynamic::TypeCode,");
    // `in any` is borrowed, like other non-primitive arguments.
    assert_contains(
        &code,
        "fn f(&self, a: &::peregrine::dynamic::Any, t: &::peregrine::dynamic::TypeCode)",
    );
    assert_contains(&code, "(\"a\", ::peregrine::dynamic::TypeCode::any())");
    assert_contains(
        &code,
        "(\"t\", ::peregrine::dynamic::TypeCode::tc_typecode())",
    );
}

#[test]
fn every_type_gets_a_cached_typecode_and_any_support() {
    let src = r#"module M {
  enum E { A, B };
  struct Node { long v; sequence<Node> kids; };
  union U switch (E) { case A: case B: long x; };
  typedef sequence<string, 4> Names;
  exception X { string why; };
  interface I { };
};
"#;
    let code = gen(src);
    assert_contains(
        &code,
        "pub fn tc_node() -> ::peregrine::dynamic::TypeCode {",
    );
    assert_contains(
        &code,
        "static TC: std::sync::LazyLock<::peregrine::dynamic::TypeCode> = std::sync::LazyLock::new(",
    );
    // Recursion through a placeholder, never through the cached function.
    assert_contains(
        &code,
        r#"::peregrine::dynamic::TypeCode::recursive("IDL:M/Node:1.0")"#,
    );
    assert_contains(
        &code,
        r#"::peregrine::dynamic::TypeCode::enum_tc("IDL:M/E:1.0", "E", ["A", "B"])"#,
    );
    // One member per label.
    assert_contains(
        &code,
        "label: Some(::peregrine::dynamic::DynValue::Enum(0)), name: \"x\".into(), tc: ::peregrine::dynamic::TypeCode::long() }",
    );
    assert_contains(
        &code,
        "label: Some(::peregrine::dynamic::DynValue::Enum(1)), name: \"x\".into(), tc: ::peregrine::dynamic::TypeCode::long() }",
    );
    assert_contains(&code, "::peregrine::dynamic::TypeCode::sequence_tc(4, ::peregrine::dynamic::TypeCode::string_tc(0))");
    assert_contains(
        &code,
        "pub fn names_to_any(v: &Names) -> ::peregrine::dynamic::Any",
    );
    assert_contains(
        &code,
        "pub fn names_from_any(any: &::peregrine::dynamic::Any) -> Option<Names>",
    );
    assert_contains(&code, "::peregrine::dynamic::TypeCode::exception_tc(");
    assert_contains(
        &code,
        r#"::peregrine::dynamic::TypeCode::objref_tc("IDL:M/I:1.0", "I")"#,
    );
    for t in ["E", "Node", "U", "X", "IRef"] {
        assert_contains(
            &code,
            &format!("impl ::peregrine::dynamic::IdlType for {t} {{"),
        );
        assert_contains(
            &code,
            &format!("impl ::peregrine::dynamic::ToAny for {t} {{"),
        );
    }
    for t in ["E", "Node", "U", "X"] {
        assert_contains(
            &code,
            &format!("impl ::peregrine::dynamic::FromAny for {t} {{"),
        );
    }
    assert_contains(&code, "pub fn from_any_in(");
}

#[test]
fn build_api_writes_files() {
    let dir = std::env::temp_dir().join(format!("peregrine-idl-rust-{}", std::process::id()));
    let idl = dir.join("in");
    std::fs::create_dir_all(&idl).unwrap();
    std::fs::write(
        idl.join("a.idl"),
        "#include \"b.idl\"\nmodule A { struct S { B::T t; }; };\nconst long TOP = 1;\n",
    )
    .unwrap();
    std::fs::write(idl.join("b.idl"), "module B { typedef long T; };\n").unwrap();
    let written = Builder::new()
        .include_dir(&idl)
        .out_dir(dir.join("out"))
        .cargo_directives(false)
        .compile(&[idl.join("a.idl")])
        .unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["a.rs", "b.rs", "a_defs.rs", "_include.rs"]);
    let a = std::fs::read_to_string(dir.join("out/a.rs")).unwrap();
    assert!(a.contains("pub t: super::b::T,"), "{a}");
    let inc = std::fs::read_to_string(dir.join("out/_include.rs")).unwrap();
    assert!(inc.contains("include!(\"a.rs\");"));
    assert!(inc.contains("pub mod idl_rt"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn front_end_warnings_reach_the_output_and_can_be_denied() {
    let dir = std::env::temp_dir().join(format!("peregrine-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let idl = dir.join("w.idl");
    std::fs::write(&idl, "interface I {\n  sequence<long> f();\n};\n").unwrap();
    let b = Builder::new().cargo_directives(false);
    let out = b.generate(&[&idl]).unwrap();
    assert_eq!(out.warning_count, 1);
    assert_eq!(
        out.warning_lines,
        [format!(
            "{}:2:3: anonymous sequence type as an operation result is not portable",
            idl.display()
        )]
    );
    assert!(
        out.warnings.starts_with("warning: anonymous sequence"),
        "{}",
        out.warnings
    );
    assert!(
        out.warnings.contains("2 |   sequence<long> f();"),
        "{}",
        out.warnings
    );

    let quiet = b
        .clone()
        .portability_warnings(false)
        .generate(&[&idl])
        .unwrap();
    assert_eq!(quiet.warning_count, 0);
    assert!(quiet.warnings.is_empty());

    let e = b.deny_warnings(true).generate(&[&idl]).unwrap_err();
    assert_eq!(e.errors().count(), 1);
    assert!(e.rendered.starts_with("error: anonymous sequence"), "{e}");
    assert!(e.rendered.contains("= note: a warning, denied"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn missing_input_file_is_one_line_through_the_builder() {
    let missing = std::env::temp_dir().join(format!("nosuch-{}.idl", std::process::id()));
    let e = Builder::new()
        .cargo_directives(false)
        .generate(&[&missing])
        .unwrap_err();
    assert_eq!(
        e.rendered,
        format!(
            "error: cannot read {}: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
    assert_eq!(e.errors().count(), 1);
}

const OMNI: &str = "/usr/share/idl/omniORB";

fn idl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            idl_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "idl") {
            out.push(p);
        }
    }
}

/// The omniORB files that need `skip_unsupported`: none. Valuetypes and
/// value boxes are mapped (`boxes.idl`, and `orb.idl`, which the COS
/// files include), and abstract valuetypes are traits (`pollable.idl`,
/// `messaging.idl`). A file that stops
/// generating must be added here.
const NEED_SKIP: &[&str] = &[];

/// Every omniORB IDL file generates without panicking: either code, or
/// only front-end errors (files whose includes omniORB does not ship, see
/// crates/idl/tests/omniorb.rs) and "not supported yet" diagnostics. With
/// `skip_unsupported` every file the front end accepts generates code
/// that parses.
#[test]
fn every_omniorb_idl_file_generates() {
    let dir = Path::new(OMNI);
    if !dir.is_dir() {
        if std::env::var("PEREGRINE_NO_OMNIORB_IDL").as_deref() == Ok("1") {
            return;
        }
        panic!("{OMNI} missing: apt-get install omniorb-idl (or PEREGRINE_NO_OMNIORB_IDL=1)");
    }
    let mut files = Vec::new();
    idl_files(dir, &mut files);
    files.sort();
    assert!(files.len() > 40);
    let builder = |skip| {
        Builder::new()
            .include_dir(OMNI)
            .include_dir(dir.join("COS"))
            .define("ENABLE_CLIENT_IR_SUPPORT", "1")
            .skip_unsupported(skip)
            .cargo_directives(false)
    };
    let (mut ok, mut unsupported, mut frontend) = (0, 0, 0);
    let mut need_skip = Vec::new();
    for f in &files {
        match builder(false).generate(&[f]) {
            Ok(_) => ok += 1,
            Err(e) if e.errors().all(|d| d.kind == DiagKind::Unsupported) => {
                assert!(
                    e.rendered.contains("not supported yet")
                        || e.rendered.contains("no Rust mapping yet"),
                    "{}: {}",
                    f.display(),
                    e
                );
                assert!(
                    e.rendered.contains(".idl:"),
                    "{}: no location:\n{e}",
                    f.display()
                );
                unsupported += 1;
                need_skip.push(f.file_name().unwrap().to_string_lossy().into_owned());
                let out = builder(true).generate(&[f]);
                assert!(out.is_ok(), "{}: {}", f.display(), out.unwrap_err());
            }
            Err(e) => {
                assert!(
                    e.errors().all(|d| d.kind != DiagKind::Unsupported),
                    "{}: {e}",
                    f.display()
                );
                frontend += 1;
            }
        }
    }
    eprintln!("omniORB IDL: {ok} generated, {unsupported} need skip_unsupported, {frontend} rejected by the front end");
    need_skip.sort();
    let mut want: Vec<String> = NEED_SKIP.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(need_skip, want, "files needing skip_unsupported");
    assert!(ok >= 5, "{ok}");
    assert!(frontend <= 10, "{frontend}");
}

#[test]
fn top_level_modules_allow_unused_generated_items() {
    // A client binary never uses the skeletons generated beside its
    // stubs; rustc must not warn about code the user cannot edit.
    let code = gen("module M { interface I { void f(); }; };");
    let at = code.find("pub mod m {").expect("module m");
    let attrs = &code[..at];
    let allow = attrs
        .rfind("#[allow(")
        .expect("an allow attribute on the module");
    assert!(attrs[allow..].contains("dead_code"), "{}", &attrs[allow..]);
}

#[test]
fn local_interfaces_are_traits_used_through_arcs() {
    let src = "module M {
  local interface L;
  struct Inner { L l2; long n; };
  typedef sequence<Inner> InnerSeq;
  struct Outer { InnerSeq all; };
  local interface K { L get(); void put(in L x, inout K y); Outer h(in Outer o); };
  typedef sequence<L> LSeq;
  local interface L { LSeq all(); };
  exception HoldsL { L m; };
  union U switch (short) { case 1: M::L l; case 2: Inner i; default: long n; };
  union Plain switch (short) { case 1: long n; };
  local interface J { void f(in U x) raises (HoldsL); };
};
"
    .to_string();
    let code = gen(&src);
    // Structs holding a local interface, directly or not, are local types:
    // `Clone` only, a TypeCode, no codec.
    assert_contains(&code, "#[derive(Clone)] pub struct Inner {");
    assert_contains(&code, "pub l2: Option<std::sync::Arc<dyn L>>,");
    assert_contains(&code, "#[derive(Clone)] pub struct Outer {");
    assert_contains(&code, "pub fn tc_outer()");
    assert_contains(
        &code,
        "fn h(&self, o: &Outer) -> Result<Outer, ::peregrine::orb::SystemException>;",
    );
    for absent in [
        "Encode for Inner",
        "Decode<'de> for Inner",
        "Encode for Outer",
        "inner_to_any",
        "IdlType for Outer",
    ] {
        assert!(!code.contains(absent), "{absent} generated:\n{code}");
    }
    assert_contains(&code, "pub trait K: Send + Sync {");
    assert_contains(
        &code,
        "fn get(&self) -> Result<Option<std::sync::Arc<dyn L>>, ::peregrine::orb::SystemException>;",
    );
    assert_contains(
        &code,
        "fn put(&self, x: Option<&std::sync::Arc<dyn L>>, y: &mut Option<std::sync::Arc<dyn K>>) -> Result<(), ::peregrine::orb::SystemException>;",
    );
    assert_contains(&code, "pub type LSeq = Vec<Option<std::sync::Arc<dyn L>>>;");
    assert_contains(&code, "pub fn tc_l_seq()");
    // Unions and exceptions holding one (directly or through a struct)
    // are local types as well.
    assert_contains(&code, "#[derive(Clone)] pub enum U {");
    assert_contains(&code, "L(Option<std::sync::Arc<dyn L>>),");
    assert_contains(&code, "pub fn tc_u()");
    assert_contains(&code, "#[derive(Clone)] pub struct HoldsL {");
    assert_contains(&code, "pub fn tc_holds_l()");
    assert_contains(
        &code,
        "impl core::fmt::Debug for HoldsL { fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result { f.debug_struct(\"HoldsL\").finish_non_exhaustive() } }",
    );
    // The error enum of a local operation raising it: no `PartialEq`.
    assert_contains(&code, "#[derive(Debug, Clone)] pub enum FError {");
    for absent in [
        "Encode for U",
        "Decode<'de> for U",
        "Encode for HoldsL",
        "IdlType for U",
        "IdlType for HoldsL",
        "u_to_any",
        "holds_l_to_any",
    ] {
        assert!(!code.contains(absent), "{absent} generated:\n{code}");
    }
    // A union without a local member keeps its codec.
    assert_contains(&code, "#[derive(Debug, Clone, PartialEq)] pub enum Plain {");
    assert!(code.contains("Encode for Plain"), "{code}");
    // Never marshaled: no stub, skeleton, `Any` helpers.
    for absent in ["KRef", "KSkeleton", "LRef", "l_seq_to_any", "__handle_"] {
        assert!(!code.contains(absent), "{absent} generated:\n{code}");
    }
}

#[test]
fn forward_declared_only_interface_is_a_reference_without_operations() {
    let src = "#pragma prefix \"acme.com\"\nmodule M {\n  interface Far;\n  struct S { Far f; };\n  interface Near { Far swap(in Far f); };\n};\n";
    let code = gen(src);
    assert_contains(&code, "pub struct FarRef(::peregrine::orb::ObjectRef);");
    assert_contains(
        &code,
        r#"pub const REPOSITORY_ID: &'static str = "IDL:acme.com/M/Far:1.0";"#,
    );
    assert_contains(&code, "pub fn narrow(");
    assert_contains(&code, "pub fn unchecked_narrow(");
    assert_contains(&code, "pub f: Option<FarRef>,");
    assert_contains(&code, "pub fn tc_far()");
    // Nothing to implement: no servant trait or skeleton for it.
    assert!(!code.contains("pub trait Far"), "{code}");
    assert!(!code.contains("FarSkeleton"), "{code}");
}

#[test]
fn repository_id_declarations_reach_the_generated_code() {
    let src = "#pragma prefix \"acme.com\"\nmodule M {\n  typeprefix M \"tp.org\";\n  struct S { long v; };\n  interface I { void f(); };\n  typeid I \"IDL:custom/I:2.0\";\n  enum E { a, b };\n#pragma version E 1.5\n  exception X { long c; };\n#pragma ID X \"IDL:x/X:3.0\"\n};\n";
    let code = gen(src);
    for id in [
        "IDL:tp.org/M/S:1.0",
        "IDL:custom/I:2.0",
        "IDL:tp.org/M/E:1.5",
        "IDL:x/X:3.0",
    ] {
        assert_contains(
            &code,
            &format!("pub const REPOSITORY_ID: &'static str = {id:?};"),
        );
    }
    // The skeleton answers `_is_a` for the id set by `typeid`.
    assert_contains(
        &code,
        r#"matches!(repo_id, "IDL:custom/I:2.0" | "IDL:omg.org/CORBA/Object:1.0")"#,
    );
}

#[test]
fn interface_without_operations_dispatches_without_a_one_arm_match() {
    let code = gen("interface Marker {};\n");
    assert_contains(
        &code,
        "let _ = Self::op_index(req.operation().as_bytes()); Err(::peregrine::orb::SystemException::new(",
    );
    assert!(!code.contains("match Self::op_index"), "{code}");
}

#[test]
fn valuetypes_and_boxes_get_typecodes_and_any_support() {
    let src = r#"module M {
  valuetype B;
  valuetype A { public B fwd; private long n; };
  valuetype B { public A back; };
  valuetype Base { public long x; };
  valuetype Trunc : truncatable Base { public string s; };
  abstract valuetype Abs { };
  valuetype Impl : Abs { public long y; };
  custom valuetype Cust { public long z; };
  valuetype LBox sequence<A>;
  struct HasCust { Cust c; };
  struct HasA { A first; };
  typedef sequence<A, 2> Few;
  interface I { A f(in LBox b, in Few two); };
};
"#;
    let code = gen(src);
    let dy = "::peregrine::dynamic";
    // Mutual recursion: B is built inline inside A's TypeCode and refers
    // back to A by a placeholder (A's cached function is never re-entered).
    assert_contains(
        &code,
        &format!(
            r#"{dy}::TypeCode::value_tc("IDL:M/A:1.0", "A", {dy}::valuetype::VM_NONE, None, Vec::from([
                {dy}::ValueMember {{ name: "fwd".into(), tc: {dy}::TypeCode::value_tc("IDL:M/B:1.0", "B", {dy}::valuetype::VM_NONE, None, Vec::from([
                    {dy}::ValueMember {{ name: "back".into(), tc: {dy}::TypeCode::recursive("IDL:M/A:1.0"), visibility: 1 }},
                ])), visibility: 1 }},
                {dy}::ValueMember {{ name: "n".into(), tc: {dy}::TypeCode::long(), visibility: 0 }},
            ]))"#
        ),
    );
    // Modifiers and the concrete base (an abstract base is no base).
    assert_contains(
        &code,
        &format!(
            r#"{dy}::TypeCode::value_tc("IDL:M/Trunc:1.0", "Trunc", {dy}::valuetype::VM_TRUNCATABLE, Some(tc_base()),"#
        ),
    );
    assert_contains(
        &code,
        &format!(
            r#"{dy}::TypeCode::value_tc("IDL:M/Abs:1.0", "Abs", {dy}::valuetype::VM_ABSTRACT, None, Vec::from([]))"#
        ),
    );
    assert_contains(
        &code,
        &format!(
            r#"{dy}::TypeCode::value_tc("IDL:M/Impl:1.0", "Impl", {dy}::valuetype::VM_NONE, None,"#
        ),
    );
    assert_contains(
        &code,
        &format!(
            r#"{dy}::TypeCode::value_tc("IDL:M/Cust:1.0", "Cust", {dy}::valuetype::VM_CUSTOM, None,"#
        ),
    );
    assert_contains(
        &code,
        &format!(
            r#"{dy}::TypeCode::value_box_tc("IDL:M/LBox:1.0", "LBox", {dy}::TypeCode::sequence_tc(0, tc_a()))"#
        ),
    );
    // `Any` support: values and boxes through `IdlType`, structs holding
    // values as any struct; a custom value and the types holding one
    // register its compiled type first (the interpreter reads its state
    // with that code); an abstract value is a trait, without one.
    for t in ["A", "B", "Trunc", "Impl", "LBox", "Cust", "HasCust"] {
        assert_contains(&code, &format!("impl {dy}::IdlType for {t} {{"));
    }
    assert_contains(&code, &format!("impl {dy}::ToAny for HasA {{"));
    assert_contains(&code, &format!("impl {dy}::ToAny for HasCust {{"));
    assert_contains(
        &code,
        &format!("{dy}::register_custom_value::<Cust>();\n        tc_cust()"),
    );
    assert_contains(
        &code,
        &format!("{dy}::register_custom_value::<Cust>();\n        tc_has_cust()"),
    );
    // Types that hold no custom value register none.
    assert!(!code.contains("register_custom_value::<Cust>();\n        tc_has_a()"));
    assert!(
        !code.contains(&format!("impl {dy}::IdlType for Abs ")),
        "{code}"
    );

    // The interpreted form has tables for value parameters (a bounded
    // sequence of values through the typed entries).
    let code = Builder::new()
        .marshal(peregrine_idl_rust::Marshal::Interpreted)
        .compile_to_string("t.idl", src)
        .unwrap();
    assert_contains(&code, "pub static OP_F: ::peregrine::orb::interp::OpDesc");
    assert_contains(
        &code,
        "pub static TY_M_A: ::peregrine::orb::interp::TypeDesc = ::peregrine::orb::interp::TypeDesc { idl: \"::M::A\", type_code: Some(super::tc_a), kind: ::peregrine::orb::interp::Kind::Plain };",
    );
    assert_contains(&code, "::peregrine::orb::interp::TIn(two)");
    // The stub walks the table instead of compiled code.
    assert_contains(&code, "&i::OP_F,");
}

/// The POA's natives are the ORB runtime's own types, in the operations
/// of local interfaces; `in` natives are handed over, as the runtime's
/// servant manager traits take them.
#[test]
fn poa_natives_map_to_the_runtime_servant_and_cookie() {
    let src = "module PortableServer {
  native Servant;
  typedef sequence<octet> ObjectId;
  local interface ServantLocator {
    native Cookie;
    Servant preinvoke(in ObjectId oid, out Cookie the_cookie);
    void postinvoke(in ObjectId oid, in Cookie the_cookie, in Servant the_servant);
  };
  typedef Servant Held;
  local interface POA {
    ObjectId activate_object(in Servant p_servant);
    attribute Servant current;
    PortableServer::Held held();
  };
};
";
    let code = gen(src);
    assert_contains(
        &code,
        "pub type Servant = std::sync::Arc<dyn ::peregrine::orb::Servant>;",
    );
    assert_contains(&code, "pub type Cookie = ::peregrine::orb::Cookie;");
    assert_contains(
        &code,
        "fn preinvoke(&self, oid: &[u8]) -> Result<(Servant, servant_locator::Cookie), ::peregrine::orb::SystemException,>;",
    );
    assert_contains(
        &code,
        "fn postinvoke(&self, oid: &[u8], the_cookie: servant_locator::Cookie, the_servant: Servant) -> Result<(), ::peregrine::orb::SystemException>;",
    );
    assert_contains(
        &code,
        "fn activate_object(&self, p_servant: Servant) -> Result<ObjectId, ::peregrine::orb::SystemException>;",
    );
    assert_contains(
        &code,
        "fn get_current(&self) -> Result<Servant, ::peregrine::orb::SystemException>;",
    );
    // A typedef names the same type; nothing is marshaled, so no
    // TypeCode or `Any` helpers.
    assert_contains(&code, "pub type Held = Servant;");
    assert_contains(
        &code,
        "fn held(&self) -> Result<Held, ::peregrine::orb::SystemException>;",
    );
    for absent in ["tc_servant()", "tc_held()", "held_to_any", "tc_cookie()"] {
        assert!(!code.contains(absent), "{absent} in\n{code}");
    }
}

/// Natives are never marshaled: a non-local interface's operation, a
/// member or a sequence element of native type is diagnosed where it is.
#[test]
fn natives_outside_local_operations_are_diagnosed() {
    let src = "module PortableServer {
  native Servant;
  interface Remote { void f(in Servant s); };
  struct Holder { Servant s; };
  typedef sequence<Servant> Many;
  valuetype V { public Servant s; };
};
";
    let err = Builder::new().compile_to_string("n.idl", src).unwrap_err();
    let r = &err.rendered;
    for (msg, at) in [
        (
            "native type `::PortableServer::Servant` cannot be marshaled: only operations of local interfaces may use it: `::PortableServer::Remote::f` cannot be generated",
            "n.idl:3:",
        ),
        (
            "a member of native type `::PortableServer::Servant` is not supported (natives are for operations of local interfaces): `::PortableServer::Holder` cannot be generated",
            "n.idl:4:",
        ),
        (
            "native type `::PortableServer::Servant` as a sequence or array element is not supported yet: `::PortableServer::Many` cannot be generated",
            "n.idl:5:",
        ),
        (
            "a member of native type `::PortableServer::Servant` is not supported (natives are for operations of local interfaces): `::PortableServer::V` cannot be generated",
            "n.idl:6:",
        ),
    ] {
        assert!(r.contains(msg), "{msg}\n{r}");
        assert!(r.contains(at), "{at}\n{r}");
    }
    assert_eq!(err.errors().count(), 4, "{r}");
}

/// `ValueBase` is a slot where any value may stand, wherever a type may
/// appear: written through `cdr::ValueObject`, read through the one
/// `idl_rt::VALUE_BASE` over every value type of the generated code, with
/// `CORBA::ValueBase`'s TypeCode.
#[test]
fn value_base_is_a_polymorphic_slot_everywhere() {
    let src = "module M {
  valuetype A { public long x; };
  typedef ValueBase VB;
  typedef sequence<ValueBase> VBSeq;
  typedef ValueBase VBArr[2];
  valuetype B { public string s; public ValueBase next; public VBSeq more; public VBArr two; };
  valuetype SBox string;
  struct S { ValueBase v; VBSeq all; VB other; };
  union U switch (long) { case 1: ValueBase v; default: long n; };
  exception E { ValueBase why; };
  interface I {
    ValueBase echo(in ValueBase v, inout ValueBase io, out ValueBase o) raises (E);
    attribute ValueBase attr;
  };
};
";
    let code = gen(src);
    let slot = "::peregrine::cdr::ValueSlot<dyn ::peregrine::cdr::ValueObject>";
    assert_contains(&code, &format!("pub v: {slot},"));
    assert_contains(&code, &format!("pub type VbSeq = Vec<{slot}>;"));
    assert_contains(&code, &format!("pub type VbArr = [{slot}; 2];"));
    assert_contains(&code, &format!("V({slot}),"));
    assert_contains(
        &code,
        &format!("fn echo(&self, v_: &{slot}, io_: &mut {slot}) -> Result<({slot}, {slot}), i::EchoError,>;"),
    );
    // A value's member closes a cycle like any value member.
    assert_contains(
        &code,
        "let next = super::idl_rt::VALUE_BASE.read_value(r)?;",
    );
    assert_contains(
        &code,
        "super::idl_rt::VALUE_BASE.fixup(next, r, &v, |s| &s.next);",
    );
    // And a `sequence<ValueBase>` member, element by element.
    assert_contains(
        &code,
        "let mut more = super::idl_rt::VALUE_BASE.read_values(r, u32::MAX)?;",
    );
    assert_contains(
        &code,
        "super::idl_rt::VALUE_BASE.fixup_values(more, r, &v, |s| &s.more[..]);",
    );
    // And an array member (no length on the wire).
    assert_contains(
        &code,
        "let mut two = super::idl_rt::VALUE_BASE.read_value_array(r, 2)?;",
    );
    assert_contains(&code, "two: two.take_array()?");
    assert_contains(
        &code,
        "super::idl_rt::VALUE_BASE.fixup_values(two, r, &v, |s| &s.two[..]);",
    );
    assert_contains(
        &code,
        "::peregrine::cdr::write_value_object(w, self.v.get())?;",
    );
    // The reader knows every concrete valuetype and box of the code.
    for t in ["A", "B", "SBox"] {
        assert_contains(
            &code,
            &format!("super::m::{t}::REPOSITORY_ID => {{ Some(<super::m::{t} as ::peregrine::cdr::ValueType>::read_state(r, info)"),
        );
        assert_contains(
            &code,
            &format!("let v = match v.downcast::<super::m::{t}>() {{ Ok(t) => return Ok(t.upcast()), Err(v) => v }};"),
        );
    }
    assert_contains(&code, "::peregrine::dynamic::TypeCode::value_base()");
    // Without a `ValueBase` slot there is no reader.
    let plain = gen("module M { valuetype A { public long x; }; };");
    assert!(!plain.contains("VALUE_BASE"), "{plain}");
}

/// A `ValueBase` may hold a `custom` value: `register_value_types`
/// registers the compiled custom types (only those) as the readers of
/// their values, besides every value TypeCode.
#[test]
fn register_value_types_registers_the_custom_readers() {
    let src = "module M {
  custom valuetype Cust { public long z; };
  valuetype Plain { public long y; };
  struct S { ValueBase v; };
};
";
    let code = gen(src);
    let dy = "::peregrine::dynamic";
    assert_contains(&code, "pub fn register_value_types()");
    assert_contains(
        &code,
        &format!("{dy}::register_custom_value::<super::m::Cust>();"),
    );
    assert!(
        !code.contains("register_custom_value::<super::m::Plain>"),
        "{code}"
    );
    assert_contains(&code, "super::m::tc_plain(),");
}

#[test]
fn values_holding_references_read_the_orb_from_the_reader() {
    let src = "module M {
  interface A { long f(); };
  abstract interface D { string g(); };
  struct S { A x; };
  typedef sequence<A> ASeq;
  valuetype Plain { public long n; };
  valuetype V { public A x; public Object o; public M::S s; public ASeq more; public M::D d; public V next; };
  valuetype Box A;
  interface Use { V echo(in V val, out Plain p); Box b(); };
  interface Poly { ValueBase any_value(in ValueBase v); };
};";
    let code = gen(src);
    // The state of `V` and `Box` binds its references to the ORB the
    // reader was handed.
    assert_contains(
        &code,
        "let orb = super::idl_rt::value_orb(r)?; let orb = &*orb;",
    );
    assert_contains(&code, "let x = super::idl_rt::decode_ref::<ARef>(r, orb)?;");
    assert_contains(&code, "let s_ = S::decode_in(r, orb)?;");
    assert_contains(&code, "let d = DAbstract::decode_opt(r, orb)?;");
    assert_contains(
        &code,
        "let v = super::idl_rt::decode_ref::<ARef>(r, orb)?; Ok(r.new_value(Self(v)))",
    );
    assert_eq!(code.matches("const NEEDS_CONTEXT: bool = true;").count(), 2);
    // Stubs and skeletons hand it over.
    assert_contains(
        &code,
        "super::idl_rt::decode_value_in::<::peregrine::cdr::ValueSlot<V>",
    );
    assert_contains(
        &code,
        "super::idl_rt::decode_value_in::<::peregrine::cdr::ValueSlot<Box>",
    );
    assert_contains(&code, "pub fn from_any_in(any: &::peregrine::dynamic::Any, orb: &::peregrine::orb::Orb) -> Option<::peregrine::cdr::ValueSlot<Self>>");
    // A `ValueBase` slot may hold a `V`: stub and skeleton hand the ORB
    // over too, since some value of the build needs it.
    assert_contains(&code, "pub const VALUES_NEED_ORB: bool = true;");
    assert_contains(
        &code,
        "if super::super::idl_rt::VALUES_NEED_ORB { Some(req.orb().clone()) } else { None };",
    );
    assert_contains(
        &code,
        "if super::idl_rt::VALUES_NEED_ORB { super::idl_rt::bind_values(r, orb); }",
    );
    // A value without references is read as before: no context.
    let plain = &code[code
        .find("impl ::peregrine::cdr::ValueType for Plain")
        .unwrap()..];
    let plain = &plain[..plain.find("\n    }\n").unwrap()];
    assert!(
        !plain.contains("NEEDS_CONTEXT") && !plain.contains("value_orb"),
        "{plain}"
    );
}

#[test]
fn valuetype_operations_raise_user_exceptions() {
    let src = "module M {
  exception E { long why; };
  exception F {};
  valuetype V { public long n; long f(in long x) raises (E, F); void g(); };
};";
    let code = gen(src);
    assert_contains(&code, "fn f(&self, x: i32) -> Result<i32, v::FError>;");
    assert_contains(
        &code,
        "fn g(&self) -> Result<(), ::peregrine::orb::SystemException>;",
    );
    assert_contains(&code, "pub enum FError { /// `::M::E` E(super::E), /// `::M::F` F(super::F), /// A CORBA system exception. System(::peregrine::orb::SystemException), }");
    assert_contains(&code, "impl From<super::E> for FError");
}

/// An operation with a `context` clause takes the caller's properties as
/// a last `&Context` parameter (in the stub and the servant trait); the
/// stub sends those the clause names after the arguments (never as a
/// borrowed tail) and the skeleton reads them back for the servant. A
/// parameter named `context` pushes it to `context_`.
#[test]
fn operation_contexts_are_a_last_context_parameter() {
    let src = "module M {
  typedef sequence<long> LongSeq;
  interface I {
    string op(in long a, in string _context) context(\"LANG\", \"X_*\");
    long bulk(in LongSeq s) context(\"S*\");
    oneway void note() context(\"A\");
  };
};
";
    let code = gen(src);
    assert_contains(
        &code,
        "fn op(&self, a: i32, context: &str, context_: &::peregrine::orb::Context) -> Result<String, ::peregrine::orb::SystemException>",
    );
    assert_contains(
        &code,
        "::peregrine::cdr::Encode::encode(context, w)?; context_.encode_matching(&[\"LANG\", \"X_*\"], w)?;",
    );
    assert_contains(
        &code,
        "fn note(&self, context: &::peregrine::orb::Context) -> Result<(), ::peregrine::orb::SystemException>",
    );
    assert_contains(&code, "context.encode_matching(&[\"A\"], w)?;");
    // The sequence goes in the request writer, before the context.
    assert_contains(&code, "context.encode_matching(&[\"S*\"], w)?;");
    assert!(!code.contains("invoke_with_tail"), "{code}");
    assert_contains(
        &code,
        "let ctx = ::peregrine::orb::Context::decode(r)?; match super::I::op(servant, a_a, &a_context, &ctx)",
    );
    // Table-driven: the patterns are in the table, the stub hands the
    // context to the engine, the handler reads it after the arguments.
    let code = Builder::new()
        .marshal(peregrine_idl_rust::Marshal::Interpreted)
        .compile_to_string("t.idl", src)
        .unwrap();
    assert_contains(&code, "contexts: &[\"LANG\", \"X_*\"],");
    assert_contains(&code, "::peregrine::orb::interp::call_in_context::<");
    assert_contains(&code, "Some(context_))?;");
    assert_contains(
        &code,
        "::peregrine::orb::interp::call_oneway_in_context(&self.0, &i::OP_NOTE, &[], Some(context))",
    );
    assert_contains(
        &code,
        "let ctx = ::peregrine::orb::interp::read_context(req)?; match super::I::op(servant, *a_a.get(), a_context.get(), &ctx)",
    );
    assert!(!code.contains("encode_matching"), "{code}");
}

/// Every valuetype and value box reports the value references its state
/// holds (`ValueType::EDGES`), at any depth: direct slots, sequences of
/// them, structs and unions holding them, abstract interface values,
/// boxed contents; types holding none report nothing and get no walk.
#[test]
fn values_report_their_edges() {
    let src = r#"
        module m {
          abstract interface A { void f(); };
          valuetype N;
          struct S { long x; N node; };
          union U switch (long) { case 1: N node; case 2: long l; };
          typedef sequence<S> SSeq;
          valuetype N {
            public long id;
            public N next;
            public sequence<N> kids;
            public SSeq edges;
            public U choice;
            public A peer;
            public ValueBase vb;
          };
          valuetype NBox sequence<N>;
          struct Plain { long x; };
          valuetype Leaf { public long v; public Plain p; };
        };
    "#;
    let code = gen(src);
    assert_eq!(
        code.matches("const EDGES: Option<::peregrine::cdr::Edges<Self>> = Some(unsafe {")
            .count(),
        3,
        "N, NBox and Leaf"
    );
    // N's walk: each member that can hold a value, once.
    assert_contains(&code, "e.slot(&self.next);");
    assert_contains(&code, "for e0 in self.kids.iter() { e.slot(e0); }");
    assert_contains(
        &code,
        "for e0 in self.edges.iter() { e0.__value_edges(e); }",
    );
    assert_contains(&code, "self.choice.__value_edges(e);");
    assert_contains(&code, "if let Some(a) = &self.peer { a.__value_edges(e); }");
    assert_contains(&code, "e.slot(&self.vb);");
    // The struct and union walks, and the abstract interface holder's.
    assert_contains(&code, "impl S {");
    assert_contains(&code, "Self::Node(v) => { e.slot(v); }");
    assert_contains(&code, "if let Self::Value(v) = self { e.value(v); }");
    // The box reports its content; the leaf nothing.
    assert_contains(&code, "for e0 in self.0.iter() { e.slot(e0); }");
    assert_eq!(code.matches("let _ = e;").count(), 1, "Leaf's empty walk");
    assert!(
        !code.contains("impl Plain { /// Reports"),
        "no walk for Plain"
    );
}
