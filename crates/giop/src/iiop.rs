//! The IIOP profile body (CORBA 3.x Part 2, 9.7.2 `IIOP::ProfileBody`),
//! carried in a `TAG_INTERNET_IOP` profile as an encapsulation.

use std::fmt;

use peregrine_cdr::{ByteOrder, Reader, Result, Writer};

use crate::component::{
    decode_components, encapsulate, CodeSetComponentInfo, TaggedComponent,
    TAG_ALTERNATE_IIOP_ADDRESS, TAG_CODE_SETS, TAG_ORB_TYPE,
};
use crate::ior::IorError;

/// The IIOP version of a profile (`IIOP::Version`, two octets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IiopVersion {
    /// Major version; only 1 exists.
    pub major: u8,
    /// Minor version: 0, 1, 2 (3 and later decode like 2).
    pub minor: u8,
}

impl IiopVersion {
    /// IIOP 1.0: no tagged components.
    pub const V1_0: IiopVersion = IiopVersion { major: 1, minor: 0 };
    /// IIOP 1.1.
    pub const V1_1: IiopVersion = IiopVersion { major: 1, minor: 1 };
    /// IIOP 1.2.
    pub const V1_2: IiopVersion = IiopVersion { major: 1, minor: 2 };

    /// A version from its octets.
    pub const fn new(major: u8, minor: u8) -> Self {
        Self { major, minor }
    }

    /// True when the profile body carries a component sequence (1.1+).
    pub fn has_components(self) -> bool {
        self.major == 1 && self.minor >= 1
    }
}

impl fmt::Display for IiopVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A host and TCP port a server listens on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// Host name or address literal (an IPv6 literal without brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
}

impl Endpoint {
    /// An endpoint from a host and a port.
    pub fn new(host: impl Into<String>, port: u16) -> Self {
        Self {
            host: host.into(),
            port,
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// An `IIOP::ProfileBody` (1.0, or 1.1+ with its tagged components).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IiopProfile {
    /// The IIOP version, which also caps the GIOP version a client may use.
    pub version: IiopVersion,
    /// Host name or address literal of the primary endpoint.
    pub host: String,
    /// TCP port of the primary endpoint.
    pub port: u16,
    /// The object key, opaque to everyone but the server.
    pub object_key: Vec<u8>,
    /// Tagged components; not encoded (IIOP 1.0 has no such field) when
    /// [`IiopVersion::has_components`] is false.
    pub components: Vec<TaggedComponent>,
}

impl IiopProfile {
    /// Decodes a profile body (an encapsulation) in whatever byte order it
    /// is in. Octets after the last field are ignored, since later IIOP
    /// minor versions may append fields.
    pub fn from_body(data: &[u8]) -> core::result::Result<Self, IorError> {
        decode_body(data)?.ok_or_else(|| {
            // decode_body only returns None for an unknown major version.
            let major = data.get(1).copied().unwrap_or(0);
            let minor = data.get(2).copied().unwrap_or(0);
            IorError::UnsupportedIiopVersion { major, minor }
        })
    }

    /// Encodes the profile body as an encapsulation in byte order `order`.
    pub fn to_body(&self, order: ByteOrder) -> Result<Vec<u8>> {
        encapsulate(order, |w| self.write_fields(w))
    }

    pub(crate) fn write_fields(&self, w: &mut Writer) -> Result<()> {
        w.write_u8(self.version.major);
        w.write_u8(self.version.minor);
        w.write_string(&self.host)?;
        w.write_u16(self.port);
        w.write_octet_seq(&self.object_key)?;
        if self.version.has_components() {
            w.write_len(self.components.len())?;
            for c in &self.components {
                peregrine_cdr::Encode::encode(c, w)?;
            }
        }
        Ok(())
    }

    /// The primary endpoint.
    pub fn primary(&self) -> Endpoint {
        Endpoint::new(self.host.clone(), self.port)
    }

    /// The primary endpoint then every `TAG_ALTERNATE_IIOP_ADDRESS`, in
    /// profile order. Alternate addresses that do not decode are skipped:
    /// a client can still use the others.
    pub fn endpoints(&self) -> Vec<Endpoint> {
        let mut v = Vec::with_capacity(1 + self.components.len());
        v.push(self.primary());
        for c in &self.components {
            if c.tag() != TAG_ALTERNATE_IIOP_ADDRESS {
                continue;
            }
            if let Ok(TaggedComponent::AlternateIiopAddress { host, port }) = c.to_typed() {
                v.push(Endpoint { host, port });
            }
        }
        v
    }

    /// The `TAG_CODE_SETS` component, if present and well-formed.
    pub fn code_sets(&self) -> Option<CodeSetComponentInfo> {
        find_code_sets(&self.components)
    }

    /// The `TAG_ORB_TYPE` component, if present and well-formed.
    pub fn orb_type(&self) -> Option<u32> {
        find_orb_type(&self.components)
    }
}

pub(crate) fn find_code_sets(components: &[TaggedComponent]) -> Option<CodeSetComponentInfo> {
    components
        .iter()
        .filter(|c| c.tag() == TAG_CODE_SETS)
        .find_map(|c| match c.to_typed() {
            Ok(TaggedComponent::CodeSets(info)) => Some(info),
            _ => None,
        })
}

pub(crate) fn find_orb_type(components: &[TaggedComponent]) -> Option<u32> {
    components
        .iter()
        .filter(|c| c.tag() == TAG_ORB_TYPE)
        .find_map(|c| match c.to_typed() {
            Ok(TaggedComponent::OrbType(t)) => Some(t),
            _ => None,
        })
}

/// Decodes a profile body; `Ok(None)` when its major version is not 1, whose
/// layout this ORB cannot know.
pub(crate) fn decode_body(data: &[u8]) -> Result<Option<IiopProfile>> {
    let mut r = Reader::from_encapsulation(data)?;
    let major = r.read_u8()?;
    let minor = r.read_u8()?;
    if major != 1 {
        return Ok(None);
    }
    let version = IiopVersion { major, minor };
    let host = r.read_string()?;
    let port = r.read_u16()?;
    let object_key = r.read_octet_seq()?.to_vec();
    let components = if version.has_components() {
        decode_components(&mut r)?
    } else {
        Vec::new()
    };
    Ok(Some(IiopProfile {
        version,
        host,
        port,
        object_key,
        components,
    }))
}
