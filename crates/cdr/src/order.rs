//! Byte order of a CDR stream.

/// The byte order of a CDR stream, as the GIOP header flag or the first
/// octet of an encapsulation gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Most significant byte first (flag value 0).
    Big,
    /// Least significant byte first (flag value 1).
    Little,
}

impl ByteOrder {
    /// The byte order of the machine this code runs on.
    #[cfg(target_endian = "little")]
    pub const NATIVE: ByteOrder = ByteOrder::Little;
    /// The byte order of the machine this code runs on.
    #[cfg(target_endian = "big")]
    pub const NATIVE: ByteOrder = ByteOrder::Big;

    /// The byte order for a GIOP flags bit / encapsulation octet.
    pub fn from_flag(little: bool) -> Self {
        if little {
            Self::Little
        } else {
            Self::Big
        }
    }

    /// True for little-endian (the value of the wire flag).
    pub fn is_little(self) -> bool {
        self == Self::Little
    }

    /// True when values in this order can be copied without swapping.
    #[inline]
    pub fn is_native(self) -> bool {
        self == Self::NATIVE
    }
}
