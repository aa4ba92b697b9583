//! IDL `fixed`: exact decimal values and their CDR encoding.
//!
//! [`Fixed`] is a decimal value `value × 10^-scale` with at most
//! [`Fixed::MAX_DIGITS`] (31) significant digits, like C++'s
//! `CORBA::Fixed`. [`FixedPoint<D, S>`] is the value of one IDL type
//! `fixed<D, S>`: its digits and scale are part of the Rust type, so it
//! implements [`Encode`] and [`Decode`] and generated code can put it in
//! structs, unions, sequences and arrays like any other type.
//!
//! # CDR encoding
//!
//! CORBA 3.x Part 2, 9.3.2.8: packed BCD, two decimal digits per octet
//! (half-octets), most significant first, with one half-octet of sign at
//! the end (`0xC` positive, `0xD` negative). When the declared digit count
//! is even the first half-octet is a padding zero, so the encoding of
//! `fixed<d, s>` is always `d / 2 + 1` octets. The scale is not sent (the
//! IDL type or TypeCode supplies it), there is no alignment, and the
//! octets do not depend on the byte order. `fixed<5,2>` 123.45 is
//! `12 34 5C`; `fixed<4,2>` -12.34 is `01 23 4D`.
//!
//! Decoding accepts only the two signs the specification defines and
//! rejects anything else (including packed decimal's "unsigned" `0xF`,
//! which omniORB 4.2 also refuses with `MARSHAL`) with
//! [`CdrError::InvalidFixed`] (`MARSHAL`), as it does a digit half-octet
//! over 9 or a non-zero padding half-octet. Encoding a value that does not
//! fit the declared type fails with [`CdrError::FixedOutOfRange`]
//! (`BAD_PARAM`). A negative zero decodes as zero (and re-encodes with
//! `0xC`).

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::str::FromStr;

use alloc::vec::Vec;

use crate::{CdrError, Decode, Encode, Reader, Result, Writer};

/// `10^n` for `n <= 38`.
const fn pow10(n: u32) -> i128 {
    let mut p: i128 = 1;
    let mut i = 0;
    while i < n {
        p *= 10;
        i += 1;
    }
    p
}

/// `10^0 ..= 10^38`.
const POW10: [i128; 39] = {
    let mut t = [0i128; 39];
    let mut i = 0;
    while i < 39 {
        t[i] = pow10(i as u32);
        i += 1;
    }
    t
};

/// Number of decimal digits of `v` (0 for 0).
fn digit_count(v: u128) -> u16 {
    let mut n = 0u16;
    let mut v = v;
    while v != 0 {
        v /= 10;
        n += 1;
    }
    n
}

/// Why a [`Fixed`] could not be built, parsed or converted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FixedError {
    /// Text that is not a decimal number (`[+-]digits[.digits][dD]`).
    Syntax,
    /// More than 31 significant digits, or a scale over the digits.
    TooManyDigits,
    /// The value does not fit `fixed<digits, scale>` without losing
    /// digits.
    DoesNotFit {
        /// Declared digits.
        digits: u16,
        /// Declared scale.
        scale: u16,
    },
}

impl fmt::Display for FixedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FixedError::Syntax => f.write_str("not a fixed-point decimal number"),
            FixedError::TooManyDigits => {
                f.write_str("fixed-point value with more than 31 digits or scale over digits")
            }
            FixedError::DoesNotFit { digits, scale } => {
                write!(f, "value does not fit fixed<{digits},{scale}>")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for FixedError {}

/// An exact decimal value: `unscaled × 10^-scale`, with `digits` total
/// decimal digits of which `scale` are after the point (C++'s
/// `CORBA::Fixed`).
///
/// Invariants: `digits <= 31`, `scale <= digits`, and
/// `|unscaled| < 10^digits`. Comparison, equality and hashing are
/// numeric: `1.5` (`fixed<2,1>`) equals `1.50` (`fixed<3,2>`).
/// [`Display`](fmt::Display) writes exactly `scale` fraction digits
/// (`"123.45"`, `"-0.05"`, `"7"`); [`FromStr`] reads the same form with
/// an optional sign and IDL's `d`/`D` suffix.
#[derive(Debug, Clone, Copy)]
pub struct Fixed {
    value: i128,
    digits: u16,
    scale: u16,
}

impl Fixed {
    /// The most digits a `fixed` value can have.
    pub const MAX_DIGITS: u16 = 31;

    /// Zero (`fixed<1,0>`).
    pub const ZERO: Fixed = Fixed {
        value: 0,
        digits: 1,
        scale: 0,
    };

    /// `unscaled × 10^-scale` with exactly `digits` digits.
    pub const fn new(
        unscaled: i128,
        digits: u16,
        scale: u16,
    ) -> core::result::Result<Self, FixedError> {
        if digits > Self::MAX_DIGITS || scale > digits {
            return Err(FixedError::TooManyDigits);
        }
        if unscaled.unsigned_abs() >= POW10[digits as usize] as u128 {
            return Err(FixedError::DoesNotFit { digits, scale });
        }
        Ok(Self {
            value: unscaled,
            digits,
            scale,
        })
    }

    /// [`Fixed::new`] for constants (generated code uses it for IDL
    /// `fixed` constants).
    ///
    /// # Panics
    ///
    /// When the value does not fit: in a `const` item that is a compile
    /// error, not a run-time panic.
    pub const fn constant(unscaled: i128, digits: u16, scale: u16) -> Self {
        match Self::new(unscaled, digits, scale) {
            Ok(v) => v,
            Err(_) => panic!("fixed constant does not fit its digits and scale"),
        }
    }

    /// `unscaled × 10^-scale` with as many digits as it needs (at least
    /// one, and at least `scale`).
    pub fn from_unscaled(unscaled: i128, scale: u16) -> core::result::Result<Self, FixedError> {
        let digits = digit_count(unscaled.unsigned_abs()).max(scale).max(1);
        Self::new(unscaled, digits, scale)
    }

    /// The unscaled value (`123.45` is `12345` at scale 2).
    pub fn unscaled(&self) -> i128 {
        self.value
    }

    /// Total number of digits.
    pub fn digits(&self) -> u16 {
        self.digits
    }

    /// Number of digits after the decimal point.
    pub fn scale(&self) -> u16 {
        self.scale
    }

    /// True for a value below zero.
    pub fn is_negative(&self) -> bool {
        self.value < 0
    }

    /// The same value as `fixed<digits, scale>`, if it fits exactly (no
    /// fraction digit dropped, no integer digit over the limit).
    pub fn rescale(&self, digits: u16, scale: u16) -> core::result::Result<Self, FixedError> {
        if digits > Self::MAX_DIGITS || scale > digits {
            return Err(FixedError::TooManyDigits);
        }
        let misfit = FixedError::DoesNotFit { digits, scale };
        let value = if scale >= self.scale {
            self.value
                .checked_mul(POW10[usize::from(scale - self.scale)])
                .ok_or(misfit)?
        } else {
            let p = POW10[usize::from(self.scale - scale)];
            if self.value % p != 0 {
                return Err(misfit);
            }
            self.value / p
        };
        Self::new(value, digits, scale).map_err(|_| misfit)
    }

    /// The value truncated (towards zero) to at most `scale` fraction
    /// digits (C++ `CORBA::Fixed::truncate`).
    pub fn truncate(&self, scale: u16) -> Self {
        if scale >= self.scale {
            return *self;
        }
        let drop = self.scale - scale;
        Self {
            value: self.value / POW10[usize::from(drop)],
            digits: self.digits - drop,
            scale,
        }
        .normalized_digits()
    }

    /// The value rounded half away from zero to at most `scale` fraction
    /// digits (C++ `CORBA::Fixed::round`). The result may need one more
    /// integer digit (`9.99` rounds to `10.0`); when that would exceed 31
    /// digits the result is truncated instead.
    pub fn round(&self, scale: u16) -> Self {
        if scale >= self.scale {
            return *self;
        }
        let drop = self.scale - scale;
        let p = POW10[usize::from(drop)];
        let q = self.value / p;
        let r = self.value % p;
        let q = if r.unsigned_abs() * 2 >= p as u128 {
            q + self.value.signum()
        } else {
            q
        };
        let digits = (self.digits - drop).max(digit_count(q.unsigned_abs()));
        Self::new(q, digits.max(1), scale).unwrap_or_else(|_| self.truncate(scale))
    }

    /// The nearest `f64` (not exact for most values).
    pub fn to_f64(&self) -> f64 {
        self.value as f64 / POW10[usize::from(self.scale)] as f64
    }

    /// The value with at least one digit (`digits` never below `scale`).
    fn normalized_digits(mut self) -> Self {
        self.digits = self.digits.max(self.scale).max(1);
        self
    }

    /// `(unscaled, scale)` without trailing fraction zeros: equal values
    /// have equal keys.
    fn key(&self) -> (i128, u16) {
        let (mut v, mut s) = (self.value, self.scale);
        while s > 0 && v % 10 == 0 {
            v /= 10;
            s -= 1;
        }
        (v, s)
    }

    /// Writes `self` as the IDL type `fixed<digits, scale>` (see the
    /// module docs); fails with [`CdrError::FixedOutOfRange`]
    /// when it does not fit exactly.
    pub fn encode_as(&self, digits: u16, scale: u16, w: &mut Writer) -> Result<()> {
        let v = self
            .rescale(digits, scale)
            .map_err(|_| CdrError::FixedOutOfRange { digits, scale })?;
        v.write_bcd(w);
        Ok(())
    }

    /// Reads a value of the IDL type `fixed<digits, scale>` (`digits / 2
    /// + 1` octets); fails with [`CdrError::InvalidFixed`] on a bad
    /// half-octet and with [`CdrError::FixedOutOfRange`] for a declared
    /// type that no `Fixed` can hold (over 31 digits, scale over digits).
    pub fn decode_as(r: &mut Reader<'_>, digits: u16, scale: u16) -> Result<Self> {
        if digits > Self::MAX_DIGITS || scale > digits {
            return Err(CdrError::FixedOutOfRange { digits, scale });
        }
        let raw = r.read_bytes(usize::from(digits) / 2 + 1)?;
        let mut value: i128 = 0;
        let last = raw.len() - 1;
        for (i, &b) in raw.iter().enumerate() {
            let (hi, lo) = (b >> 4, b & 0xF);
            if hi > 9 || (i == 0 && digits % 2 == 0 && hi != 0) {
                return Err(CdrError::InvalidFixed);
            }
            value = value * 10 + i128::from(hi);
            if i == last {
                return match lo {
                    0xC => Ok(Self {
                        value,
                        digits,
                        scale,
                    }),
                    0xD => Ok(Self {
                        value: -value,
                        digits,
                        scale,
                    }),
                    _ => Err(CdrError::InvalidFixed),
                };
            }
            if lo > 9 {
                return Err(CdrError::InvalidFixed);
            }
            value = value * 10 + i128::from(lo);
        }
        // `raw` is never empty (`digits / 2 + 1 >= 1` octets).
        Err(CdrError::InvalidFixed)
    }

    /// The packed BCD half-octets of `self` with its own digit count.
    fn write_bcd(&self, w: &mut Writer) {
        let n = usize::from(self.digits) / 2 + 1;
        let mut buf = [0u8; 16];
        let mut mag = self.value.unsigned_abs();
        // Fill from the last octet: sign, then digits least significant
        // first.
        let mut nibbles = 2 * n;
        let put = |buf: &mut [u8; 16], pos: usize, nib: u8| {
            let b = &mut buf[pos / 2];
            if pos % 2 == 0 {
                *b |= nib << 4;
            } else {
                *b |= nib;
            }
        };
        nibbles -= 1;
        put(&mut buf, nibbles, if self.value < 0 { 0xD } else { 0xC });
        while nibbles > 0 {
            nibbles -= 1;
            put(&mut buf, nibbles, (mag % 10) as u8);
            mag /= 10;
        }
        w.write_bytes(&buf[..n]);
    }

    /// The CDR octets of `self` as `fixed<digits, scale>` (for tests and
    /// tools; the same octets [`Fixed::encode_as`] writes).
    pub fn to_bcd(&self, digits: u16, scale: u16) -> Result<Vec<u8>> {
        let mut w = Writer::new(crate::ByteOrder::Big);
        self.encode_as(digits, scale, &mut w)?;
        Ok(w.into_vec())
    }
}

impl Default for Fixed {
    fn default() -> Self {
        Self::ZERO
    }
}

impl PartialEq for Fixed {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Fixed {}

impl PartialOrd for Fixed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Fixed {
    fn cmp(&self, other: &Self) -> Ordering {
        // Bring both to the larger scale; a product that overflows i128
        // is larger in magnitude than any 31-digit value.
        let up = |v: i128, by: u16| v.checked_mul(POW10[usize::from(by)]);
        let (a, b) = match self.scale.cmp(&other.scale) {
            Ordering::Equal => (Some(self.value), Some(other.value)),
            Ordering::Less => (up(self.value, other.scale - self.scale), Some(other.value)),
            Ordering::Greater => (Some(self.value), up(other.value, self.scale - other.scale)),
        };
        match (a, b) {
            (Some(a), Some(b)) => a.cmp(&b),
            (None, _) => self.value.signum().cmp(&0),
            (_, None) => 0.cmp(&other.value.signum()),
        }
    }
}

impl Hash for Fixed {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mag = self.value.unsigned_abs();
        let p = POW10[usize::from(self.scale)] as u128;
        let sign = if self.value < 0 { "-" } else { "" };
        if self.scale == 0 {
            write!(f, "{sign}{mag}")
        } else {
            let width = usize::from(self.scale);
            write!(f, "{sign}{}.{:0width$}", mag / p, mag % p)
        }
    }
}

impl FromStr for Fixed {
    type Err = FixedError;

    /// `[+-]digits[.digits][d|D]` (at least one digit); leading integer
    /// zeros are dropped, fraction digits (trailing zeros included) set
    /// the scale.
    fn from_str(s: &str) -> core::result::Result<Self, FixedError> {
        let s = s.strip_suffix(['d', 'D']).unwrap_or(s);
        let (negative, s) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
        if (int.is_empty() && frac.is_empty()) || !all_digits(int) || !all_digits(frac) {
            return Err(FixedError::Syntax);
        }
        let int = int.trim_start_matches('0');
        let total = int.len() + frac.len();
        if total > usize::from(Self::MAX_DIGITS) {
            return Err(FixedError::TooManyDigits);
        }
        let mut value: i128 = 0;
        for b in int.bytes().chain(frac.bytes()) {
            value = value * 10 + i128::from(b - b'0');
        }
        if negative {
            value = -value;
        }
        // Both lengths are at most 31 here.
        let scale = frac.len() as u16;
        Self::new(value, (total as u16).max(1), scale)
    }
}

impl From<i64> for Fixed {
    fn from(v: i64) -> Self {
        Self {
            value: i128::from(v),
            digits: digit_count(v.unsigned_abs().into()).max(1),
            scale: 0,
        }
    }
}

/// A `Fixed` written with its own digits and scale (C++'s untyped
/// `CORBA::Fixed`, e.g. inside an `any` whose TypeCode was made from the
/// value). There is no `Decode` for `Fixed`: the octets do not say their
/// digits and scale; use [`Fixed::decode_as`] or [`FixedPoint`].
impl Encode for Fixed {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        self.write_bcd(w);
        Ok(())
    }
}

/// A value of the IDL type `fixed<D, S>` (`D <= 31`, `S <= D`, checked
/// at compile time when the type is used).
///
/// It always holds a [`Fixed`] with exactly `D` digits and scale `S`, so
/// encoding cannot fail; [`FixedPoint::new`] converts any `Fixed` that
/// fits exactly. It dereferences to that `Fixed`, and prints with `S`
/// fraction digits (`fixed<5,2>` 1.5 is `"1.50"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FixedPoint<const D: u16, const S: u16>(Fixed);

impl<const D: u16, const S: u16> FixedPoint<D, S> {
    /// Compile-time check of the type's parameters.
    const VALID: () = assert!(
        D <= Fixed::MAX_DIGITS && S <= D,
        "fixed<D, S> needs D <= 31 and S <= D"
    );

    /// Digits of the IDL type.
    pub const DIGITS: u16 = D;
    /// Scale of the IDL type.
    pub const SCALE: u16 = S;

    /// `value` as `fixed<D, S>`, if it fits exactly.
    pub fn new(value: Fixed) -> core::result::Result<Self, FixedError> {
        let () = Self::VALID;
        value.rescale(D, S).map(Self)
    }

    /// `unscaled × 10^-S`, if it has at most `D` digits.
    pub const fn from_unscaled(unscaled: i128) -> core::result::Result<Self, FixedError> {
        let () = Self::VALID;
        match Fixed::new(unscaled, D, S) {
            Ok(v) => Ok(Self(v)),
            Err(e) => Err(e),
        }
    }

    /// [`FixedPoint::from_unscaled`] for constants (generated code uses
    /// it for IDL constants of `fixed<D, S>` types).
    ///
    /// # Panics
    ///
    /// When the value does not fit: in a `const` item that is a compile
    /// error, not a run-time panic.
    pub const fn constant(unscaled: i128) -> Self {
        let () = Self::VALID;
        Self(Fixed::constant(unscaled, D, S))
    }

    /// Zero.
    pub fn zero() -> Self {
        let () = Self::VALID;
        Self(Fixed {
            value: 0,
            digits: D,
            scale: S,
        })
    }

    /// The value.
    pub fn get(self) -> Fixed {
        self.0
    }
}

impl<const D: u16, const S: u16> Default for FixedPoint<D, S> {
    fn default() -> Self {
        Self::zero()
    }
}

impl<const D: u16, const S: u16> core::ops::Deref for FixedPoint<D, S> {
    type Target = Fixed;
    fn deref(&self) -> &Fixed {
        &self.0
    }
}

impl<const D: u16, const S: u16> From<FixedPoint<D, S>> for Fixed {
    fn from(v: FixedPoint<D, S>) -> Fixed {
        v.0
    }
}

impl<const D: u16, const S: u16> TryFrom<Fixed> for FixedPoint<D, S> {
    type Error = FixedError;
    fn try_from(v: Fixed) -> core::result::Result<Self, FixedError> {
        Self::new(v)
    }
}

impl<const D: u16, const S: u16> fmt::Display for FixedPoint<D, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl<const D: u16, const S: u16> FromStr for FixedPoint<D, S> {
    type Err = FixedError;
    /// Parses like [`Fixed`], then converts exactly.
    fn from_str(s: &str) -> core::result::Result<Self, FixedError> {
        Self::new(s.parse()?)
    }
}

impl<const D: u16, const S: u16> Encode for FixedPoint<D, S> {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        self.0.write_bcd(w);
        Ok(())
    }
}

impl<'de, const D: u16, const S: u16> Decode<'de> for FixedPoint<D, S> {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let () = Self::VALID;
        Fixed::decode_as(r, D, S).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ByteOrder;
    use alloc::string::ToString;

    fn f(s: &str) -> Fixed {
        s.parse().unwrap()
    }

    #[test]
    fn spec_examples() {
        // fixed<5,2> 123.45 and fixed<4,2> -12.34.
        assert_eq!(f("123.45").to_bcd(5, 2).unwrap(), [0x12, 0x34, 0x5C]);
        assert_eq!(f("-12.34").to_bcd(4, 2).unwrap(), [0x01, 0x23, 0x4D]);
        assert_eq!(f("0").to_bcd(1, 0).unwrap(), [0x0C]);
        assert_eq!(f("1.5").to_bcd(5, 2).unwrap(), [0x00, 0x15, 0x0C]);
        assert_eq!(
            f("-9999999999999999999999999999999")
                .to_bcd(31, 0)
                .unwrap()
                .len(),
            16
        );
    }

    #[test]
    fn parse_and_display() {
        for (text, shown, digits, scale) in [
            ("123.45", "123.45", 5, 2),
            ("-0.05", "-0.05", 2, 2),
            ("007.50", "7.50", 3, 2),
            ("1.5d", "1.5", 2, 1),
            ("+3D", "3", 1, 0),
            (".5", "0.5", 1, 1),
            ("5.", "5", 1, 0),
            ("0", "0", 1, 0),
            ("-0.0", "0.0", 1, 1),
        ] {
            let v = f(text);
            assert_eq!(v.to_string(), shown, "{text}");
            assert_eq!((v.digits(), v.scale()), (digits, scale), "{text}");
        }
        for bad in [
            "", "-", ".", "1.2.3", "1e5", "0x10", " 1", "1..", "--1", "1dd",
        ] {
            assert_eq!(bad.parse::<Fixed>(), Err(FixedError::Syntax), "{bad:?}");
        }
        assert_eq!(
            "12345678901234567890123456789012".parse::<Fixed>(),
            Err(FixedError::TooManyDigits)
        );
    }

    #[test]
    fn numeric_comparison() {
        assert_eq!(f("1.5"), f("1.50"));
        assert!(f("1.49") < f("1.5"));
        assert!(f("-2") < f("-1.99"));
        assert!(f("9999999999999999999999999999999") > f("0.000000000000000000000000000001"));
        assert!(f("-9999999999999999999999999999999") < f("0.000000000000000000000000000001"));
        let mut set = std::collections::HashSet::new();
        set.insert(f("2.50"));
        assert!(set.contains(&f("2.5")));
    }

    #[test]
    fn rescale_truncate_round() {
        assert_eq!(f("1.5").rescale(5, 2).unwrap().unscaled(), 150);
        assert_eq!(
            f("1.234").rescale(5, 2),
            Err(FixedError::DoesNotFit {
                digits: 5,
                scale: 2
            })
        );
        assert!(f("1000").rescale(5, 2).is_err());
        assert_eq!(f("1.239").truncate(2).to_string(), "1.23");
        assert_eq!(f("-1.239").truncate(2).to_string(), "-1.23");
        assert_eq!(f("1.235").round(2).to_string(), "1.24");
        assert_eq!(f("-1.235").round(2).to_string(), "-1.24");
        assert_eq!(f("9.99").round(1).to_string(), "10.0");
    }

    #[test]
    fn decode_errors() {
        let dec = |b: &[u8], d, s| Fixed::decode_as(&mut Reader::new(b, ByteOrder::Big), d, s);
        assert_eq!(dec(&[0x12, 0x34, 0x5C], 5, 2).unwrap(), f("123.45"));
        assert_eq!(dec(&[0x12, 0x34, 0x5F], 5, 2), Err(CdrError::InvalidFixed));
        assert_eq!(dec(&[0x12, 0x34, 0x5D], 5, 2).unwrap(), f("-123.45"));
        assert_eq!(dec(&[0x12, 0x34, 0x5A], 5, 2), Err(CdrError::InvalidFixed));
        assert_eq!(dec(&[0x1A, 0x34, 0x5C], 5, 2), Err(CdrError::InvalidFixed));
        assert_eq!(dec(&[0x12, 0x34, 0xAC], 5, 2), Err(CdrError::InvalidFixed));
        // Even digit count: the padding half-octet must be zero.
        assert_eq!(dec(&[0x11, 0x23, 0x4C], 4, 2), Err(CdrError::InvalidFixed));
        assert!(matches!(
            dec(&[0x12, 0x34], 5, 2),
            Err(CdrError::Truncated { .. })
        ));
        assert_eq!(
            dec(&[0; 20], 32, 0),
            Err(CdrError::FixedOutOfRange {
                digits: 32,
                scale: 0
            })
        );
        // Negative zero is zero.
        let z = dec(&[0x00, 0x0D], 3, 1).unwrap();
        assert!(!z.is_negative());
        assert_eq!(z.to_bcd(3, 1).unwrap(), [0x00, 0x0C]);
    }

    #[test]
    fn encode_errors() {
        let mut w = Writer::new(ByteOrder::Little);
        assert_eq!(
            f("123.456").encode_as(5, 2, &mut w),
            Err(CdrError::FixedOutOfRange {
                digits: 5,
                scale: 2
            })
        );
        assert_eq!(
            f("1234.5").encode_as(5, 2, &mut w),
            Err(CdrError::FixedOutOfRange {
                digits: 5,
                scale: 2
            })
        );
        assert!(w.into_vec().is_empty());
    }

    #[test]
    fn fixed_point_type() {
        type Money = FixedPoint<9, 2>;
        const PRICE: Money = Money::constant(-1999);
        assert_eq!(PRICE.to_string(), "-19.99");
        const RATE: Fixed = Fixed::constant(125, 3, 3);
        assert_eq!(RATE.to_string(), "0.125");
        let m: Money = "12.5".parse().unwrap();
        assert_eq!(m.to_string(), "12.50");
        assert_eq!(m.unscaled(), 1250);
        assert_eq!(Money::default().to_string(), "0.00");
        assert!("1.234".parse::<Money>().is_err());
        assert!(Money::from_unscaled(1_000_000_000).is_err());
        let mut w = Writer::new(ByteOrder::Little);
        m.encode(&mut w).unwrap();
        let bytes = w.into_vec();
        assert_eq!(bytes, [0x00, 0x00, 0x01, 0x25, 0x0C]);
        let back = Money::decode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap();
        assert_eq!(back, m);
    }
}
