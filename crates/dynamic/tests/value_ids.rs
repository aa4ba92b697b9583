//! The repository ids the interpreter writes are borrowed from the
//! TypeCodes for the length of the encoding only (the CDR writer finds an
//! id again by comparing it with the octets already written): nothing is
//! kept for the process, so a stream of value TypeCodes with ever new ids
//! (a bridge forwarding what peers send) has no bound to hit, and an id
//! met twice in one stream, even from two TypeCode objects, goes once.

use peregrine_cdr::{ByteOrder, Writer};
use peregrine_dynamic::{encode_value, DynValue, TypeCode, ValueNode};

fn boxed(id: &str, v: i32) -> (TypeCode, DynValue) {
    let tc = TypeCode::value_box_tc(id, "B", TypeCode::long());
    let v = ValueNode::boxed(tc.clone(), DynValue::Long(v)).unwrap();
    (tc, DynValue::Value(Some(v.into())))
}

#[test]
fn distinct_ids_have_no_process_wide_bound() {
    // More than any table kept for the process would hold.
    for i in 0..20_000 {
        let (tc, v) = boxed(&format!("IDL:Many/T{i}:1.0"), i);
        let mut w = Writer::new(ByteOrder::Big);
        encode_value(&tc, &v, &mut w).unwrap();
    }
}

#[test]
fn an_id_from_two_typecodes_is_written_once() {
    let id = "IDL:Twice/B:1.0";
    let (tc1, v1) = boxed(id, 1);
    let (tc2, v2) = boxed(&String::from(id), 2);
    assert!(!tc1.ptr_eq(&tc2));
    let mut w = Writer::new(ByteOrder::Big);
    encode_value(&tc1, &v1, &mut w).unwrap();
    encode_value(&tc2, &v2, &mut w).unwrap();
    let bytes = w.into_vec();
    let n = bytes
        .windows(id.len())
        .filter(|s| *s == id.as_bytes())
        .count();
    assert_eq!(n, 1, "the second header refers back to the first id");
    // tag, id (length, text, NUL, padding), state; then tag, indirection
    // to the id, state.
    let first = 4 + 4 + (id.len() + 1).next_multiple_of(4) + 4;
    assert_eq!(bytes.len(), first + 4 + 8 + 4);
}
