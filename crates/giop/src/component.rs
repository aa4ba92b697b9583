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
/// omniORB's `TAG_OMNIORB_BIDIR` (bidirectional GIOP send-from address, opaque).
pub const TAG_OMNIORB_BIDIR: u32 = 0x4154_5401;
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
        TAG_OMNIORB_BIDIR => "TAG_OMNIORB_BIDIR",
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
/// octets, or a known component whose body does not decode) stays
/// [`TaggedComponent::Other`], and [`TaggedComponent::to_typed`] decodes such
/// a component leniently when its content is wanted, or says why it cannot.
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
        // A known component with a malformed body stays raw rather than
        // failing the whole reference: the profile's address is still
        // usable (omniORB's catior reports such a component as broken and
        // carries on), and `to_typed` reports the error to whoever asks.
        if let Ok(Some(typed)) = Self::decode_data(tag, data) {
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

/// The vendor of a `TAG_ORB_TYPE` value, from the OMG vendor tag
/// allocations (each vendor owns a block sharing the top 24 bits; the
/// names are those omniORB's `catior` prints).
pub fn orb_type_name(orb_type: u32) -> Option<&'static str> {
    Some(match orb_type & 0xffff_ff00 {
        0x4154_5400 => "omniORB",
        0x4850_0000 | 0x4e53_4400 => "HP",
        0x4942_4d00 => "IBM",
        0x5355_4e00 => "Sun",
        0x4f42_4200 | 0x4245_4100 | 0x574c_5300 => "BEA",
        0x494c_5500 => "Xerox",
        0x5850_5300 | 0x5054_4300 => "PrismTech",
        0x4953_4900 => "AdNovum Informatik",
        0x5649_5300 => "Borland",
        0x4f49_5300 => "Object Interface Systems",
        0x4642_0000 => "FloorBoard Software",
        0x4e4e_4e00 => "Rogue Wave",
        0x4e55_0000 => "Nihon Unisys",
        0x4a42_4b00 => "SilverStream Software",
        0x5441_4f00 => "TAO",
        0x4c43_4200 => "2AB",
        0x4150_5800 => "Univ. of Erlangen-Nuernberg",
        0x4f42_5400 => "ORBit",
        0x4753_4900 => "GemStone Systems",
        0x464a_0000 => "Fujitsu",
        0x4f42_5f00 => "TIBCO",
        0x4f41_4b00 => "Camros Corporation",
        0x4f4f_4300 => "IONA (Orbacus)",
        0x4954_5f00 => "IONA (Orbix)",
        0x4e45_4300 => "NEC",
        0x424c_5500 => "Berry Software",
        0x5649_5400 => "Vitria",
        0x444f_4700 => "Exoffice Technologies",
        0xcb0e_0000 => "Chicago Board of Exchange",
        0x4a41_4300 => "JacORB",
        0x5854_5200 => "Xtradyne Technologies",
        0x5447_5800 => "Top Graph'X",
        0x4164_6100 => "AdaOS Project",
        0x4e4f_4b00 => "Nokia",
        0x4552_4900 => "Ericsson",
        0x5241_5900 => "RayORB",
        0x5341_4e00 => "Sankhya Technologies",
        0x414e_4400 => "Androsoft",
        0x4242_4300 => "Bionic Buffalo",
        0x522e_4300 => "Remoting.Corba",
        0x504f_0000 => "PolyORB",
        0x5449_4400 => "Telefonica",
        _ => return None,
    })
}

/// The name of a code set id, as omniORB's `catior` prints it.
pub fn code_set_name(id: u32) -> Option<&'static str> {
    Some(match id {
        0x0001_0001 => "ISO-8859-1",
        0x0001_0002 => "ISO-8859-2",
        0x0001_0003 => "ISO-8859-3",
        0x0001_0004 => "ISO-8859-4",
        0x0001_0005 => "ISO-8859-5",
        0x0001_0006 => "ISO-8859-6",
        0x0001_0007 => "ISO-8859-7",
        0x0001_0008 => "ISO-8859-8",
        0x0001_0009 => "ISO-8859-9",
        0x0001_000a => "ISO-8859-10",
        0x0001_000b => "ISO-8859-11",
        0x0001_000d => "ISO-8859-13",
        0x0001_000e => "ISO-8859-14",
        0x0001_000f => "ISO-8859-15",
        0x0001_0010 => "ISO-8859-16",
        0x0001_0020 => "ISO-646",
        0x0001_0100 => "UCS-2-level-1",
        0x0001_0101 => "UCS-2-level-2",
        0x0001_0102 => "UCS-2-level-3",
        0x0001_0106 => "UCS-4",
        0x0501_0001 => "UTF-8",
        0x0001_0109 => "UTF-16",
        0x1002_04e2 => "windows-1250",
        0x1002_04e3 => "windows-1251",
        0x1002_04e4 => "windows-1252",
        0x1002_04e5 => "windows-1253",
        0x1002_04e6 => "windows-1254",
        0x1002_04e7 => "windows-1255",
        0x1002_04e8 => "windows-1256",
        0x1002_04e9 => "windows-1257",
        0x1002_04ea => "windows-1258",
        0x1002_0025 => "IBM-037",
        0x1002_01f8 => "IBM-500",
        0x1004_0366 => "SNI-EDF-4",
        0x1002_0567 => "GBK",
        _ => return None,
    })
}
