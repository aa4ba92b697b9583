//! Transmission code sets for `char`/`string` and `wchar`/`wstring`.
//!
//! CORBA negotiates one code set for narrow and one for wide characters
//! per connection (the `CODE_SETS` IOR component and the `CodeSets`
//! service context). Peregrine implements the ones real ORBs use: UTF-8
//! and ISO 8859-1 for `char`, UTF-16 and UCS-2 for `wchar`.

/// An OSF code set registry id, as carried in IORs and service contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeSetId(pub u32);

impl CodeSetId {
    /// ISO 8859-1 (Latin-1), the GIOP default for `char`.
    pub const ISO_8859_1: CodeSetId = CodeSetId(0x0001_0001);
    /// ISO 646 (ASCII).
    pub const ISO_646: CodeSetId = CodeSetId(0x0001_0020);
    /// UCS-2 level 1.
    pub const UCS_2: CodeSetId = CodeSetId(0x0001_0100);
    /// UCS-4 / UTF-32.
    pub const UCS_4: CodeSetId = CodeSetId(0x0001_0106);
    /// UTF-16.
    pub const UTF_16: CodeSetId = CodeSetId(0x0001_0109);
    /// UTF-8.
    pub const UTF_8: CodeSetId = CodeSetId(0x0501_0001);
}

/// The transmission code set of `char` and `string`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CharCodeSet {
    /// UTF-8: strings travel as Rust stores them, and decode zero-copy.
    #[default]
    Utf8,
    /// ISO 8859-1: each octet is one code point below 256.
    Latin1,
}

impl CharCodeSet {
    /// The OSF id of this code set.
    pub fn id(self) -> CodeSetId {
        match self {
            Self::Utf8 => CodeSetId::UTF_8,
            Self::Latin1 => CodeSetId::ISO_8859_1,
        }
    }

    /// The code set for an OSF id (ASCII is carried as Latin-1, its superset).
    pub fn from_id(id: CodeSetId) -> Option<Self> {
        match id {
            CodeSetId::UTF_8 => Some(Self::Utf8),
            CodeSetId::ISO_8859_1 | CodeSetId::ISO_646 => Some(Self::Latin1),
            _ => None,
        }
    }
}

/// The transmission code set of `wchar` and `wstring`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WcharCodeSet {
    /// UTF-16 (surrogate pairs allowed in strings).
    #[default]
    Utf16,
    /// UCS-2: UTF-16 without surrogates.
    Ucs2,
}

impl WcharCodeSet {
    /// The OSF id of this code set.
    pub fn id(self) -> CodeSetId {
        match self {
            Self::Utf16 => CodeSetId::UTF_16,
            Self::Ucs2 => CodeSetId::UCS_2,
        }
    }

    /// The code set for an OSF id.
    pub fn from_id(id: CodeSetId) -> Option<Self> {
        match id {
            CodeSetId::UTF_16 => Some(Self::Utf16),
            CodeSetId::UCS_2 => Some(Self::Ucs2),
            _ => None,
        }
    }
}

/// The code sets in force on a stream.
///
/// `wchar` is `None` until negotiated: CORBA says wide characters sent
/// without a negotiated code set are a `MARSHAL` error (minor 5), and
/// GIOP 1.0 has no wide characters at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CodeSets {
    /// Code set for `char` and `string`.
    pub char: CharCodeSet,
    /// Code set for `wchar` and `wstring`, if negotiated.
    pub wchar: Option<WcharCodeSet>,
}

impl Default for CodeSets {
    /// UTF-8 and UTF-16: Peregrine's native code sets.
    fn default() -> Self {
        Self {
            char: CharCodeSet::Utf8,
            wchar: Some(WcharCodeSet::Utf16),
        }
    }
}
