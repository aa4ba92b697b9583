//! The repository ids the interpreter hands the CDR writer are kept for
//! the life of the process (the codec holds `&'static str`): a stream of
//! value TypeCodes with ever new ids stops at a bound with a typed error
//! instead of growing memory without end, and ids already kept go on
//! working. Alone in its binary: it fills the process-wide table.

use peregrine_cdr::{ByteOrder, Writer};
use peregrine_dynamic::{encode_value, DynError, DynValue, TypeCode, ValueNode};

fn encode_box(id: &str) -> peregrine_dynamic::Result<()> {
    let tc = TypeCode::value_box_tc(id, "B", TypeCode::long());
    let v = ValueNode::boxed(tc.clone(), DynValue::Long(1)).unwrap();
    let mut w = Writer::new(ByteOrder::Big);
    encode_value(&tc, &DynValue::Value(Some(v.into())), &mut w)
}

#[test]
fn distinct_ids_are_bounded() {
    let first = "IDL:Kept/First:1.0";
    encode_box(first).unwrap();
    let mut refused = None;
    for i in 0..100_000 {
        if let Err(e) = encode_box(&format!("IDL:Many/T{i}:1.0")) {
            refused = Some((i, e));
            break;
        }
    }
    let (at, e) = refused.expect("the table is bounded");
    assert!(at > 1000, "refused after only {at} ids");
    assert!(matches!(e, DynError::Marshal { .. }), "{e:?}");
    // Ids kept before the bound still encode.
    encode_box(first).unwrap();
    encode_box("IDL:Many/T0:1.0").unwrap();
}
