//! The 12-byte GIOP message header (CORBA 3.x Part 2, 9.4.1 / formerly 15.4.1).

use peregrine_cdr::{ByteOrder, GiopVersion};

use crate::error::GiopError;
use crate::limits::Limits;

/// Length of the GIOP message header.
pub const HEADER_LEN: usize = 12;

/// The four octets every GIOP message starts with.
pub const MAGIC: [u8; 4] = *b"GIOP";

/// Flags bit 0: little-endian.
const FLAG_LITTLE: u8 = 0x01;
/// Flags bit 1 (GIOP 1.1+): more fragments follow.
const FLAG_MORE_FRAGMENTS: u8 = 0x02;

/// Index of the flags octet in the header.
pub(crate) const FLAGS_AT: usize = 6;
/// Index of the `message_size` field in the header.
pub(crate) const SIZE_AT: usize = 8;

/// GIOP `MsgType_1_1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MsgType {
    /// Request (0).
    Request = 0,
    /// Reply (1).
    Reply = 1,
    /// CancelRequest (2).
    CancelRequest = 2,
    /// LocateRequest (3).
    LocateRequest = 3,
    /// LocateReply (4).
    LocateReply = 4,
    /// CloseConnection (5).
    CloseConnection = 5,
    /// MessageError (6).
    MessageError = 6,
    /// Fragment (7, GIOP 1.1 and later).
    Fragment = 7,
}

impl MsgType {
    /// The type for a wire octet.
    pub fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => Self::Request,
            1 => Self::Reply,
            2 => Self::CancelRequest,
            3 => Self::LocateRequest,
            4 => Self::LocateReply,
            5 => Self::CloseConnection,
            6 => Self::MessageError,
            7 => Self::Fragment,
            _ => return None,
        })
    }

    /// True when a message of this type may carry the more-fragments bit
    /// in `version`: Request and Reply in 1.1; those plus LocateRequest and
    /// LocateReply in 1.2; Fragment itself whenever fragments exist.
    pub fn may_fragment(self, version: GiopVersion) -> bool {
        match version {
            GiopVersion::V1_0 => false,
            GiopVersion::V1_1 => matches!(self, Self::Request | Self::Reply | Self::Fragment),
            GiopVersion::V1_2 => matches!(
                self,
                Self::Request
                    | Self::Reply
                    | Self::LocateRequest
                    | Self::LocateReply
                    | Self::Fragment
            ),
        }
    }
}

/// A decoded GIOP message header.
///
/// GIOP 1.3 decodes as [`GiopVersion::V1_2`]: it has the same message
/// formats, and a 1.2 ORB answers a 1.3 peer in 1.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MessageHeader {
    /// GIOP version.
    pub version: GiopVersion,
    /// Byte order of the size field and the body.
    pub order: ByteOrder,
    /// More fragments follow (GIOP 1.1+).
    pub more_fragments: bool,
    /// Message type.
    pub msg_type: MsgType,
    /// Bytes after the header.
    pub size: u32,
}

impl MessageHeader {
    /// A header for an unfragmented message whose size is patched later.
    pub fn new(version: GiopVersion, order: ByteOrder, msg_type: MsgType) -> Self {
        Self {
            version,
            order,
            more_fragments: false,
            msg_type,
            size: 0,
        }
    }

    /// Decodes the header at the start of `bytes` (which may hold more),
    /// checking the magic, version, flags, type and size limit.
    pub fn decode(bytes: &[u8], limits: &Limits) -> Result<Self, GiopError> {
        let h: &[u8; HEADER_LEN] = bytes
            .get(..HEADER_LEN)
            .and_then(|s| s.try_into().ok())
            .ok_or(GiopError::ShortHeader { len: bytes.len() })?;
        let [m0, m1, m2, m3, major, minor, flags, ty, s0, s1, s2, s3] = *h;
        if [m0, m1, m2, m3] != MAGIC {
            return Err(GiopError::BadMagic([m0, m1, m2, m3]));
        }
        if major != 1 || minor > 3 {
            return Err(GiopError::UnsupportedVersion { major, minor });
        }
        let version = GiopVersion::from_minor(minor);
        let (order, more_fragments) = if version == GiopVersion::V1_0 {
            // In 1.0 the octet is a boolean, so anything but 0/1 is malformed.
            match flags {
                0 | 1 => (ByteOrder::from_flag(flags == 1), false),
                2 | 3 => return Err(GiopError::FragmentBitInGiop10),
                b => return Err(GiopError::BadByteOrder(b)),
            }
        } else {
            // The 6 reserved bits "must be 0"; peers that set them are
            // tolerated, as omniORB and TAO do.
            (
                ByteOrder::from_flag(flags & FLAG_LITTLE != 0),
                flags & FLAG_MORE_FRAGMENTS != 0,
            )
        };
        let msg_type = MsgType::from_u8(ty).ok_or(GiopError::UnknownMessageType(ty))?;
        if msg_type == MsgType::Fragment && version == GiopVersion::V1_0 {
            return Err(GiopError::MessageTypeNotInVersion { msg_type, version });
        }
        if more_fragments && !msg_type.may_fragment(version) {
            return Err(GiopError::NotFragmentable { msg_type, version });
        }
        let raw = [s0, s1, s2, s3];
        let size = match order {
            ByteOrder::Big => u32::from_be_bytes(raw),
            ByteOrder::Little => u32::from_le_bytes(raw),
        };
        if size > limits.max_message_size {
            return Err(GiopError::MessageTooLarge {
                size: u64::from(size),
                limit: limits.max_message_size,
            });
        }
        Ok(Self {
            version,
            order,
            more_fragments,
            msg_type,
            size,
        })
    }

    /// The 12 header bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let flags = if self.version == GiopVersion::V1_0 {
            u8::from(self.order.is_little())
        } else {
            u8::from(self.order.is_little())
                | if self.more_fragments {
                    FLAG_MORE_FRAGMENTS
                } else {
                    0
                }
        };
        let size = match self.order {
            ByteOrder::Big => self.size.to_be_bytes(),
            ByteOrder::Little => self.size.to_le_bytes(),
        };
        let [m0, m1, m2, m3] = MAGIC;
        let [s0, s1, s2, s3] = size;
        [
            m0,
            m1,
            m2,
            m3,
            1,
            self.version.minor(),
            flags,
            self.msg_type as u8,
            s0,
            s1,
            s2,
            s3,
        ]
    }

    /// Total length of the message: header plus `size`.
    pub fn message_len(&self) -> usize {
        HEADER_LEN + self.size as usize
    }
}

/// Sets or clears the more-fragments bit of an encoded header in place.
pub(crate) fn set_more_fragments(header: &mut [u8; HEADER_LEN], more: bool) {
    if more {
        header[FLAGS_AT] |= FLAG_MORE_FRAGMENTS;
    } else {
        header[FLAGS_AT] &= !FLAG_MORE_FRAGMENTS;
    }
}

/// Overwrites the size of an encoded header in place, in its byte order.
pub(crate) fn set_size(header: &mut [u8; HEADER_LEN], size: u32) {
    let bytes = if header[FLAGS_AT] & FLAG_LITTLE != 0 {
        size.to_le_bytes()
    } else {
        size.to_be_bytes()
    };
    header[SIZE_AT..].copy_from_slice(&bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(bytes: &[u8]) -> Result<MessageHeader, GiopError> {
        MessageHeader::decode(bytes, &Limits::default())
    }

    #[test]
    fn round_trip_all_types_versions_orders() {
        for version in [GiopVersion::V1_0, GiopVersion::V1_1, GiopVersion::V1_2] {
            for order in [ByteOrder::Big, ByteOrder::Little] {
                for t in 0..8 {
                    let msg_type = MsgType::from_u8(t).unwrap();
                    if msg_type == MsgType::Fragment && version == GiopVersion::V1_0 {
                        continue;
                    }
                    let more = msg_type.may_fragment(version);
                    let h = MessageHeader {
                        version,
                        order,
                        more_fragments: more,
                        msg_type,
                        size: 0x0102_0304,
                    };
                    assert_eq!(hdr(&h.encode()), Ok(h));
                }
            }
        }
    }

    #[test]
    fn exact_bytes() {
        let h = MessageHeader {
            version: GiopVersion::V1_2,
            order: ByteOrder::Little,
            more_fragments: true,
            msg_type: MsgType::Reply,
            size: 0x10,
        };
        assert_eq!(h.encode(), *b"GIOP\x01\x02\x03\x01\x10\x00\x00\x00");
        let h10 = MessageHeader::new(GiopVersion::V1_0, ByteOrder::Big, MsgType::Request);
        assert_eq!(h10.encode(), *b"GIOP\x01\x00\x00\x00\x00\x00\x00\x00");
    }

    #[test]
    fn giop_1_3_reads_as_1_2() {
        let h = hdr(b"GIOP\x01\x03\x00\x05\x00\x00\x00\x00").unwrap();
        assert_eq!(h.version, GiopVersion::V1_2);
        assert_eq!(h.msg_type, MsgType::CloseConnection);
    }

    #[test]
    fn errors() {
        assert_eq!(hdr(b"GIOP\x01\x00"), Err(GiopError::ShortHeader { len: 6 }));
        assert_eq!(
            hdr(b"GIOX\x01\x00\x00\x00\x00\x00\x00\x00"),
            Err(GiopError::BadMagic(*b"GIOX"))
        );
        assert_eq!(
            hdr(b"GIOP\x02\x00\x00\x00\x00\x00\x00\x00"),
            Err(GiopError::UnsupportedVersion { major: 2, minor: 0 })
        );
        assert_eq!(
            hdr(b"GIOP\x01\x04\x00\x00\x00\x00\x00\x00"),
            Err(GiopError::UnsupportedVersion { major: 1, minor: 4 })
        );
        assert_eq!(
            hdr(b"GIOP\x01\x00\x02\x00\x00\x00\x00\x00"),
            Err(GiopError::FragmentBitInGiop10)
        );
        assert_eq!(
            hdr(b"GIOP\x01\x00\x09\x00\x00\x00\x00\x00"),
            Err(GiopError::BadByteOrder(9))
        );
        assert_eq!(
            hdr(b"GIOP\x01\x00\x00\x07\x00\x00\x00\x00"),
            Err(GiopError::MessageTypeNotInVersion {
                msg_type: MsgType::Fragment,
                version: GiopVersion::V1_0
            })
        );
        assert_eq!(
            hdr(b"GIOP\x01\x02\x00\x08\x00\x00\x00\x00"),
            Err(GiopError::UnknownMessageType(8))
        );
        assert_eq!(
            hdr(b"GIOP\x01\x01\x02\x03\x00\x00\x00\x00"),
            Err(GiopError::NotFragmentable {
                msg_type: MsgType::LocateRequest,
                version: GiopVersion::V1_1
            })
        );
        assert_eq!(
            hdr(b"GIOP\x01\x02\x02\x02\x00\x00\x00\x00"),
            Err(GiopError::NotFragmentable {
                msg_type: MsgType::CancelRequest,
                version: GiopVersion::V1_2
            })
        );
        let limits = Limits::default().with_max_message_size(100);
        assert_eq!(
            MessageHeader::decode(b"GIOP\x01\x02\x00\x00\x00\x00\x00\x65", &limits),
            Err(GiopError::MessageTooLarge {
                size: 101,
                limit: 100
            })
        );
        assert!(MessageHeader::decode(b"GIOP\x01\x02\x00\x00\x00\x00\x00\x64", &limits).is_ok());
    }
}
