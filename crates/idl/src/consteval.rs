//! Constant expression evaluation with per-type range checks.

use crate::ast::{BinOp, Expr, ScopedName, UnOp};
use crate::model::{ConstValue, DefId, FixedValue};
use crate::source::Span;

/// Integer constant types.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntKind {
    /// `short`
    Short,
    /// `unsigned short`
    UShort,
    /// `long`
    Long,
    /// `unsigned long`
    ULong,
    /// `long long`
    LongLong,
    /// `unsigned long long`
    ULongLong,
    /// `octet`
    Octet,
}

impl IntKind {
    /// Inclusive value range.
    pub fn range(self) -> (i128, i128) {
        match self {
            IntKind::Short => (i16::MIN as i128, i16::MAX as i128),
            IntKind::UShort => (0, u16::MAX as i128),
            IntKind::Long => (i32::MIN as i128, i32::MAX as i128),
            IntKind::ULong => (0, u32::MAX as i128),
            IntKind::LongLong => (i64::MIN as i128, i64::MAX as i128),
            IntKind::ULongLong => (0, u64::MAX as i128),
            IntKind::Octet => (0, 255),
        }
    }

    /// IDL spelling.
    pub fn name(self) -> &'static str {
        match self {
            IntKind::Short => "short",
            IntKind::UShort => "unsigned short",
            IntKind::Long => "long",
            IntKind::ULong => "unsigned long",
            IntKind::LongLong => "long long",
            IntKind::ULongLong => "unsigned long long",
            IntKind::Octet => "octet",
        }
    }
}

/// The type a constant expression is evaluated for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConstType {
    /// An integer type.
    Int(IntKind),
    /// `float`
    Float,
    /// `double`
    Double,
    /// `long double`
    LongDouble,
    /// `fixed` (optionally with digits/scale limits).
    Fixed(Option<(u16, u16)>),
    /// `char`
    Char,
    /// `wchar`
    WChar,
    /// `boolean`
    Boolean,
    /// `string` with optional bound.
    Str(Option<u32>),
    /// `wstring` with optional bound.
    WStr(Option<u32>),
    /// An enum type (the enum's id).
    Enum(DefId),
}

/// Why a constant expression is invalid.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstErrorKind {
    /// Value does not fit in the target type.
    Overflow {
        /// IDL name of the target type.
        target: String,
    },
    /// Division or modulo by zero.
    DivideByZero,
    /// Shift count outside 0..64.
    BadShift,
    /// Operand of the wrong kind for this type or operator.
    TypeMismatch {
        /// What was expected.
        expected: String,
    },
    /// A name that is not a constant or enumerator of the right type.
    NotConstant,
    /// The name could not be resolved (already reported).
    Unresolved,
    /// String longer than its bound.
    StringTooLong,
    /// Fixed-point value has too many digits.
    FixedTooLarge,
}

/// A constant evaluation error.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstError {
    /// What is wrong.
    pub kind: ConstErrorKind,
    /// Where.
    pub span: Span,
}

impl ConstError {
    /// Human-readable message.
    pub fn message(&self) -> String {
        match &self.kind {
            ConstErrorKind::Overflow { target } => {
                format!("constant value out of range for type `{target}`")
            }
            ConstErrorKind::DivideByZero => "division by zero in constant expression".into(),
            ConstErrorKind::BadShift => "shift count must be between 0 and 63".into(),
            ConstErrorKind::TypeMismatch { expected } => {
                format!("type mismatch in constant expression: expected {expected}")
            }
            ConstErrorKind::NotConstant => "name does not denote a suitable constant".into(),
            ConstErrorKind::Unresolved => "unresolved name in constant expression".into(),
            ConstErrorKind::StringTooLong => "string constant exceeds the bound of its type".into(),
            ConstErrorKind::FixedTooLarge => "fixed-point constant has more than 31 digits".into(),
        }
    }
}

type R<T> = Result<T, ConstError>;

fn err<T>(kind: ConstErrorKind, span: Span) -> R<T> {
    Err(ConstError { kind, span })
}

/// Evaluates `e` for type `ty`; `lookup` resolves names to the values of
/// previously defined constants or enumerators.
pub fn eval(
    e: &Expr,
    ty: &ConstType,
    lookup: &mut dyn FnMut(&ScopedName) -> R<ConstValue>,
) -> R<ConstValue> {
    let v = Eval { lookup }.expr(e, ty)?;
    check_fits(v, ty, e.span())
}

fn mismatch<T>(ty: &ConstType, span: Span) -> R<T> {
    err(
        ConstErrorKind::TypeMismatch {
            expected: describe(ty),
        },
        span,
    )
}

fn describe(ty: &ConstType) -> String {
    match ty {
        ConstType::Int(k) => format!("`{}` value", k.name()),
        ConstType::Float => "`float` value".into(),
        ConstType::Double => "`double` value".into(),
        ConstType::LongDouble => "`long double` value".into(),
        ConstType::Fixed(_) => "`fixed` value".into(),
        ConstType::Char => "`char` value".into(),
        ConstType::WChar => "`wchar` value".into(),
        ConstType::Boolean => "`boolean` value".into(),
        ConstType::Str(_) => "`string` value".into(),
        ConstType::WStr(_) => "`wstring` value".into(),
        ConstType::Enum(_) => "enumerator".into(),
    }
}

fn check_fits(v: ConstValue, ty: &ConstType, span: Span) -> R<ConstValue> {
    match (ty, &v) {
        (ConstType::Int(k), ConstValue::Int(i)) => {
            let (lo, hi) = k.range();
            if *i < lo || *i > hi {
                return err(
                    ConstErrorKind::Overflow {
                        target: k.name().into(),
                    },
                    span,
                );
            }
        }
        (ConstType::Float, ConstValue::Float(f)) if !f.is_finite() || f.abs() > f32::MAX as f64 => {
            return err(
                ConstErrorKind::Overflow {
                    target: "float".into(),
                },
                span,
            );
        }
        (ConstType::Double | ConstType::LongDouble, ConstValue::Float(f)) if !f.is_finite() => {
            return err(
                ConstErrorKind::Overflow {
                    target: "double".into(),
                },
                span,
            );
        }
        (ConstType::Str(Some(b)), ConstValue::Str(s)) if s.len() > *b as usize => {
            return err(ConstErrorKind::StringTooLong, span)
        }
        (ConstType::WStr(Some(b)), ConstValue::WStr(s)) if s.chars().count() > *b as usize => {
            return err(ConstErrorKind::StringTooLong, span)
        }
        (ConstType::Fixed(Some((d, s))), ConstValue::Fixed(f)) => {
            let f = f.rescale(*s);
            if f.digit_count() > *d as u32 {
                return err(
                    ConstErrorKind::Overflow {
                        target: format!("fixed<{d},{s}>"),
                    },
                    span,
                );
            }
            return Ok(ConstValue::Fixed(f));
        }
        _ => {}
    }
    Ok(v)
}

struct Eval<'a> {
    lookup: &'a mut dyn FnMut(&ScopedName) -> R<ConstValue>,
}

const INTERMEDIATE: (i128, i128) = (i64::MIN as i128, u64::MAX as i128);

impl Eval<'_> {
    fn expr(&mut self, e: &Expr, ty: &ConstType) -> R<ConstValue> {
        let span = e.span();
        match e {
            Expr::Name(n) => {
                let v = (self.lookup)(n)?;
                let ok = matches!(
                    (ty, &v),
                    (ConstType::Int(_), ConstValue::Int(_))
                        | (
                            ConstType::Float | ConstType::Double | ConstType::LongDouble,
                            ConstValue::Float(_)
                        )
                        | (ConstType::Fixed(_), ConstValue::Fixed(_))
                        | (ConstType::Char, ConstValue::Char(_))
                        | (ConstType::WChar, ConstValue::WChar(_))
                        | (ConstType::Boolean, ConstValue::Bool(_))
                        | (ConstType::Str(_), ConstValue::Str(_))
                        | (ConstType::WStr(_), ConstValue::WStr(_))
                );
                if let (ConstType::Enum(en), ConstValue::Enum { enum_def, .. }) = (ty, &v) {
                    if en == enum_def {
                        return Ok(v);
                    }
                }
                if ok {
                    Ok(v)
                } else {
                    mismatch(ty, span)
                }
            }
            Expr::Int(i, _) => match ty {
                ConstType::Int(_) => Ok(ConstValue::Int(*i as i128)),
                ConstType::Float | ConstType::Double | ConstType::LongDouble => {
                    Ok(ConstValue::Float(*i as f64))
                }
                ConstType::Fixed(_) => Ok(ConstValue::Fixed(FixedValue {
                    value: *i as i128,
                    scale: 0,
                })),
                _ => mismatch(ty, span),
            },
            Expr::Float(f, _) => match ty {
                ConstType::Float | ConstType::Double | ConstType::LongDouble => {
                    Ok(ConstValue::Float(*f))
                }
                _ => mismatch(ty, span),
            },
            Expr::Fixed(s, _) => match ty {
                ConstType::Fixed(_) => match FixedValue::parse(s) {
                    Some(f) => Ok(ConstValue::Fixed(f)),
                    None => err(ConstErrorKind::FixedTooLarge, span),
                },
                _ => mismatch(ty, span),
            },
            Expr::Char(c, _) => match ty {
                ConstType::Char => Ok(ConstValue::Char(*c as u8)),
                _ => mismatch(ty, span),
            },
            Expr::WChar(c, _) => match ty {
                ConstType::WChar => Ok(ConstValue::WChar(*c)),
                _ => mismatch(ty, span),
            },
            Expr::Str(s, _) => match ty {
                ConstType::Str(_) => Ok(ConstValue::Str(s.clone())),
                _ => mismatch(ty, span),
            },
            Expr::WStr(s, _) => match ty {
                ConstType::WStr(_) => Ok(ConstValue::WStr(s.clone())),
                _ => mismatch(ty, span),
            },
            Expr::Bool(b, _) => match ty {
                ConstType::Boolean => Ok(ConstValue::Bool(*b)),
                _ => mismatch(ty, span),
            },
            Expr::Unary(op, inner, _) => {
                let v = self.expr(inner, ty)?;
                match (op, v) {
                    (
                        UnOp::Plus,
                        v @ (ConstValue::Int(_) | ConstValue::Float(_) | ConstValue::Fixed(_)),
                    ) => Ok(v),
                    (UnOp::Neg, ConstValue::Int(i)) => self.int(-i, span),
                    (UnOp::Neg, ConstValue::Float(f)) => Ok(ConstValue::Float(-f)),
                    (UnOp::Neg, ConstValue::Fixed(f)) => Ok(ConstValue::Fixed(FixedValue {
                        value: -f.value,
                        scale: f.scale,
                    })),
                    (UnOp::Not, ConstValue::Int(i)) => {
                        let unsigned = matches!(
                            ty,
                            ConstType::Int(
                                IntKind::UShort
                                    | IntKind::ULong
                                    | IntKind::ULongLong
                                    | IntKind::Octet
                            )
                        );
                        if unsigned {
                            let (_, hi) = match ty {
                                ConstType::Int(k) => k.range(),
                                _ => INTERMEDIATE,
                            };
                            self.int(hi - i, span)
                        } else {
                            self.int(!i, span)
                        }
                    }
                    _ => mismatch(ty, span),
                }
            }
            Expr::Binary(op, l, r, _) => {
                let a = self.expr(l, ty)?;
                let b = self.expr(r, ty)?;
                match (a, b) {
                    (ConstValue::Int(a), ConstValue::Int(b)) => {
                        let v = match op {
                            BinOp::Or => Some(a | b),
                            BinOp::Xor => Some(a ^ b),
                            BinOp::And => Some(a & b),
                            BinOp::Shl | BinOp::Shr => {
                                if !(0..64).contains(&b) {
                                    return err(ConstErrorKind::BadShift, r.span());
                                }
                                if *op == BinOp::Shl {
                                    a.checked_shl(b as u32)
                                } else {
                                    Some(a >> b)
                                }
                            }
                            BinOp::Add => a.checked_add(b),
                            BinOp::Sub => a.checked_sub(b),
                            BinOp::Mul => a.checked_mul(b),
                            BinOp::Div | BinOp::Mod => {
                                if b == 0 {
                                    return err(ConstErrorKind::DivideByZero, span);
                                }
                                if *op == BinOp::Div {
                                    a.checked_div(b)
                                } else {
                                    a.checked_rem(b)
                                }
                            }
                        };
                        match v {
                            Some(v) => self.int(v, span),
                            None => self.overflow(ty, span),
                        }
                    }
                    (ConstValue::Float(a), ConstValue::Float(b)) => {
                        let v = match op {
                            BinOp::Add => a + b,
                            BinOp::Sub => a - b,
                            BinOp::Mul => a * b,
                            BinOp::Div => {
                                if b == 0.0 {
                                    return err(ConstErrorKind::DivideByZero, span);
                                }
                                a / b
                            }
                            _ => return mismatch(&ConstType::Int(IntKind::Long), span),
                        };
                        if !v.is_finite() {
                            return self.overflow(ty, span);
                        }
                        Ok(ConstValue::Float(v))
                    }
                    (ConstValue::Fixed(a), ConstValue::Fixed(b)) => {
                        let v = match op {
                            BinOp::Add => a.add(b),
                            BinOp::Sub => a.add(FixedValue {
                                value: -b.value,
                                scale: b.scale,
                            }),
                            BinOp::Mul => a.mul(b),
                            BinOp::Div => {
                                if b.value == 0 {
                                    return err(ConstErrorKind::DivideByZero, span);
                                }
                                a.div(b)
                            }
                            _ => return mismatch(&ConstType::Int(IntKind::Long), span),
                        };
                        match v {
                            Some(v) => Ok(ConstValue::Fixed(v)),
                            None => err(ConstErrorKind::FixedTooLarge, span),
                        }
                    }
                    _ => mismatch(ty, span),
                }
            }
        }
    }

    fn int(&self, v: i128, span: Span) -> R<ConstValue> {
        if v < INTERMEDIATE.0 || v > INTERMEDIATE.1 {
            return err(
                ConstErrorKind::Overflow {
                    target: "unsigned long long".into(),
                },
                span,
            );
        }
        Ok(ConstValue::Int(v))
    }

    fn overflow(&self, ty: &ConstType, span: Span) -> R<ConstValue> {
        let target = match ty {
            ConstType::Int(k) => k.name().to_string(),
            _ => "double".into(),
        };
        err(ConstErrorKind::Overflow { target }, span)
    }
}

const MAX_FIXED: i128 = 10i128.pow(31) - 1;

impl FixedValue {
    /// Parses `123.45` style text.
    pub fn parse(s: &str) -> Option<FixedValue> {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let frac = frac.trim_end_matches('0');
        let digits = format!("{int}{frac}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 31 {
            return None;
        }
        let value = if digits.is_empty() {
            0
        } else {
            digits.parse::<i128>().ok()?
        };
        Some(FixedValue {
            value,
            scale: frac.len() as u16,
        })
    }

    /// Number of significant digits (at least 1).
    pub fn digit_count(&self) -> u32 {
        let mut n = self.value.unsigned_abs();
        let mut c = 0;
        while n > 0 {
            n /= 10;
            c += 1;
        }
        c.max(self.scale as u32).max(1)
    }

    /// Changes the scale (truncating extra fraction digits).
    pub fn rescale(self, scale: u16) -> FixedValue {
        let mut v = self;
        while v.scale < scale {
            match v.value.checked_mul(10) {
                Some(x) if x.abs() <= MAX_FIXED * 10 => {
                    v.value = x;
                    v.scale += 1;
                }
                _ => break,
            }
        }
        while v.scale > scale {
            v.value /= 10;
            v.scale -= 1;
        }
        v
    }

    fn norm(mut self) -> Option<FixedValue> {
        while self.value.abs() > MAX_FIXED && self.scale > 0 {
            self.value /= 10;
            self.scale -= 1;
        }
        while self.scale > 0 && self.value % 10 == 0 {
            self.value /= 10;
            self.scale -= 1;
        }
        if self.value.abs() > MAX_FIXED {
            None
        } else {
            Some(self)
        }
    }

    fn align(a: FixedValue, b: FixedValue) -> Option<(i128, i128, u16)> {
        let s = a.scale.max(b.scale);
        let av = a
            .value
            .checked_mul(10i128.checked_pow((s - a.scale) as u32)?)?;
        let bv = b
            .value
            .checked_mul(10i128.checked_pow((s - b.scale) as u32)?)?;
        Some((av, bv, s))
    }

    fn add(self, b: FixedValue) -> Option<FixedValue> {
        let (x, y, s) = Self::align(self, b)?;
        FixedValue {
            value: x.checked_add(y)?,
            scale: s,
        }
        .norm()
    }

    fn mul(self, b: FixedValue) -> Option<FixedValue> {
        FixedValue {
            value: self.value.checked_mul(b.value)?,
            scale: self.scale + b.scale,
        }
        .norm()
    }

    fn div(self, b: FixedValue) -> Option<FixedValue> {
        // scale the dividend up as far as possible for precision
        let mut a = self;
        while a.value.abs() < MAX_FIXED * 1000 && a.scale < 62 && a.value != 0 {
            a.value *= 10;
            a.scale += 1;
        }
        let scale = a.scale as i32 - b.scale as i32;
        let mut value = a.value.checked_div(b.value)?;
        let mut scale = scale;
        while scale < 0 {
            value = value.checked_mul(10)?;
            scale += 1;
        }
        FixedValue {
            value,
            scale: scale as u16,
        }
        .norm()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn sp() -> Span {
        Span::new(FileId(0), 0, 0)
    }
    fn int(v: u128) -> Expr {
        Expr::Int(v, sp())
    }
    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b), sp())
    }
    fn ev(e: &Expr, ty: ConstType) -> R<ConstValue> {
        eval(e, &ty, &mut |_| err(ConstErrorKind::Unresolved, sp()))
    }

    #[test]
    fn integer_ops_and_ranges() {
        let e = bin(BinOp::Shl, int(1), int(15));
        assert_eq!(
            ev(&e, ConstType::Int(IntKind::UShort)),
            Ok(ConstValue::Int(32768))
        );
        assert!(matches!(
            ev(&e, ConstType::Int(IntKind::Short)).unwrap_err().kind,
            ConstErrorKind::Overflow { .. }
        ));
        let e = bin(BinOp::Div, int(1), int(0));
        assert_eq!(
            ev(&e, ConstType::Int(IntKind::Long)).unwrap_err().kind,
            ConstErrorKind::DivideByZero
        );
        let e = Expr::Unary(UnOp::Not, Box::new(int(0)), sp());
        assert_eq!(
            ev(&e, ConstType::Int(IntKind::ULong)),
            Ok(ConstValue::Int(u32::MAX as i128))
        );
        assert_eq!(
            ev(&e, ConstType::Int(IntKind::Long)),
            Ok(ConstValue::Int(-1))
        );
        let e = Expr::Unary(UnOp::Neg, Box::new(int(1)), sp());
        assert!(ev(&e, ConstType::Int(IntKind::ULong)).is_err());
    }

    #[test]
    fn fixed_ops() {
        let a = FixedValue::parse("1.50").unwrap();
        assert_eq!(
            a,
            FixedValue {
                value: 15,
                scale: 1
            }
        );
        let e = bin(
            BinOp::Mul,
            Expr::Fixed("1.5".into(), sp()),
            Expr::Fixed("2".into(), sp()),
        );
        assert_eq!(
            ev(&e, ConstType::Fixed(None)),
            Ok(ConstValue::Fixed(FixedValue { value: 3, scale: 0 }))
        );
        let e = bin(
            BinOp::Div,
            Expr::Fixed("1".into(), sp()),
            Expr::Fixed("4".into(), sp()),
        );
        assert_eq!(
            ev(&e, ConstType::Fixed(None)),
            Ok(ConstValue::Fixed(FixedValue {
                value: 25,
                scale: 2
            }))
        );
    }

    #[test]
    fn type_mismatch() {
        assert!(ev(&Expr::Str("x".into(), sp()), ConstType::Int(IntKind::Long)).is_err());
        assert!(ev(&Expr::Float(1.0, sp()), ConstType::Int(IntKind::Long)).is_err());
        assert_eq!(ev(&int(3), ConstType::Double), Ok(ConstValue::Float(3.0)));
        assert!(ev(&Expr::Float(1e300, sp()), ConstType::Float).is_err());
    }
}
