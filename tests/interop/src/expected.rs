//! The fixed values both sides send and check (`cxx/expected.h` holds the
//! same ones for the omniORB peers).

use crate::interop::{Choice, Color, Inner, Labels, Matrix, Plain, Record};

/// `short`.
pub const S: i16 = -12345;
/// `unsigned short`.
pub const US: u16 = 54321;
/// `long`.
pub const L: i32 = -1_234_567_890;
/// `unsigned long`.
pub const UL: u32 = 4_000_000_000;
/// `long long`.
pub const LL: i64 = -1_234_567_890_123_456_789;
/// `unsigned long long`.
pub const ULL: u64 = 18_000_000_000_000_000_000;
/// `float`.
pub const F: f32 = 1.5;
/// `double`.
pub const D: f64 = std::f64::consts::PI;
/// `boolean`.
pub const B: bool = true;
/// `char`.
pub const C: u8 = b'Z';
/// `octet`.
pub const O: u8 = 0xA5;
/// `string`: not ASCII, so the char code set matters (omniORB's native
/// set is ISO 8859-1; Peregrine sends UTF-8 when negotiated).
pub const STR: &str = "Peregrine café";
/// `wchar`.
pub const WC: char = '\u{20AC}';
/// `wstring` (basic multilingual plane only).
pub const WSTR: &str = "wide \u{20AC} \u{FC} \u{3A9} \u{65E5}";

/// The first plain-data struct.
pub fn plain1() -> Plain {
    Plain {
        s: -2,
        c: b'p',
        l: 123_456,
        o: 9,
        d: 0.125,
    }
}

/// The second plain-data struct.
pub fn plain2() -> Plain {
    Plain {
        s: 1,
        c: b'q',
        l: 2,
        o: 3,
        d: 4.5,
    }
}

/// `[[1, 2, 3], [4, 5, 6]]`.
pub fn grid() -> Matrix {
    [[1, 2, 3], [4, 5, 6]]
}

/// The fixed Record.
pub fn record() -> Record {
    Record {
        nested: Inner {
            id: 7,
            name: "inner".into(),
        },
        pod: plain1(),
        hue: Color::Green,
        values: vec![1, -2, 3],
        grid: grid(),
        flag: true,
    }
}

/// The fixed Choice of `check_seqs`.
pub fn choice() -> Choice {
    Choice::Text("union".into())
}

/// The discriminators both sides send for `Labels`: every label and
/// default values on both sides of them.
pub const LABEL_DISCS: [i32; 6] = [1, 2, 3, 0, 42, -1];

/// The fixed `Labels` with discriminator `d` (`num` -7, `text` "labels",
/// `hue` blue).
pub fn labels(d: i32) -> Labels {
    match d {
        1 => Labels::Num(-7),
        2 | 3 => Labels::text_with(d, "labels".into()).expect("a label of text"),
        _ => Labels::hue_with(d, Color::Blue).expect("a default value"),
    }
}

/// The fixed octets of `check_seqs`.
pub const OCTETS: [u8; 4] = [0, 1, 2, 255];
/// The fixed longs of `check_seqs`.
pub const LONGS: [i32; 4] = [i32::MIN, -1, 0, i32::MAX];
/// The fixed strings of `check_seqs`.
pub const STRINGS: [&str; 3] = ["a", "", "three"];

/// Octet `i` of a large `big_octets`/`take` argument.
pub fn big_octet(i: usize) -> u8 {
    (i % 251) as u8
}

/// Octet `i` of a large `big_octets` result.
pub fn big_octet_reply(i: usize) -> u8 {
    ((i * 7) % 251) as u8
}
