//! Model assertions for the shared benchmark IDL and for repository ids,
//! pragmas, docs and constant values.

use peregrine_idl::*;
use std::path::Path;

fn good(name: &str) -> Spec {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/good")
        .join(name);
    Frontend::new()
        .parse_file(&p)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn src(text: &str) -> Spec {
    Frontend::new()
        .loader(MemLoader::new())
        .parse_source("t.idl", text)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn id(spec: &Spec, n: &str) -> DefId {
    spec.lookup(n).unwrap_or_else(|| panic!("{n} not found"))
}

#[test]
fn ttcp_model() {
    let s = good("ttcp.idl");
    let bs = id(&s, "BinStruct");
    let d = s.def(bs);
    assert_eq!(d.repo_id, "IDL:BinStruct:1.0");
    assert!(d.in_main_file);
    assert!(d
        .doc
        .as_deref()
        .unwrap()
        .starts_with("32 bytes in native C layout"));
    let DefKind::Struct {
        members,
        defined: true,
        ..
    } = &d.kind
    else {
        panic!()
    };
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["s", "c", "l", "o", "d", "pad"]);
    assert_eq!(members[0].ty, Type::Basic(BasicType::Short));
    assert_eq!(members[1].ty, Type::Basic(BasicType::Char));
    assert_eq!(
        members[5].ty,
        Type::Array(Box::new(Type::Basic(BasicType::Octet)), vec![8])
    );

    let ss = id(&s, "StructSeq");
    assert_eq!(
        s.def(ss).kind,
        DefKind::Typedef {
            ty: Type::Sequence(Box::new(Type::Named(bs)), None)
        }
    );
    let i = id(&s, "ttcp_sequence");
    assert_eq!(s.def(i).repo_id, "IDL:ttcp_sequence:1.0");
    let ops: Vec<&str> = s
        .contents(i)
        .iter()
        .map(|o| s.def(*o).name.as_str())
        .collect();
    assert_eq!(
        ops,
        [
            "sendShortSeq",
            "sendLongSeq",
            "sendDoubleSeq",
            "sendCharSeq",
            "sendOctetSeq",
            "sendStructSeq",
            "sync",
            "sendNoParams_2way",
            "sendNoParams_1way",
            "sendOctetSeq_2way",
            "sendStructSeq_2way",
            "sendDoubleSeq_2way"
        ]
    );
    let send = id(&s, "ttcp_sequence::sendStructSeq");
    let DefKind::Operation {
        oneway,
        result,
        params,
        raises,
        ..
    } = &s.def(send).kind
    else {
        panic!()
    };
    assert!(*oneway);
    assert_eq!(*result, Type::Basic(BasicType::Void));
    assert_eq!(params.len(), 1);
    assert_eq!(params[0].name, "ts");
    assert_eq!(params[0].dir, ParamDir::In);
    assert_eq!(params[0].ty, Type::Named(ss));
    assert!(raises.is_empty());
    assert_eq!(s.def(send).repo_id, "IDL:ttcp_sequence/sendStructSeq:1.0");
    let sync = id(&s, "ttcp_sequence::sync");
    let DefKind::Operation {
        oneway: false,
        result,
        params,
        ..
    } = &s.def(sync).kind
    else {
        panic!()
    };
    assert_eq!(*result, Type::Basic(BasicType::ULongLong));
    assert!(params.is_empty());
    let cs = id(&s, "CharSeq");
    assert_eq!(
        s.resolve_alias(&Type::Named(cs)),
        &Type::Sequence(Box::new(Type::Basic(BasicType::Char)), None)
    );
}

#[test]
fn param_test_model() {
    let s = good("param_test.idl");
    let pt = id(&s, "Param_Test");
    assert_eq!(s.def(pt).repo_id, "IDL:Param_Test:1.0");
    assert_eq!(s.contents(pt).len(), 7);
    let op = id(&s, "Param_Test::test_var_struct");
    let vs = id(&s, "Var_Struct");
    let DefKind::Operation { result, params, .. } = &s.def(op).kind else {
        panic!()
    };
    assert_eq!(*result, Type::Named(vs));
    let dirs: Vec<ParamDir> = params.iter().map(|p| p.dir).collect();
    assert_eq!(dirs, [ParamDir::In, ParamDir::InOut, ParamDir::Out]);
    assert!(params.iter().all(|p| p.ty == Type::Named(vs)));
    let op = id(&s, "Param_Test::test_unbounded_string");
    let DefKind::Operation { result, .. } = &s.def(op).kind else {
        panic!()
    };
    assert_eq!(*result, Type::String(None));
    let DefKind::Struct { members, .. } = &s.def(vs).kind else {
        panic!()
    };
    let strseq = id(&s, "StrSeq");
    assert_eq!(members[5].name, "seq");
    assert_eq!(members[5].ty, Type::Named(strseq));
    let ns = id(&s, "Nested_Struct");
    let DefKind::Struct { members, .. } = &s.def(ns).kind else {
        panic!()
    };
    assert_eq!(members[0].ty, Type::Named(vs));
}

#[test]
fn pragmas_and_repo_ids() {
    let s = src(r#"
module M1 {
  typedef long T1;
  typedef long T2;
#pragma ID T2 "DCE:d62207a2-011e-11ce-88b4-0800090b5d3e:3"
};
#pragma prefix "P1"
module M2 {
  module M3 {
#pragma prefix "P2"
    typedef long T3;
  };
  typedef long T4;
#pragma version T4 2.4
};
module M4 {
  typeprefix M4 "omg.org";
  interface I {};
  typeid I "IDL:custom/I:9.9";
  struct S { long a; };
};
"#);
    let r = |n: &str| s.def(id(&s, n)).repo_id.clone();
    assert_eq!(r("M1::T1"), "IDL:M1/T1:1.0");
    assert_eq!(r("M1::T2"), "DCE:d62207a2-011e-11ce-88b4-0800090b5d3e:3");
    assert_eq!(r("M2"), "IDL:P1/M2:1.0");
    assert_eq!(r("M2::M3::T3"), "IDL:P2/T3:1.0");
    assert_eq!(r("M2::T4"), "IDL:P1/M2/T4:2.4");
    assert_eq!(r("M4"), "IDL:omg.org/M4:1.0");
    assert_eq!(r("M4::I"), "IDL:custom/I:9.9");
    assert_eq!(r("M4::S"), "IDL:omg.org/M4/S:1.0");
}

#[test]
fn prefix_is_reset_in_included_files() {
    let loader = MemLoader::new()
        .with(
            "main.idl",
            "#pragma prefix \"outer\"\n#include \"inc.idl\"\nstruct A { long x; };\n",
        )
        .with(
            "inc.idl",
            "struct B { long y; };\n#pragma prefix \"inner\"\nstruct C { long z; };\n",
        );
    let s = Frontend::new()
        .loader(loader)
        .parse_file("main.idl")
        .unwrap();
    assert_eq!(s.def(id(&s, "A")).repo_id, "IDL:outer/A:1.0");
    assert_eq!(s.def(id(&s, "B")).repo_id, "IDL:B:1.0");
    assert_eq!(s.def(id(&s, "C")).repo_id, "IDL:inner/C:1.0");
    assert!(s.def(id(&s, "A")).in_main_file);
    assert!(!s.def(id(&s, "B")).in_main_file);
}

#[test]
fn constants_and_enums() {
    let s = src(r#"
enum Color { red, green, blue };
const Color fav = green;
const long A = 1 << 4 | 3;
const unsigned short B = ~0;
const long long C = -0x8000000000000000;
const double D = 1.5e2 * 2;
const char E = '\n';
const wchar W = L'\u00e9';
const string S = "ab" "cd";
const fixed F = 1.25d * 2;
const boolean T = TRUE;
const octet O = 0377;
typedef long Arr[A][2];
union U switch (Color) { case red: case green: long a; default: string s; };
"#);
    let v = |n: &str| match &s.def(id(&s, n)).kind {
        DefKind::Const { value, .. } => value.clone(),
        _ => panic!(),
    };
    let green = id(&s, "green");
    assert_eq!(s.def(green).scoped_name, "::green");
    assert_eq!(
        v("fav"),
        ConstValue::Enum {
            enum_def: id(&s, "Color"),
            enumerator: green,
            index: 1
        }
    );
    assert_eq!(v("A"), ConstValue::Int(19));
    assert_eq!(v("B"), ConstValue::Int(65535));
    assert_eq!(v("C"), ConstValue::Int(i64::MIN as i128));
    assert_eq!(v("D"), ConstValue::Float(300.0));
    assert_eq!(v("E"), ConstValue::Char(b'\n'));
    assert_eq!(v("W"), ConstValue::WChar(0xe9));
    assert_eq!(v("S"), ConstValue::Str("abcd".into()));
    assert_eq!(
        v("F"),
        ConstValue::Fixed(FixedValue {
            value: 25,
            scale: 1
        })
    );
    assert_eq!(v("T"), ConstValue::Bool(true));
    assert_eq!(v("O"), ConstValue::Int(255));
    let DefKind::Typedef { ty } = &s.def(id(&s, "Arr")).kind else {
        panic!()
    };
    assert_eq!(
        *ty,
        Type::Array(Box::new(Type::Basic(BasicType::Long)), vec![19, 2])
    );
    let DefKind::Union {
        discriminator,
        branches,
        ..
    } = &s.def(id(&s, "U")).kind
    else {
        panic!()
    };
    assert_eq!(*discriminator, Type::Named(id(&s, "Color")));
    assert_eq!(branches[0].labels.len(), 2);
    assert_eq!(branches[1].labels, vec![Label::Default]);
}

#[test]
fn interfaces_values_and_lookup() {
    let s = src(r#"
module M {
  interface A;
  interface B { typedef long T; exception Oops { string why; }; };
  /** Derived interface. */
  interface A : B {
    T get() raises (Oops);
    attribute T x, y;
    readonly attribute string r raises (Oops);
  };
  abstract interface Abs {};
  local interface Loc : A {};
  valuetype VB sequence<long>;
  abstract valuetype AV { void ping(); };
  valuetype V : AV supports Abs {
    public long a;
    private string b;
    factory create(in long a);
  };
  custom valuetype CV { public V inner; };
  struct Node { sequence<Node> children; };
};
module M { const long again = 1; };
"#);
    let a = id(&s, "M::A");
    let b = id(&s, "M::B");
    let d = s.def(a);
    assert_eq!(d.doc.as_deref(), Some("Derived interface."));
    let DefKind::Interface {
        bases,
        defined: true,
        ..
    } = &d.kind
    else {
        panic!()
    };
    assert_eq!(bases, &vec![b]);
    let get = id(&s, "M::A::get");
    let DefKind::Operation { result, raises, .. } = &s.def(get).kind else {
        panic!()
    };
    assert_eq!(*result, Type::Named(id(&s, "M::B::T")));
    assert_eq!(raises, &vec![id(&s, "M::B::Oops")]);
    assert!(s.lookup("M::A::y").is_some());
    let loc = id(&s, "M::Loc");
    assert!(matches!(
        s.def(loc).kind,
        DefKind::Interface { is_local: true, .. }
    ));
    assert_eq!(s.all_bases(loc), vec![a, b]);
    let v = id(&s, "M::V");
    let names: Vec<&str> = s
        .contents(v)
        .iter()
        .map(|c| s.def(*c).name.as_str())
        .collect();
    assert_eq!(names, ["a", "b", "create"]);
    assert!(matches!(
        s.def(id(&s, "M::V::b")).kind,
        DefKind::StateMember { public: false, .. }
    ));
    assert!(matches!(
        s.def(id(&s, "M::VB")).kind,
        DefKind::ValueBox { .. }
    ));
    assert!(s.lookup("M::again").is_some());
    let m = id(&s, "M");
    assert!(s.contents(m).contains(&id(&s, "M::again")));
}

#[test]
fn orb_idl_typecode() {
    let s =
        src("module CORBA { interface IDLType; };\nstruct S { CORBA::TypeCode t; TypeCode u; };");
    let DefKind::Struct { members, .. } = &s.def(id(&s, "S")).kind else {
        panic!()
    };
    assert_eq!(members[0].ty, Type::TypeCode);
    assert_eq!(members[1].ty, Type::TypeCode);
}

#[test]
fn warnings_are_returned() {
    let s = src("struct S { long a; };\n#pragma ID S \"IDL:x/S:1.0\"\n#pragma version S 2.0\n");
    assert_eq!(s.warnings.len(), 1);
    assert!(s.warnings[0]
        .message
        .contains("`#pragma version` ignored: repository id was set explicitly"));
    assert_eq!(s.def(s.lookup("S").unwrap()).repo_id, "IDL:x/S:1.0");
}

#[test]
fn check_source_never_panics_on_garbage() {
    let inputs = [
        "",
        "{",
        "}",
        "module",
        "module M {",
        "interface I : {",
        "union U switch (",
        "const long x = ;",
        "typedef sequence<sequence<long>> s;",
        "#if\n",
        "#define F(x\n",
        "struct S { S s; };",
        "valuetype V : V {};",
        "interface I : I {};",
        "'",
        "\"",
        "const fixed f = 1.0d / 0.0d;",
        "typedef long a[0];",
        "enum E {};",
        "#pragma ID\n",
        "#pragma version X 1\n",
        "module M { typeprefix ::X \"p\"; };",
        "native;",
        "union U switch (long) { default: long a; };",
        "#include <x>\n",
        "::",
        "_",
    ];
    for i in inputs {
        let _ = check_source("fuzz.idl", i);
    }
    // pseudo-random byte soup built from IDL tokens
    let toks = [
        "module",
        "M",
        "{",
        "}",
        ";",
        "interface",
        "struct",
        "union",
        "switch",
        "(",
        ")",
        "case",
        "1",
        ":",
        "long",
        "sequence",
        "<",
        ">",
        ",",
        "typedef",
        "const",
        "=",
        "+",
        "::",
        "enum",
        "valuetype",
        "#define X",
        "\n",
        "#if X\n",
        "#endif\n",
        "oneway",
        "void",
        "in",
        "raises",
        "exception",
        "attribute",
        "readonly",
        "fixed",
        "'a'",
        "\"s\"",
        "[",
        "]",
        "-",
        "~",
    ];
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for _ in 0..300 {
        let mut s = String::new();
        for _ in 0..60 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s.push_str(toks[(x % toks.len() as u64) as usize]);
            s.push(' ');
        }
        let _ = check_source("fuzz.idl", &s);
    }
}

#[test]
fn local_types_are_allowed_where_the_spec_allows_them() {
    // CORBA 3.x "Local Interface": local types in local interfaces' operations
    // and attributes, in structs, sequences and exceptions (which become
    // local types), a local interface inheriting from an unconstrained one,
    // and unconstrained interfaces using only unconstrained types.
    let s = src(r#"
interface U { void f(in U x); };
local interface L : U { void g(in L x, out U y); };
struct HoldsL { L m; };
typedef sequence<L> LSeq;
exception LocalE { L m; };
local interface M { LSeq all(in HoldsL h) raises (LocalE); attribute L a; };
interface V : U { U back(); };
"#);
    let l = id(&s, "L");
    assert!(matches!(
        s.def(l).kind,
        DefKind::Interface { is_local: true, .. }
    ));
}

#[test]
fn wide_character_and_string_constants() {
    let s = src(r#"
const wchar A = L'x';
const wchar B = L'\u20AC';
const wchar C = L'\x41';
const wchar D = L'\'';
const wchar E = A;
const wstring S = L"ab\u0101" L"-\n" L"\u20ac1";
typedef wstring<8> W8;
const W8 T = L"\u00e9t\u00e9";
const wstring U = S;
const wstring V = L"é";
"#);
    let v = |n: &str| match &s.def(id(&s, n)).kind {
        DefKind::Const { value, .. } => value.clone(),
        _ => panic!(),
    };
    assert_eq!(v("A"), ConstValue::WChar('x' as u32));
    assert_eq!(v("B"), ConstValue::WChar(0x20ac));
    assert_eq!(v("C"), ConstValue::WChar(0x41));
    assert_eq!(v("D"), ConstValue::WChar('\'' as u32));
    assert_eq!(v("E"), ConstValue::WChar('x' as u32));
    // `\u` takes at most four hex digits: `\u20ac1` is `€` then `1`.
    assert_eq!(v("S"), ConstValue::WStr("abā-\n€1".into()));
    assert_eq!(v("T"), ConstValue::WStr("été".into()));
    assert_eq!(v("U"), v("S"));
    assert_eq!(v("V"), ConstValue::WStr("é".into()));
}
