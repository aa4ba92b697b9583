//! Decoding and encoding errors.

use core::fmt;

/// Result type of this crate.
pub type Result<T> = core::result::Result<T, CdrError>;

/// Everything that can go wrong while encoding or decoding CDR.
///
/// Each error maps to the CORBA system exception an ORB raises for it
/// (see `SystemException::from_cdr` in peregrine-giop): malformed input is `MARSHAL`,
/// text that the negotiated code set cannot carry is `DATA_CONVERSION`,
/// values that break an IDL bound (or do not fit their `fixed` type) on
/// encode are `BAD_PARAM`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CdrError {
    /// The input ended before the value did.
    Truncated {
        /// Bytes the value needed.
        needed: usize,
        /// Bytes that remained.
        remaining: usize,
    },
    /// A length or count announces more data than the input holds
    /// (checked before allocating anything).
    LengthExceedsInput {
        /// The length read from the wire, in elements.
        len: u64,
        /// Bytes that remained.
        remaining: usize,
    },
    /// A boolean octet other than 0 or 1.
    InvalidBoolean(u8),
    /// An enum value outside its declared range.
    InvalidEnum(u32),
    /// A union discriminator that selects no branch and there is no
    /// default; on encode (and in generated `<branch>_with` constructors),
    /// a discriminator that would select another branch than the value's.
    InvalidDiscriminator,
    /// A string without its terminating NUL, or with a NUL inside.
    BadStringTerminator,
    /// A string length of 0 (a CDR string always counts its NUL).
    ZeroStringLength,
    /// Bytes that are not valid in the transmission code set.
    InvalidText,
    /// A wide character that is an unpaired UTF-16 surrogate.
    UnpairedSurrogate,
    /// A wide string length that is not a whole number of code units.
    OddWstringLength,
    /// `wchar`/`wstring` used in GIOP 1.0, or without a negotiated code set.
    WideCharNotAllowed,
    /// A character that the transmission code set cannot represent.
    Unrepresentable(char),
    /// A bounded sequence or string holds more than its bound.
    BoundExceeded {
        /// The IDL bound.
        bound: u32,
        /// The actual length.
        len: u64,
    },
    /// A length that does not fit the CDR `unsigned long` length field.
    TooLong(usize),
    /// An encapsulation with no byte-order octet, or a bad one.
    BadEncapsulation,
    /// A nesting deeper than the decoder allows.
    TooDeep,
    /// A code set id that this ORB does not implement.
    UnsupportedCodeSet(u32),
    /// A `fixed` value with a digit half-octet over 9, a sign half-octet
    /// other than `0xC` or `0xD`, or a non-zero padding half-octet
    /// (`MARSHAL`).
    InvalidFixed,
    /// A `fixed` value that does not fit its IDL type `fixed<digits,
    /// scale>` exactly, or a type with more than 31 digits or a scale
    /// over its digits (`BAD_PARAM`).
    FixedOutOfRange {
        /// Declared digits.
        digits: u16,
        /// Declared scale.
        scale: u16,
    },
    /// A long where a value was expected that is neither null, an
    /// indirection nor a value tag (`0x7fffff00..=0x7fffffff`); or a value
    /// tag where a chunk's data was expected.
    BadValueTag(u32),
    /// An indirection (to a value, a repository id or a codebase URL)
    /// whose offset does not lead back to one already read in this
    /// stream: forward, to itself, out of range, or into other data.
    BadIndirection(i32),
    /// A chunk that breaks the chunking rules: a length running past the
    /// input, a primitive or string crossing a chunk's end, a value nested
    /// without chunking inside a chunked one, or more data after the
    /// value's end tag.
    BadChunk,
    /// An end tag whose nesting level is not that of an open value.
    BadEndTag(i32),
    /// No factory, and no base the value may be truncated to, for any of
    /// the value's repository ids (CORBA `MARSHAL`, minor 1).
    NoValueFactory,
    /// An indirection back to a value still being read from a place
    /// that cannot be completed later (outside a value's members and
    /// its sequences of values: in a struct, an array, a parameter).
    UnsupportedCycle,
    /// A value whose state holds object references, read where no ORB
    /// was handed to the reader to bind them to (see
    /// [`Reader::set_value_context`](crate::Reader::set_value_context)).
    NoValueContext,
}

impl CdrError {
    /// True when the error is about text that the negotiated code set
    /// cannot carry (CORBA `DATA_CONVERSION`), false for malformed input
    /// (`MARSHAL`) and broken bounds (`BAD_PARAM`); the GIOP layer maps
    /// every variant to its system exception and minor code.
    pub fn is_conversion(&self) -> bool {
        matches!(
            self,
            CdrError::InvalidText | CdrError::UnpairedSurrogate | CdrError::Unrepresentable(_)
        )
    }
}

impl fmt::Display for CdrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CdrError::Truncated { needed, remaining } => {
                write!(
                    f,
                    "CDR input truncated: needed {needed} bytes, {remaining} remain"
                )
            }
            CdrError::LengthExceedsInput { len, remaining } => write!(
                f,
                "CDR length {len} exceeds the {remaining} bytes remaining in the input"
            ),
            CdrError::InvalidBoolean(b) => write!(f, "invalid CDR boolean octet {b:#04x}"),
            CdrError::InvalidEnum(v) => write!(f, "enum value {v} out of range"),
            CdrError::InvalidDiscriminator => {
                f.write_str("union discriminator selects no branch, or another branch")
            }
            CdrError::BadStringTerminator => f.write_str("CDR string not NUL-terminated"),
            CdrError::ZeroStringLength => f.write_str("CDR string length 0 (must count the NUL)"),
            CdrError::InvalidText => f.write_str("text invalid in the transmission code set"),
            CdrError::UnpairedSurrogate => f.write_str("unpaired UTF-16 surrogate"),
            CdrError::OddWstringLength => f.write_str("wstring octet length is odd"),
            CdrError::WideCharNotAllowed => {
                f.write_str("wchar/wstring not allowed (GIOP 1.0 or no negotiated code set)")
            }
            CdrError::Unrepresentable(c) => {
                write!(
                    f,
                    "character {c:?} not representable in the transmission code set"
                )
            }
            CdrError::BoundExceeded { bound, len } => {
                write!(f, "length {len} exceeds the IDL bound {bound}")
            }
            CdrError::TooLong(len) => write!(f, "length {len} does not fit a CDR unsigned long"),
            CdrError::BadEncapsulation => f.write_str("malformed CDR encapsulation"),
            CdrError::TooDeep => f.write_str("CDR value nested too deeply"),
            CdrError::UnsupportedCodeSet(id) => write!(f, "unsupported code set {id:#010x}"),
            CdrError::InvalidFixed => f.write_str("malformed CDR fixed-point value"),
            CdrError::FixedOutOfRange { digits, scale } => {
                write!(f, "value does not fit fixed<{digits},{scale}>")
            }
            CdrError::BadValueTag(t) => write!(f, "invalid value tag {t:#010x}"),
            CdrError::BadIndirection(o) => {
                write!(f, "indirection offset {o} leads to nothing read before")
            }
            CdrError::BadChunk => f.write_str("malformed chunked value encoding"),
            CdrError::BadEndTag(t) => write!(f, "end tag {t} closes no open value"),
            CdrError::UnsupportedCycle => {
                f.write_str("value cycle through a struct, array or parameter")
            }
            CdrError::NoValueFactory => {
                f.write_str("no value factory for any of the value's repository ids")
            }
            CdrError::NoValueContext => {
                f.write_str("value holding object references read without an ORB to bind them to")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for CdrError {}
