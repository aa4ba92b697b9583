//! Property tests of IDL `fixed`: CDR round trips for random digits,
//! scales and values, the text form, and decoding arbitrary octets
//! without panicking.

use peregrine_cdr::{ByteOrder, CdrError, Decode, Encode, Fixed, FixedPoint, Reader, Writer};
use proptest::prelude::*;

/// A random `(digits, scale, unscaled)` that fits `fixed<digits, scale>`.
fn typed_value() -> impl Strategy<Value = (u16, u16, i128)> {
    (1u16..=31)
        .prop_flat_map(|d| (Just(d), 0..=d, 0..=d))
        .prop_flat_map(|(d, s, used)| {
            let lim = 10i128.pow(u32::from(used));
            (Just(d), Just(s), -(lim - 1)..lim)
        })
}

proptest! {
    #[test]
    fn cdr_round_trip((d, s, v) in typed_value(), little in any::<bool>()) {
        let order = if little { ByteOrder::Little } else { ByteOrder::Big };
        let x = Fixed::new(v, d, s).unwrap();
        let mut w = Writer::new(order);
        w.write_u8(0xEE);
        x.encode_as(d, s, &mut w).unwrap();
        let bytes = w.into_vec();
        // No alignment, d / 2 + 1 octets, independent of byte order.
        prop_assert_eq!(bytes.len(), 1 + usize::from(d) / 2 + 1);
        prop_assert_eq!(&bytes[1..], &x.to_bcd(d, s).unwrap()[..]);
        let mut r = Reader::new(&bytes, order);
        r.read_u8().unwrap();
        let back = Fixed::decode_as(&mut r, d, s).unwrap();
        prop_assert!(r.is_empty());
        prop_assert_eq!(back, x);
        prop_assert_eq!(back.unscaled(), v);
        prop_assert_eq!((back.digits(), back.scale()), (d, s));
    }

    #[test]
    fn text_round_trip((d, s, v) in typed_value()) {
        let x = Fixed::new(v, d, s).unwrap();
        let text = x.to_string();
        let back: Fixed = text.parse().unwrap();
        prop_assert_eq!(back, x);
        prop_assert_eq!(back.scale(), s);
        prop_assert_eq!(back.to_string(), text);
    }

    #[test]
    fn rescale_keeps_value((d, s, v) in typed_value(), extra in 0u16..5) {
        let x = Fixed::new(v, d, s).unwrap();
        if let Ok(y) = x.rescale((d + extra).min(31), (s + extra).min((d + extra).min(31))) {
            prop_assert_eq!(y, x);
        }
        // Ordering agrees with f64 where f64 can tell them apart.
        let z = Fixed::new(v / 3, d, s).unwrap();
        if (x.to_f64() - z.to_f64()).abs() > 1e-6 * x.to_f64().abs().max(1.0) {
            prop_assert_eq!(x < z, x.to_f64() < z.to_f64());
        }
    }

    #[test]
    fn decode_arbitrary_octets(bytes in proptest::collection::vec(any::<u8>(), 0..20),
                               d in 0u16..40, s in 0u16..40) {
        let mut r = Reader::new(&bytes, ByteOrder::Little);
        match Fixed::decode_as(&mut r, d, s) {
            Ok(x) => {
                // Whatever decodes re-encodes to the same octets (up to
                // the sign of zero).
                let n = usize::from(d) / 2 + 1;
                let again = x.to_bcd(d, s).unwrap();
                prop_assert_eq!(&again[..n - 1], &bytes[..n - 1]);
                prop_assert_eq!(again[n - 1] >> 4, bytes[n - 1] >> 4);
            }
            Err(CdrError::InvalidFixed | CdrError::Truncated { .. } | CdrError::FixedOutOfRange { .. }) => {}
            Err(e) => prop_assert!(false, "unexpected {e:?}"),
        }
    }

    #[test]
    fn typed_round_trip(v in -999_999_999i128..=999_999_999) {
        type Money = FixedPoint<9, 2>;
        let m = Money::from_unscaled(v).unwrap();
        let mut w = Writer::new(ByteOrder::Big);
        vec![m, m].encode(&mut w).unwrap();
        let bytes = w.into_vec();
        let back = Vec::<Money>::decode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap();
        prop_assert_eq!(back, vec![m, m]);
    }
}
