//! `GIOP::TargetAddress`: how a GIOP 1.2 Request or LocateRequest names
//! its target (GIOP 1.0/1.1 always use the object key).

use peregrine_cdr::{CdrError, Decode, Encode, Reader, Writer};

use crate::error::GiopError;
use crate::ior::{Ior, TaggedProfile};

/// `GIOP::AddressingDisposition`: which `TargetAddress` arm a server wants
/// (the body of a `NEEDS_ADDRESSING_MODE` reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum AddressingDisposition {
    /// `KeyAddr` (0): the object key.
    Key = 0,
    /// `ProfileAddr` (1): the IOP profile used.
    Profile = 1,
    /// `ReferenceAddr` (2): the whole IOR and the profile index.
    Reference = 2,
}

impl AddressingDisposition {
    /// The disposition for a wire value.
    pub fn from_i16(v: i16) -> Result<Self, GiopError> {
        match v {
            0 => Ok(Self::Key),
            1 => Ok(Self::Profile),
            2 => Ok(Self::Reference),
            _ => Err(GiopError::BadAddressingDisposition(v)),
        }
    }

    /// Reads a disposition (a `short`).
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, GiopError> {
        Self::from_i16(r.read_i16()?)
    }

    /// Writes a disposition.
    pub fn encode(self, w: &mut Writer) {
        w.write_i16(self as i16);
    }
}

/// `GIOP::IORAddressingInfo`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IorAddressingInfo {
    /// Index in `ior.profiles` of the profile the client used.
    pub selected_profile_index: u32,
    /// The full object reference.
    pub ior: Ior,
}

/// `GIOP::TargetAddress`; the object key is borrowed from the message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TargetAddress<'a> {
    /// `KeyAddr`: the object key (the only form of GIOP 1.0/1.1).
    Key(&'a [u8]),
    /// `ProfileAddr`: the profile the client used.
    Profile(TaggedProfile),
    /// `ReferenceAddr`: the IOR and the profile index.
    Reference(Box<IorAddressingInfo>),
}

impl<'a> TargetAddress<'a> {
    /// The disposition of this arm.
    pub fn disposition(&self) -> AddressingDisposition {
        match self {
            Self::Key(_) => AddressingDisposition::Key,
            Self::Profile(_) => AddressingDisposition::Profile,
            Self::Reference(_) => AddressingDisposition::Reference,
        }
    }

    /// The object key when addressed by key.
    pub fn object_key(&self) -> Option<&'a [u8]> {
        match self {
            Self::Key(k) => Some(k),
            _ => None,
        }
    }

    /// Reads a `TargetAddress` union.
    pub fn decode(r: &mut Reader<'a>) -> Result<Self, GiopError> {
        Ok(match AddressingDisposition::decode(r)? {
            AddressingDisposition::Key => Self::Key(r.read_octet_seq()?),
            AddressingDisposition::Profile => Self::Profile(TaggedProfile::decode(r)?),
            AddressingDisposition::Reference => {
                let selected_profile_index = r.read_u32()?;
                let ior = Ior::decode(r)?;
                Self::Reference(Box::new(IorAddressingInfo {
                    selected_profile_index,
                    ior,
                }))
            }
        })
    }

    /// Writes a `TargetAddress` union.
    pub fn encode(&self, w: &mut Writer) -> Result<(), CdrError> {
        self.disposition().encode(w);
        match self {
            Self::Key(k) => w.write_octet_seq(k),
            Self::Profile(p) => p.encode(w),
            Self::Reference(info) => {
                w.write_u32(info.selected_profile_index);
                info.ior.encode(w)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_cdr::ByteOrder;

    #[test]
    fn round_trip_each_arm() {
        let ior = Ior {
            type_id: "IDL:Echo:1.0".into(),
            profiles: vec![TaggedProfile::Other {
                tag: 0x4154_0001,
                data: vec![9, 8, 7],
            }],
        };
        let arms = [
            TargetAddress::Key(b"key"),
            TargetAddress::Profile(TaggedProfile::Other {
                tag: 7,
                data: vec![1, 2],
            }),
            TargetAddress::Reference(Box::new(IorAddressingInfo {
                selected_profile_index: 0,
                ior,
            })),
        ];
        for order in [ByteOrder::Big, ByteOrder::Little] {
            for t in &arms {
                let mut w = Writer::new(order);
                w.write_u8(1); // misalign on purpose
                t.encode(&mut w).unwrap();
                let bytes = w.into_vec();
                let mut r = Reader::new(&bytes, order);
                r.read_u8().unwrap();
                assert_eq!(&TargetAddress::decode(&mut r).unwrap(), t);
                assert!(r.is_empty());
                for n in 1..bytes.len() {
                    let mut r = Reader::new(&bytes[..n], order);
                    r.read_u8().unwrap();
                    assert!(TargetAddress::decode(&mut r).is_err());
                }
            }
        }
    }

    #[test]
    fn bad_disposition() {
        let bytes = [0, 3, 0, 0];
        assert_eq!(
            TargetAddress::decode(&mut Reader::new(&bytes, ByteOrder::Big)),
            Err(GiopError::BadAddressingDisposition(3))
        );
    }
}
