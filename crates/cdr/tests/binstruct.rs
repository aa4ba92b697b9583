//! The plain-data bulk path must produce exactly the bytes of the
//! member-by-member encoding, at every starting alignment and in both
//! byte orders (the first element after a sequence length may start at 4
//! mod 8, where the in-memory layout does not apply).

mod common;

use common::binstruct::BinStruct;
use peregrine_cdr::{ByteOrder, Decode, Encode, Reader, Writer};
use proptest::prelude::*;

fn field_by_field(items: &[BinStruct], order: ByteOrder, offset: usize) -> Vec<u8> {
    let mut w = Writer::with_offset(order, offset);
    w.write_len(items.len()).unwrap();
    for it in items {
        it.encode(&mut w).unwrap();
    }
    w.into_vec()
}

fn arb_binstruct() -> impl Strategy<Value = BinStruct> {
    (
        any::<i16>(),
        any::<u8>(),
        any::<i32>(),
        any::<u8>(),
        any::<u64>(),
        any::<[u8; 8]>(),
    )
        .prop_map(|(s, c, l, o, d, pad)| BinStruct {
            s,
            c,
            l,
            o,
            d: f64::from_bits(d),
            pad,
        })
}

proptest! {
    #[test]
    fn bulk_equals_field_by_field(
        items in prop::collection::vec(arb_binstruct(), 0..20),
        little in any::<bool>(),
        offset in 0usize..16,
    ) {
        let order = ByteOrder::from_flag(little);
        let expected = field_by_field(&items, order, offset);
        let mut w = Writer::with_offset(order, offset);
        items.encode(&mut w).unwrap();
        prop_assert_eq!(w.as_slice(), &expected[..]);

        let mut r = Reader::with_offset(&expected, order, offset);
        let back = Vec::<BinStruct>::decode(&mut r).unwrap();
        prop_assert!(r.is_empty());
        // Compare bit patterns: NaN payloads must survive too.
        let bits = |v: &[BinStruct]| v.iter().map(|b| (b.s, b.c, b.l, b.o, b.d.to_bits(), b.pad)).collect::<Vec<_>>();
        prop_assert_eq!(bits(&back), bits(&items));
    }
}

#[test]
fn padding_is_zeroed_on_the_wire() {
    let items = [BinStruct {
        s: 1,
        c: 2,
        l: 3,
        o: 4,
        d: 5.0,
        pad: [6; 8],
    }; 3];
    let mut w = Writer::new(ByteOrder::Little);
    w.write_u32(0); // element data starts at 8 after the length below
    items[..].encode(&mut w).unwrap();
    let bytes = w.into_vec();
    // sequence length at 4, first element at 8: bulk path from the start.
    let e = &bytes[8..40];
    assert_eq!(e[3], 0);
    assert!(e[9..16].iter().all(|&b| b == 0));
}

#[test]
fn truncated_bulk_sequence_is_an_error() {
    let items = vec![BinStruct::default(); 4];
    let mut w = Writer::new(ByteOrder::Big);
    items.encode(&mut w).unwrap();
    let bytes = w.into_vec();
    for cut in 0..bytes.len() {
        let mut r = Reader::new(&bytes[..cut], ByteOrder::Big);
        assert!(Vec::<BinStruct>::decode(&mut r).is_err(), "cut at {cut}");
    }
}
