//! Tagged components (CORBA 3.x Part 2, 7.6.6 and 13.6.6 `IOP::TaggedComponent`).
//!
//! A component is a `(tag, sequence<octet>)` pair that lives in an IIOP 1.1+
//! profile or in a `TAG_MULTIPLE_COMPONENTS` profile. The few components an
//! ORB acts on are decoded into typed variants; every other component is kept
//! as its raw octets so that an IOR passed through Peregrine comes out byte
//! for byte as it came in.


use peregrine_cdr::{ByteOrder, CodeSetId, Decode, Encode, Reader, Result, Writer};

/// `IOP::TAG_ORB_TYPE`: the vendor's ORB type id, an encapsulated `ulong`.
pub const TAG_ORB_TYPE: u32 = 0;
/// `IOP::TAG_CODE_SETS`: `CONV_FRAME::CodeSetComponentInfo`, encapsulated.
pub const TAG_CODE_SETS: u32 = 1;
/// `IOP::TAG_POLICIES`: messaging policies (kept opaque).
pub const TAG_POLICIES: u32 = 2;
/// `IOP::TAG_ALTERNATE_IIOP_ADDRESS`: one more host/port for the profile.
pub const TAG_ALTERNATE_IIOP_ADDRESS: u32 = 3;
/// `IOP::TAG_ASSOCIATION_OPTIONS` (security, kept opaque).
pub const TAG_ASSOCIATION_OPTIONS: u32 = 13;
/// `IOP::TAG_SEC_NAME` (security, kept opaque).
pub const TAG_SEC_NAME: u32 = 14;
/// `IOP::TAG_SSL_SEC_TRANS` (SSLIOP, kept opaque).
pub const TAG_SSL_SEC_TRANS: u32 = 20;
/// `IOP::TAG_CSI_SEC_MECH_LIST` (CSIv2, kept opaque).
pub const TAG_CSI_SEC_MECH_LIST: u32 = 33;
/// `IOP::TAG_RMI_CUSTOM_MAX_STREAM_FORMAT` (kept opaque).
pub const TAG_RMI_CUSTOM_MAX_STREAM_FORMAT: u32 = 38;
/// `IOP::TAG_JAVA_CODEBASE` (kept opaque).
pub const TAG_JAVA_CODEBASE: u32 = 25;
/// omniORB's `TAG_OMNIORB_UNIX_TRANS` (Unix-domain socket address, opaque).
pub const TAG_OMNIORB_UNIX_TRANS: u32 = 0x4154_5402;
/// omniORB's `TAG_OMNIORB_PERSISTENT_ID` (opaque).
pub const TAG_OMNIORB_PERSISTENT_ID: u32 = 0x4154_5403;
/// omniORB's `TAG_OMNIORB_RESTRICTED_CONNECTION` (opaque).
pub const TAG_OMNIORB_RESTRICTED_CONNECTION: u32 = 0x4154_5404;

/// The name of a well-known component tag, for diagnostics.
pub fn component_tag_name(tag: u32) -> Option<&'static str> {
    Some(match tag {
        TAG_ORB_TYPE => "TAG_ORB_TYPE",
        TAG_CODE_SETS => "TAG_CODE_SETS",
        TAG_POLICIES => "TAG_POLICIES",
        TAG_ALTERNATE_IIOP_ADDRESS => "TAG_ALTERNATE_IIOP_ADDRESS",
        TAG_ASSOCIATION_OPTIONS => "TAG_ASSOCIATION_OPTIONS",
        TAG_SEC_NAME => "TAG_SEC_NAME",
        TAG_SSL_SEC_TRANS => "TAG_SSL_SEC_TRANS",
        TAG_JAVA_CODEBASE => "TAG_JAVA_CODEBASE",
        TAG_CSI_SEC_MECH_LIST => "TAG_CSI_SEC_MECH_LIST",
        TAG_RMI_CUSTOM_MAX_STREAM_FORMAT => "TAG_RMI_CUSTOM_MAX_STREAM_FORMAT",
        TAG_OMNIORB_UNIX_TRANS => "TAG_OMNIORB_UNIX_TRANS",
        TAG_OMNIORB_PERSISTENT_ID => "TAG_OMNIORB_PERSISTENT_ID",
        TAG_OMNIORB_RESTRICTED_CONNECTION => "TAG_OMNIORB_RESTRICTED_CONNECTION",
        _ => return None,
    })
}

/// One half of `CONV_FRAME::CodeSetComponentInfo`: the native code set of a
/// character kind and the code sets the ORB can convert to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CodeSetComponent {
    /// The native code set (`CONV_FRAME::CodeSetId`).
    pub native_code_set: CodeSetId,
    /// Conversion code sets, in the server's order of preference.
    pub conversion_code_sets: Vec<CodeSetId>,
}

impl CodeSetComponent {
    /// A component with only a native code set.
    pub fn native(id: CodeSetId) -> Self {
        Self {
            native_code_set: id,
            conversion_code_sets: Vec::new(),
        }
    }
}

impl Encode for CodeSetComponent {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_u32(self.native_code_set.0);
        w.write_len(self.conversion_code_sets.len())?;
        for id in &self.conversion_code_sets {
            w.write_u32(id.0);
        }
        Ok(())
    }
}

impl<'de> Decode<'de> for CodeSetComponent {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let native_code_set = CodeSetId(r.read_u32()?);
        let ids: Vec<u32> = r.read_primitive_seq()?;
        Ok(Self {
            native_code_set,
            conversion_code_sets: ids.into_iter().map(CodeSetId).collect(),
        })
    }
}

/// `CONV_FRAME::CodeSetComponentInfo`, the body of `TAG_CODE_SETS`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CodeSetComponentInfo {
    /// Code sets for `char` and `string`.
    pub for_char_data: CodeSetComponent,
    /// Code sets for `wchar` and `wstring`.
    pub for_wchar_data: CodeSetComponent,
}

impl Encode for CodeSetComponentInfo {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        self.for_char_data.encode(w)?;
        self.for_wchar_data.encode(w)
    }
}

impl<'de> Decode<'de> for CodeSetComponentInfo {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        Ok(Self {
            for_char_data: CodeSetComponent::decode(r)?,
            for_wchar_data: CodeSetComponent::decode(r)?,
        })
    }
}

/// An `IOP::TaggedComponent`.
///
/// Typed variants are produced only when re-encoding them in the enclosing
/// stream's byte order reproduces the received octets exactly; anything
/// else (another byte order inside the component, non-zero padding, trailing
/// octets) stays [`TaggedComponent::Other`], and [`TaggedComponent::to_typed`]
/// decodes such a component leniently when its content is wanted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TaggedComponent {
    /// `TAG_ORB_TYPE`: the vendor ORB type id (see [`orb_type_name`]).
    OrbType(u32),
    /// `TAG_CODE_SETS`: the code sets the server supports.
    CodeSets(CodeSetComponentInfo),
    /// `TAG_ALTERNATE_IIOP_ADDRESS`: another address of the same server.
    AlternateIiopAddress {
        /// Host name or address literal.
        host: String,
        /// TCP port.
        port: u16,
    },
    /// Any other component, or a known one in non-canonical form: the raw
    /// `component_data` octets.
    Other {
        /// The component id.
        tag: u32,
        /// The `component_data` octets, exactly as received.
        data: Vec<u8>,
    },
}

impl TaggedComponent {
    /// The component id.
    pub fn tag(&self) -> u32 {
        match self {
            Self::OrbType(_) => TAG_ORB_TYPE,
            Self::CodeSets(_) => TAG_CODE_SETS,
            Self::AlternateIiopAddress { .. } => TAG_ALTERNATE_IIOP_ADDRESS,
            Self::Other { tag, .. } => *tag,
        }
    }

    /// Writes the `component_data` encapsulation body of a typed component.
    fn write_body(&self, w: &mut Writer) -> Result<()> {
        match self {
            Self::OrbType(t) => w.write_u32(*t),
            Self::CodeSets(info) => info.encode(w)?,
            Self::AlternateIiopAddress { host, port } => {
                w.write_string(host)?;
                w.write_u16(*port);
            }
            Self::Other { .. } => {}
        }
        Ok(())
    }

    /// The `component_data` octets this component encodes to when the
    /// enclosing stream is in byte order `order`.
    pub fn data(&self, order: ByteOrder) -> Result<Vec<u8>> {
        match self {
            Self::Other { data, .. } => Ok(data.clone()),
            typed => encapsulate(order, |w| typed.write_body(w)),
        }
    }

    /// Decodes a known component from its `component_data`, whatever its
    /// byte order and ignoring trailing octets; `Ok(None)` for tags that
    /// have no typed form.
    pub fn decode_data(tag: u32, data: &[u8]) -> Result<Option<Self>> {
        let mut r = Reader::from_encapsulation(data)?;
        Ok(Some(match tag {
            TAG_ORB_TYPE => Self::OrbType(r.read_u32()?),
            TAG_CODE_SETS => Self::CodeSets(CodeSetComponentInfo::decode(&mut r)?),
            TAG_ALTERNATE_IIOP_ADDRESS => {
                let host = r.read_string()?;
                let port = r.read_u16()?;
                Self::AlternateIiopAddress { host, port }
            }
            _ => return Ok(None),
        }))
    }

    /// This component with a known tag in typed form, decoding an `Other`
    /// leniently; unknown components are returned unchanged.
    pub fn to_typed(&self) -> Result<Self> {
        match self {
            Self::Other { tag, data } => {
                Ok(Self::decode_data(*tag, data)?.unwrap_or_else(|| self.clone()))
            }
            typed => Ok(typed.clone()),
        }
    }
}

impl Encode for TaggedComponent {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_u32(self.tag());
        match self {
            Self::Other { data, .. } => w.write_octet_seq(data),
            typed => w.write_encapsulation(|e| typed.write_body(e)),
        }
    }
}

impl<'de> Decode<'de> for TaggedComponent {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let tag = r.read_u32()?;
        let data = r.read_octet_seq()?;
        // A known component whose body is malformed is a MARSHAL error, as
        // in omniORB; the caller sees where from the error.
        if let Some(typed) = Self::decode_data(tag, data)? {
            if typed.data(r.order())? == data {
                return Ok(typed);
            }
        }
        Ok(Self::Other {
            tag,
            data: data.to_vec(),
        })
    }
}

/// The octets of an encapsulation in byte order `order` (byte-order octet
/// first, alignment measured from it), with `body` written after the octet.
pub(crate) fn encapsulate(
    order: ByteOrder,
    body: impl FnOnce(&mut Writer) -> Result<()>,
) -> Result<Vec<u8>> {
    let mut w = Writer::new(order);
    w.write_u8(order.is_little() as u8);
    body(&mut w)?;
    Ok(w.into_vec())
}

/// Decodes a `sequence<TaggedComponent>`, checking the count against the
/// input first (a component takes at least 8 octets).
pub(crate) fn decode_components(r: &mut Reader<'_>) -> Result<Vec<TaggedComponent>> {
    let n = r.read_len(8)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(TaggedComponent::decode(r)?);
    }
    Ok(v)
}

