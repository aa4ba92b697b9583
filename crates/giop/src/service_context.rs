//! Service contexts (`IOP::ServiceContextList`): decoded lazily and
//! zero-copy from the message, with typed forms for the contexts the ORB
//! itself interprets (code sets, bidirectional IIOP).

use core::fmt;

use peregrine_cdr::{ByteOrder, CdrError, CodeSetId, Reader, Writer};

use crate::error::GiopError;

/// Well-known `IOP::ServiceId` values.
pub mod ids {
    /// `TransactionService` (OTS).
    pub const TRANSACTION_SERVICE: u32 = 0;
    /// `CodeSets`: `CONV_FRAME::CodeSetContext`.
    pub const CODE_SETS: u32 = 1;
    /// `ChainBypassCheck`.
    pub const CHAIN_BYPASS_CHECK: u32 = 2;
    /// `ChainBypassInfo`.
    pub const CHAIN_BYPASS_INFO: u32 = 3;
    /// `LogicalThreadId`.
    pub const LOGICAL_THREAD_ID: u32 = 4;
    /// `BI_DIR_IIOP`: `IIOP::BiDirIIOPServiceContext`.
    pub const BI_DIR_IIOP: u32 = 5;
    /// `SendingContextRunTime` (value type code base).
    pub const SENDING_CONTEXT_RUN_TIME: u32 = 6;
    /// `INVOCATION_POLICIES`.
    pub const INVOCATION_POLICIES: u32 = 7;
    /// `FORWARDED_IDENTITY`.
    pub const FORWARDED_IDENTITY: u32 = 8;
    /// `UnknownExceptionInfo`.
    pub const UNKNOWN_EXCEPTION_INFO: u32 = 9;
    /// `RTCorbaPriority`.
    pub const RT_CORBA_PRIORITY: u32 = 10;
    /// `RTCorbaPriorityRange`.
    pub const RT_CORBA_PRIORITY_RANGE: u32 = 11;
    /// `FT_GROUP_VERSION`.
    pub const FT_GROUP_VERSION: u32 = 12;
    /// `FT_REQUEST`.
    pub const FT_REQUEST: u32 = 13;
    /// `ExceptionDetailMessage`.
    pub const EXCEPTION_DETAIL_MESSAGE: u32 = 14;
    /// `SecurityAttributeService` (CSIv2).
    pub const SECURITY_ATTRIBUTE_SERVICE: u32 = 15;
    /// `ActivityService`.
    pub const ACTIVITY_SERVICE: u32 = 16;
}

/// One service context, borrowed: its id and its opaque data (usually an
/// encapsulation), kept byte-exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ServiceContext<'a> {
    /// `context_id`.
    pub id: u32,
    /// `context_data`.
    pub data: &'a [u8],
}

impl<'a> ServiceContext<'a> {
    /// Interprets the contexts the ORB understands; others stay opaque.
    pub fn parse(&self) -> Result<KnownContext<'a>, GiopError> {
        Ok(match self.id {
            ids::CODE_SETS => KnownContext::CodeSets(CodeSetContext::decode(self.data)?),
            ids::BI_DIR_IIOP => KnownContext::BiDirIiop(BiDirIiopContext::decode(self.data)?),
            _ => KnownContext::Other(*self),
        })
    }
}

/// A service context with owned data, as built from a typed context.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnedServiceContext {
    /// `context_id`.
    pub id: u32,
    /// `context_data`.
    pub data: Vec<u8>,
}

impl OwnedServiceContext {
    /// The borrowed form, for encoding.
    pub fn as_context(&self) -> ServiceContext<'_> {
        ServiceContext {
            id: self.id,
            data: &self.data,
        }
    }
}

/// A service context interpreted by [`ServiceContext::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KnownContext<'a> {
    /// `CodeSets`.
    CodeSets(CodeSetContext),
    /// `BI_DIR_IIOP`.
    BiDirIiop(BiDirIiopContext),
    /// Anything else, opaque.
    Other(ServiceContext<'a>),
}

/// A service context list: either a validated view of the wire bytes
/// (what decoding yields, without allocating) or a caller's slice (what
/// encoding takes). Both iterate the same way and compare by content.
#[derive(Clone, Copy)]
pub struct ServiceContexts<'a>(Repr<'a>);

#[derive(Clone, Copy)]
enum Repr<'a> {
    /// `count` entries starting at `bytes[0]`, which sits at stream
    /// position `offset`, in `order`; validated when decoded.
    Wire {
        count: u32,
        bytes: &'a [u8],
        offset: usize,
        order: ByteOrder,
    },
    Slice(&'a [ServiceContext<'a>]),
}

impl<'a> ServiceContexts<'a> {
    /// No service contexts.
    pub const EMPTY: ServiceContexts<'static> = ServiceContexts(Repr::Slice(&[]));

    /// A list to encode.
    pub fn from_slice(contexts: &'a [ServiceContext<'a>]) -> Self {
        Self(Repr::Slice(contexts))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        match self.0 {
            Repr::Wire { count, .. } => count as usize,
            Repr::Slice(s) => s.len(),
        }
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries in wire order.
    pub fn iter(&self) -> Iter<'a> {
        match self.0 {
            Repr::Wire {
                count,
                bytes,
                offset,
                order,
            } => Iter(IterRepr::Wire {
                left: count,
                r: Reader::with_offset(bytes, order, offset),
            }),
            Repr::Slice(s) => Iter(IterRepr::Slice(s.iter())),
        }
    }

    /// The data of the first context with `id`.
    pub fn get(&self, id: u32) -> Option<&'a [u8]> {
        self.iter().find(|c| c.id == id).map(|c| c.data)
    }

    /// Reads a list, checking every entry and the count limit, and keeps
    /// a view of its bytes (nothing is allocated).
    pub fn decode(r: &mut Reader<'a>, max: u32) -> Result<Self, GiopError> {
        let count = r.read_u32()?;
        if count > max {
            return Err(GiopError::TooManyServiceContexts { count, limit: max });
        }
        // Each entry holds at least an id and a length.
        r.check_len(count, 8)?;
        let start = r.clone();
        for _ in 0..count {
            r.read_u32()?;
            r.read_octet_seq()?;
        }
        let used = r.offset() - start.offset();
        let bytes = start.rest().get(..used).ok_or(CdrError::Truncated {
            needed: used,
            remaining: start.remaining(),
        })?;
        Ok(Self(Repr::Wire {
            count,
            bytes,
            offset: start.position(),
            order: r.order(),
        }))
    }

    /// Writes the list.
    pub fn encode(&self, w: &mut Writer) -> Result<(), CdrError> {
        w.write_len(self.len())?;
        for c in self.iter() {
            w.write_u32(c.id);
            w.write_octet_seq(c.data)?;
        }
        Ok(())
    }
}

impl Default for ServiceContexts<'_> {
    fn default() -> Self {
        ServiceContexts(Repr::Slice(&[]))
    }
}

impl PartialEq for ServiceContexts<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for ServiceContexts<'_> {}

impl fmt::Debug for ServiceContexts<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &ServiceContexts<'a> {
    type Item = ServiceContext<'a>;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Iterator over [`ServiceContexts`].
#[derive(Clone)]
pub struct Iter<'a>(IterRepr<'a>);

#[derive(Clone)]
enum IterRepr<'a> {
    Wire { left: u32, r: Reader<'a> },
    Slice(core::slice::Iter<'a, ServiceContext<'a>>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = ServiceContext<'a>;

    fn next(&mut self) -> Option<ServiceContext<'a>> {
        match &mut self.0 {
            IterRepr::Wire { left, r } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                // The bytes were validated by `decode`, so these succeed;
                // ending the iteration is the safe answer if they did not.
                let id = r.read_u32().ok()?;
                let data = r.read_octet_seq().ok()?;
                Some(ServiceContext { id, data })
            }
            IterRepr::Slice(it) => it.next().copied(),
        }
    }
}

/// `CONV_FRAME::CodeSetContext`: the transmission code sets the client
/// chose, sent in an encapsulation with id [`ids::CODE_SETS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CodeSetContext {
    /// Transmission code set for `char`/`string`.
    pub char_data: CodeSetId,
    /// Transmission code set for `wchar`/`wstring`.
    pub wchar_data: CodeSetId,
}

impl CodeSetContext {
    /// Decodes the context data (an encapsulation).
    pub fn decode(data: &[u8]) -> Result<Self, GiopError> {
        let mut r = Reader::from_encapsulation(data)?;
        Ok(Self {
            char_data: CodeSetId(r.read_u32()?),
            wchar_data: CodeSetId(r.read_u32()?),
        })
    }

    /// Encodes the context data as an encapsulation in `order`.
    pub fn encode_data(&self, order: ByteOrder) -> Vec<u8> {
        let mut w = Writer::new(order);
        w.write_u8(u8::from(order.is_little()));
        w.write_u32(self.char_data.0);
        w.write_u32(self.wchar_data.0);
        w.into_vec()
    }

    /// The complete service context.
    pub fn to_context(&self, order: ByteOrder) -> OwnedServiceContext {
        OwnedServiceContext {
            id: ids::CODE_SETS,
            data: self.encode_data(order),
        }
    }
}

/// `IIOP::ListenPoint`: an address the sender accepts connections on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ListenPoint {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

/// `IIOP::BiDirIIOPServiceContext`: the listen points of a client that
/// offers the connection for callbacks, id [`ids::BI_DIR_IIOP`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct BiDirIiopContext {
    /// The client's listen points.
    pub listen_points: Vec<ListenPoint>,
}

impl BiDirIiopContext {
    /// Decodes the context data (an encapsulation).
    pub fn decode(data: &[u8]) -> Result<Self, GiopError> {
        let mut r = Reader::from_encapsulation(data)?;
        // A listen point needs at least a string length, a NUL and a port.
        let n = r.read_len(7)?;
        let mut listen_points = Vec::with_capacity(n);
        for _ in 0..n {
            let host = r.read_string()?;
            let port = r.read_u16()?;
            listen_points.push(ListenPoint { host, port });
        }
        Ok(Self { listen_points })
    }

    /// Encodes the context data as an encapsulation in `order`.
    pub fn encode_data(&self, order: ByteOrder) -> Result<Vec<u8>, GiopError> {
        let mut w = Writer::new(order);
        w.write_u8(u8::from(order.is_little()));
        w.write_len(self.listen_points.len())?;
        for lp in &self.listen_points {
            w.write_string(&lp.host)?;
            w.write_u16(lp.port);
        }
        Ok(w.into_vec())
    }

    /// The complete service context.
    pub fn to_context(&self, order: ByteOrder) -> Result<OwnedServiceContext, GiopError> {
        Ok(OwnedServiceContext {
            id: ids::BI_DIR_IIOP,
            data: self.encode_data(order)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_round_trip_both_orders() {
        let cs = CodeSetContext {
            char_data: CodeSetId::UTF_8,
            wchar_data: CodeSetId::UTF_16,
        };
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let csc = cs.to_context(order);
            let bidir = BiDirIiopContext {
                listen_points: vec![ListenPoint {
                    host: "example.org".into(),
                    port: 2809,
                }],
            }
            .to_context(order)
            .unwrap();
            let list = [
                csc.as_context(),
                ServiceContext {
                    id: 0x4154_0000,
                    data: &[1, 2, 3],
                },
                bidir.as_context(),
            ];
            let sc = ServiceContexts::from_slice(&list);
            let mut w = Writer::with_offset(order, 12);
            sc.encode(&mut w).unwrap();
            let bytes = w.into_vec();
            let mut r = Reader::with_offset(&bytes, order, 12);
            let back = ServiceContexts::decode(&mut r, 64).unwrap();
            assert!(r.is_empty());
            assert_eq!(back, sc);
            assert_eq!(back.len(), 3);
            assert_eq!(back.get(0x4154_0000), Some(&[1u8, 2, 3][..]));
            let parsed: Vec<_> = back.iter().map(|c| c.parse().unwrap()).collect();
            assert_eq!(parsed[0], KnownContext::CodeSets(cs));
            match &parsed[2] {
                KnownContext::BiDirIiop(b) => assert_eq!(b.listen_points[0].port, 2809),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn codeset_context_exact_bytes() {
        let cs = CodeSetContext {
            char_data: CodeSetId::UTF_8,
            wchar_data: CodeSetId::UTF_16,
        };
        assert_eq!(
            cs.encode_data(ByteOrder::Big),
            [0, 0, 0, 0, 0x05, 0x01, 0x00, 0x01, 0x00, 0x01, 0x01, 0x09]
        );
    }

    #[test]
    fn limit_and_truncation() {
        let bytes = [0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0];
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        assert_eq!(
            ServiceContexts::decode(&mut r, 2),
            Err(GiopError::TooManyServiceContexts { count: 3, limit: 2 })
        );
        for n in 0..bytes.len() {
            let mut r = Reader::new(&bytes[..n], ByteOrder::Big);
            assert!(ServiceContexts::decode(&mut r, 64).is_err());
        }
        // Hostile count, no bytes behind it.
        let hostile = [0xFF, 0xFF, 0xFF, 0xFF];
        let mut r = Reader::new(&hostile, ByteOrder::Big);
        assert!(ServiceContexts::decode(&mut r, u32::MAX).is_err());
    }
}
