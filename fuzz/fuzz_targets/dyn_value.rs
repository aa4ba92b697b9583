//! Valuetypes from arbitrary bytes: the first byte picks the byte order
//! and one of a set of value TypeCodes (a recursive node, a truncatable
//! derived value read as its base, a registered derived type, value
//! boxes, one recursive, an abstract interface, values in a struct, a
//! sequence and an any, and the generated shapes of a value recursive
//! through a box, an alias and a private member, and a graph node whose
//! edges are structs in a sequence); the rest is decoded
//! against it. Decoding never panics, hangs or over-allocates; what decodes re-encodes (sharing,
//! cycles and truncation included) to octets that decode and re-encode
//! to the same octets; skipping agrees with decoding on where the value
//! ends.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use peregrine_cdr::{ByteOrder, Reader, Writer};
use peregrine_dynamic::valuetype::{register_value_type, VM_NONE, VM_TRUNCATABLE};
use peregrine_dynamic::{decode_value, encode_value, skip_value, TypeCode, ValueMember};

fn member(name: &str, tc: TypeCode) -> ValueMember {
    ValueMember {
        name: name.into(),
        tc,
        visibility: 1,
    }
}

fn typecodes() -> &'static [TypeCode] {
    static TCS: OnceLock<Vec<TypeCode>> = OnceLock::new();
    TCS.get_or_init(|| {
        let node = TypeCode::value_tc(
            "IDL:F/Node:1.0",
            "Node",
            VM_NONE,
            None,
            vec![
                member("id", TypeCode::long()),
                member("label", TypeCode::string_tc(0)),
                member("next", TypeCode::recursive("IDL:F/Node:1.0")),
            ],
        );
        let base = TypeCode::value_tc(
            "IDL:F/Base:1.0",
            "Base",
            VM_NONE,
            None,
            vec![member("a", TypeCode::long())],
        );
        // Known to the decoder: read whole wherever a Base is expected.
        let known = TypeCode::value_tc(
            "IDL:F/Known:1.0",
            "Known",
            VM_TRUNCATABLE,
            Some(base.clone()),
            vec![member("n", node.clone()), member("b", base.clone())],
        );
        register_value_type(known.clone()).expect("a value TypeCode");
        let sbox = TypeCode::value_box_tc("IDL:F/SBox:1.0", "SBox", TypeCode::string_tc(0));
        let rbox = TypeCode::value_box_tc(
            "IDL:F/RBox:1.0",
            "RBox",
            TypeCode::sequence_tc(0, TypeCode::recursive("IDL:F/RBox:1.0")),
        );
        // The shapes the IDL compiler generates for `valuetype Tree {
        // public long v; public ForestBox kids; private Tree parent; }`
        // with `typedef sequence<Tree> Forest; valuetype ForestBox
        // Forest;`: recursion through a box, an alias and a private
        // member, seen from the value and from the alias.
        let tree_members = |kids: TypeCode| {
            vec![
                member("v", TypeCode::long()),
                member("kids", kids),
                ValueMember {
                    name: "parent".into(),
                    tc: TypeCode::recursive("IDL:F/Tree:1.0"),
                    visibility: 0,
                },
            ]
        };
        let tree = TypeCode::value_tc(
            "IDL:F/Tree:1.0",
            "Tree",
            VM_NONE,
            None,
            tree_members(TypeCode::value_box_tc(
                "IDL:F/ForestBox:1.0",
                "ForestBox",
                TypeCode::alias_tc(
                    "IDL:F/Forest:1.0",
                    "Forest",
                    TypeCode::sequence_tc(0, TypeCode::recursive("IDL:F/Tree:1.0")),
                ),
            )),
        );
        let forest = TypeCode::alias_tc(
            "IDL:F/Forest:1.0",
            "Forest",
            TypeCode::sequence_tc(
                0,
                TypeCode::value_tc(
                    "IDL:F/Tree:1.0",
                    "Tree",
                    VM_NONE,
                    None,
                    tree_members(TypeCode::value_box_tc(
                        "IDL:F/ForestBox:1.0",
                        "ForestBox",
                        TypeCode::recursive("IDL:F/Forest:1.0"),
                    )),
                ),
            ),
        );
        vec![
            node.clone(),
            base.clone(),
            known,
            sbox.clone(),
            rbox,
            TypeCode::abstract_interface_tc("IDL:F/Abs:1.0", "Abs"),
            TypeCode::struct_tc(
                "IDL:F/Pair:1.0",
                "Pair",
                [("x", node.clone()), ("y", node.clone()), ("s", sbox)],
            ),
            TypeCode::sequence_tc(0, base),
            TypeCode::any(),
            tree,
            forest,
            // `struct GEdge { long weight; GNode target; };` in a
            // sequence member: back edges close inside the structs.
            TypeCode::value_tc(
                "IDL:F/GNode:1.0",
                "GNode",
                VM_NONE,
                None,
                vec![
                    member("name", TypeCode::string_tc(0)),
                    member(
                        "edges",
                        TypeCode::sequence_tc(
                            0,
                            TypeCode::struct_tc(
                                "IDL:F/GEdge:1.0",
                                "GEdge",
                                [
                                    ("weight", TypeCode::long()),
                                    ("target", TypeCode::recursive("IDL:F/GNode:1.0")),
                                ],
                            ),
                        ),
                    ),
                ],
            ),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&flag, body)) = data.split_first() else {
        return;
    };
    let order = ByteOrder::from_flag(flag & 1 == 1);
    let tcs = typecodes();
    let tc = &tcs[usize::from(flag >> 1) % tcs.len()];
    let mut r = Reader::new(body, order);
    let decoded = decode_value(tc, &mut r);
    let mut s = Reader::new(body, order);
    let skipped = skip_value(tc, &mut s);
    assert_eq!(decoded.is_ok(), skipped.is_ok());
    let Ok(v) = decoded else { return };
    assert_eq!(r.remaining(), s.remaining());
    let mut w = Writer::new(order);
    let Ok(()) = encode_value(tc, &v, &mut w) else {
        // Only an Any may hold what does not re-encode (a value of a
        // custom type it describes is refused on decode already).
        return;
    };
    let once = w.into_vec();
    let again = decode_value(tc, &mut Reader::new(&once, order)).expect("decode re-encoded value");
    let mut w = Writer::new(order);
    encode_value(tc, &again, &mut w).expect("encode again");
    assert_eq!(w.into_vec(), once);
});
