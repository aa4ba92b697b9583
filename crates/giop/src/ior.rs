//! Interoperable Object References (CORBA 3.x Part 2, 7.6 `IOP::IOR`) and
//! their stringified `IOR:` form.
//!
//! An [`Ior`] is a repository id plus an ordered list of tagged profiles.
//! IIOP and multiple-components profiles are decoded into typed values when
//! that loses nothing; everything else is kept as raw octets, so decoding
//! and re-encoding an IOR in the byte order it came in reproduces it byte
//! for byte (which matters: clients compare and hash references, and some
//! ORBs sign them).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use peregrine_cdr::{ByteOrder, CdrError, Decode, Encode, Reader, Result, Writer};

use crate::component::{decode_components, encapsulate, CodeSetComponentInfo, TaggedComponent};
use crate::iiop::{decode_body, find_code_sets, find_orb_type, Endpoint, IiopProfile, IiopVersion};

/// `IOP::TAG_INTERNET_IOP`: an IIOP profile.
pub const TAG_INTERNET_IOP: u32 = 0;
/// `IOP::TAG_MULTIPLE_COMPONENTS`: a profile that is only components.
pub const TAG_MULTIPLE_COMPONENTS: u32 = 1;
/// `IOP::TAG_SCCP_IOP`.
pub const TAG_SCCP_IOP: u32 = 2;
/// `IOP::TAG_UIPMC` (MIOP group profile).
pub const TAG_UIPMC: u32 = 3;

/// The name of a well-known profile tag, for diagnostics.
pub fn profile_tag_name(tag: u32) -> Option<&'static str> {
    Some(match tag {
        TAG_INTERNET_IOP => "TAG_INTERNET_IOP",
        TAG_MULTIPLE_COMPONENTS => "TAG_MULTIPLE_COMPONENTS",
        TAG_SCCP_IOP => "TAG_SCCP_IOP",
        TAG_UIPMC => "TAG_UIPMC",
        _ => return None,
    })
}

/// An `IOP::TaggedProfile`.
///
/// Typed variants are produced by decoding only when re-encoding them in the
/// enclosing stream's byte order gives back the received octets; otherwise
/// (another byte order inside, non-zero padding, octets appended by a later
/// IIOP minor version, an IIOP major version other than 1) the profile stays
/// [`TaggedProfile::Other`] and [`Ior::iiop_profiles`] still decodes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TaggedProfile {
    /// `TAG_INTERNET_IOP`.
    Iiop(IiopProfile),
    /// `TAG_MULTIPLE_COMPONENTS`: an encapsulated sequence of components.
    MultipleComponents(Vec<TaggedComponent>),
    /// Any other profile: its `profile_data` octets, exactly as received.
    Other {
        /// The profile id.
        tag: u32,
        /// The `profile_data` octets.
        data: Vec<u8>,
    },
}

impl TaggedProfile {
    /// The profile id.
    pub fn tag(&self) -> u32 {
        match self {
            Self::Iiop(_) => TAG_INTERNET_IOP,
            Self::MultipleComponents(_) => TAG_MULTIPLE_COMPONENTS,
            Self::Other { tag, .. } => *tag,
        }
    }

    /// The `profile_data` octets this profile encodes to inside a stream in
    /// byte order `order`.
    pub fn data(&self, order: ByteOrder) -> Result<Vec<u8>> {
        match self {
            Self::Iiop(p) => p.to_body(order),
            Self::MultipleComponents(cs) => encapsulate(order, |w| cs.encode(w)),
            Self::Other { data, .. } => Ok(data.clone()),
        }
    }
}

impl Encode for TaggedProfile {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_u32(self.tag());
        match self {
            Self::Iiop(p) => w.write_encapsulation(|e| p.write_fields(e)),
            Self::MultipleComponents(cs) => w.write_encapsulation(|e| cs.encode(e)),
            Self::Other { data, .. } => w.write_octet_seq(data),
        }
    }
}

impl<'de> Decode<'de> for TaggedProfile {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let tag = r.read_u32()?;
        let data = r.read_octet_seq()?;
        let typed = match tag {
            TAG_INTERNET_IOP => decode_body(data)?.map(Self::Iiop),
            TAG_MULTIPLE_COMPONENTS => {
                let mut inner = Reader::from_encapsulation(data)?;
                Some(Self::MultipleComponents(decode_components(&mut inner)?))
            }
            _ => None,
        };
        if let Some(p) = typed {
            if p.data(r.order())? == data {
                return Ok(p);
            }
        }
        Ok(Self::Other {
            tag,
            data: data.to_vec(),
        })
    }
}

/// An interoperable object reference (`IOP::IOR`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Ior {
    /// The repository id of the most derived interface the server knew
    /// of (may be empty).
    pub type_id: String,
    /// The profiles, in the server's order of preference.
    pub profiles: Vec<TaggedProfile>,
}

impl Encode for Ior {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        w.write_string(&self.type_id)?;
        w.write_len(self.profiles.len())?;
        for p in &self.profiles {
            p.encode(w)?;
        }
        Ok(())
    }
}

impl<'de> Decode<'de> for Ior {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let type_id = r.read_string()?;
        // A profile is at least a tag and a length: 8 octets.
        let n = r.read_len(8)?;
        let mut profiles = Vec::with_capacity(n);
        for _ in 0..n {
            profiles.push(TaggedProfile::decode(r)?);
        }
        Ok(Self { type_id, profiles })
    }
}

/// What can be wrong with a stringified IOR or with a profile body.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IorError {
    /// The string does not start with `IOR:` (in any case).
    MissingPrefix,
    /// The hex part has an odd number of digits.
    OddHexLength {
        /// Number of hex digits.
        len: usize,
    },
    /// A character that is not a hex digit, at this byte position of the
    /// whole string.
    InvalidHexDigit {
        /// Byte offset in the input string.
        pos: usize,
    },
    /// The octets are not a valid IOR encapsulation.
    Cdr(CdrError),
    /// An IIOP profile whose major version this ORB does not know.
    UnsupportedIiopVersion {
        /// Major version octet.
        major: u8,
        /// Minor version octet.
        minor: u8,
    },
}

impl From<CdrError> for IorError {
    fn from(e: CdrError) -> Self {
        Self::Cdr(e)
    }
}

impl fmt::Display for IorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingPrefix => f.write_str("not a stringified IOR: missing \"IOR:\" prefix"),
            Self::OddHexLength { len } => {
                write!(f, "stringified IOR has an odd number of hex digits ({len})")
            }
            Self::InvalidHexDigit { pos } => {
                write!(f, "stringified IOR has a non-hex character at byte {pos}")
            }
            Self::Cdr(e) => write!(f, "malformed IOR: {e}"),
            Self::UnsupportedIiopVersion { major, minor } => {
                write!(f, "unsupported IIOP version {major}.{minor}")
            }
        }
    }
}

impl std::error::Error for IorError {}

impl Ior {
    /// The nil object reference: empty type id, no profiles.
    pub fn nil() -> Self {
        Self::default()
    }

    /// True for the nil reference (no profiles; the type id of a nil
    /// reference is empty, but any IOR without profiles is unusable, so
    /// ORBs treat both as nil).
    pub fn is_nil(&self) -> bool {
        self.profiles.is_empty()
    }

    /// Decodes an IOR from a standalone encapsulation (byte-order octet
    /// first), the form inside a stringified IOR. Octets after the IOR are
    /// ignored, as omniORB and TAO do (some ORBs pad the string).
    pub fn from_encapsulation(bytes: &[u8]) -> std::result::Result<Self, IorError> {
        let mut r = Reader::from_encapsulation(bytes)?;
        Ok(Self::decode(&mut r)?)
    }

    /// Encodes the IOR as a standalone encapsulation in byte order `order`.
    pub fn to_encapsulation(&self, order: ByteOrder) -> Result<Vec<u8>> {
        encapsulate(order, |w| self.encode(w))
    }

    /// Parses a stringified IOR: `IOR:` (any case) then an even number of
    /// hex digits (any case) holding the encapsulation.
    pub fn from_stringified(s: &str) -> std::result::Result<Self, IorError> {
        let bytes = hex_after_prefix(s)?;
        Self::from_encapsulation(&bytes)
    }

    /// The stringified form in byte order `order`: `IOR:` then lowercase
    /// hex, as omniORB, TAO and JacORB write it.
    pub fn to_stringified(&self, order: ByteOrder) -> Result<String> {
        let bytes = self.to_encapsulation(order)?;
        let mut s = String::with_capacity(4 + 2 * bytes.len());
        s.push_str("IOR:");
        for b in bytes {
            s.push(HEX[usize::from(b >> 4)] as char);
            s.push(HEX[usize::from(b & 15)] as char);
        }
        Ok(s)
    }

    /// Every IIOP profile, typed, including those kept raw because they were
    /// not in canonical form. Profiles of an unknown IIOP major version are
    /// skipped; a malformed one is an error.
    pub fn iiop_profiles(&self) -> std::result::Result<Vec<IiopProfile>, IorError> {
        Ok(self
            .iiop_profiles_borrowed()?
            .into_iter()
            .map(Cow::into_owned)
            .collect())
    }

    /// [`Ior::iiop_profiles`] without copying the profiles already in
    /// typed form: only those kept raw are decoded into new values. A
    /// client binding a reference reads a few fields of each profile, and
    /// copying them (key, host, components) was most of that cost.
    pub fn iiop_profiles_borrowed(
        &self,
    ) -> std::result::Result<Vec<Cow<'_, IiopProfile>>, IorError> {
        let mut v = Vec::with_capacity(self.profiles.len());
        for p in &self.profiles {
            match p {
                TaggedProfile::Iiop(p) => v.push(Cow::Borrowed(p)),
                TaggedProfile::Other {
                    tag: TAG_INTERNET_IOP,
                    data,
                } => {
                    if let Some(p) = decode_body(data)? {
                        v.push(Cow::Owned(p));
                    }
                }
                _ => {}
            }
        }
        Ok(v)
    }

    /// The profiles with every IIOP and multiple-components profile in
    /// its typed form where its octets decode, whatever byte order its
    /// encapsulation is in. [`Ior::profiles`] keeps such a profile as raw
    /// octets when it cannot be re-encoded byte for byte in the order of
    /// the stream it came in: JacORB, for one, writes its profiles as
    /// little-endian encapsulations inside big-endian messages, so the
    /// same reference read from its stringified form (little-endian
    /// throughout) and from a reply differs in [`Ior::profiles`] but not
    /// here. Compare and hash these to decide whether two references
    /// denote the same object ([`Ior::is_equivalent`]).
    pub fn canonical_profiles(&self) -> Vec<TaggedProfile> {
        self.profiles
            .iter()
            .map(|p| match p {
                TaggedProfile::Other {
                    tag: TAG_INTERNET_IOP,
                    data,
                } => match decode_body(data) {
                    Ok(Some(body)) => TaggedProfile::Iiop(body),
                    _ => p.clone(),
                },
                TaggedProfile::Other {
                    tag: TAG_MULTIPLE_COMPONENTS,
                    data,
                } => match Reader::from_encapsulation(data)
                    .and_then(|mut r| decode_components(&mut r))
                {
                    Ok(cs) => TaggedProfile::MultipleComponents(cs),
                    Err(_) => p.clone(),
                },
                _ => p.clone(),
            })
            .collect()
    }

    /// Whether `self` and `other` hold the same profiles once each is in
    /// its typed form ([`Ior::canonical_profiles`]); the type ids, which
    /// may name a base interface, are not compared.
    pub fn is_equivalent(&self, other: &Ior) -> bool {
        self.canonical_profiles() == other.canonical_profiles()
    }

    /// Every endpoint of every IIOP profile, in order (primary address of
    /// each profile, then its alternate addresses), without duplicates.
    pub fn endpoints(&self) -> std::result::Result<Vec<Endpoint>, IorError> {
        let mut v: Vec<Endpoint> = Vec::new();
        for p in self.iiop_profiles_borrowed()? {
            for e in p.endpoints() {
                if !v.contains(&e) {
                    v.push(e);
                }
            }
        }
        Ok(v)
    }

    /// The components of every `TAG_MULTIPLE_COMPONENTS` profile.
    pub fn multiple_components(&self) -> Vec<TaggedComponent> {
        let mut v = Vec::new();
        for p in &self.profiles {
            match p {
                TaggedProfile::MultipleComponents(cs) => v.extend(cs.iter().cloned()),
                TaggedProfile::Other {
                    tag: TAG_MULTIPLE_COMPONENTS,
                    data,
                } => {
                    let cs = Reader::from_encapsulation(data)
                        .and_then(|mut r| decode_components(&mut r));
                    if let Ok(cs) = cs {
                        v.extend(cs);
                    }
                }
                _ => {}
            }
        }
        v
    }

    /// The server's code sets: the `TAG_CODE_SETS` component of the first
    /// IIOP profile that has one, else of a multiple-components profile.
    /// `None` means the client must assume ISO 8859-1 and no `wchar`.
    pub fn code_sets(&self) -> Option<CodeSetComponentInfo> {
        self.code_sets_of(&self.iiop_profiles_borrowed().unwrap_or_default())
    }

    /// [`Ior::code_sets`] given this reference's IIOP profiles (from
    /// [`Ior::iiop_profiles_borrowed`]), which are then not decoded again.
    pub fn code_sets_of(&self, iiop: &[Cow<'_, IiopProfile>]) -> Option<CodeSetComponentInfo> {
        iiop.iter()
            .find_map(|p| p.code_sets())
            .or_else(|| find_code_sets(&self.multiple_components()))
    }

    /// The vendor ORB type (`TAG_ORB_TYPE`) of the first IIOP profile or
    /// multiple-components profile that has one.
    pub fn orb_type(&self) -> Option<u32> {
        let iiop = self.iiop_profiles_borrowed().unwrap_or_default();
        iiop.iter()
            .find_map(|p| p.orb_type())
            .or_else(|| find_orb_type(&self.multiple_components()))
    }
}

impl FromStr for Ior {
    type Err = IorError;

    fn from_str(s: &str) -> std::result::Result<Self, IorError> {
        Self::from_stringified(s)
    }
}

/// Stringifies in the machine's native byte order, which is what omniORB
/// or TAO on the same machine would write.
impl fmt::Display for Ior {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self
            .to_stringified(ByteOrder::NATIVE)
            .map_err(|_| fmt::Error)?;
        f.write_str(&s)
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The octets of the hex digits after an `IOR:` prefix. Leading and
/// trailing ASCII whitespace is ignored, since IORs are often pasted from
/// files with a final newline.
fn hex_after_prefix(s: &str) -> std::result::Result<Vec<u8>, IorError> {
    let start = s.len() - s.trim_start().len();
    let t = s.trim();
    let b = t.as_bytes();
    if b.len() < 4 || !b[..4].eq_ignore_ascii_case(b"IOR:") {
        return Err(IorError::MissingPrefix);
    }
    let digits = &b[4..];
    // Report a bad character before an odd length: it is the likelier
    // mistake and its position is more useful.
    if let Some(i) = digits.iter().position(|&c| hex_val(c).is_none()) {
        return Err(IorError::InvalidHexDigit { pos: start + 4 + i });
    }
    if digits.len() % 2 != 0 {
        return Err(IorError::OddHexLength { len: digits.len() });
    }
    Ok(digits
        .chunks_exact(2)
        .map(|p| (hex_val(p[0]).unwrap_or(0) << 4) | hex_val(p[1]).unwrap_or(0))
        .collect())
}

/// Builds the IOR an ORB publishes for one of its objects: one IIOP
/// profile whose primary address is the first endpoint and whose other
/// endpoints become `TAG_ALTERNATE_IIOP_ADDRESS` components.
#[derive(Debug, Clone)]
pub struct IorBuilder {
    type_id: String,
    version: IiopVersion,
    endpoints: Vec<Endpoint>,
    object_key: Vec<u8>,
    orb_type: Option<u32>,
    code_sets: Option<CodeSetComponentInfo>,
    extra: Vec<TaggedComponent>,
}

impl IorBuilder {
    /// A builder for an IIOP 1.2 reference to an object of type `type_id`.
    pub fn new(type_id: impl Into<String>) -> Self {
        Self {
            type_id: type_id.into(),
            version: IiopVersion::V1_2,
            endpoints: Vec::new(),
            object_key: Vec::new(),
            orb_type: None,
            code_sets: None,
            extra: Vec::new(),
        }
    }

    /// Sets the IIOP version (1.0 drops every component).
    pub fn version(mut self, version: IiopVersion) -> Self {
        self.version = version;
        self
    }

    /// Adds an endpoint; the first one is the primary address.
    pub fn endpoint(mut self, host: impl Into<String>, port: u16) -> Self {
        self.endpoints.push(Endpoint::new(host, port));
        self
    }

    /// Sets the object key.
    pub fn object_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.object_key = key.into();
        self
    }

    /// Publishes a `TAG_ORB_TYPE` component.
    pub fn orb_type(mut self, orb_type: u32) -> Self {
        self.orb_type = Some(orb_type);
        self
    }

    /// Publishes a `TAG_CODE_SETS` component.
    pub fn code_sets(mut self, info: CodeSetComponentInfo) -> Self {
        self.code_sets = Some(info);
        self
    }

    /// Appends another component after the standard ones.
    pub fn component(mut self, c: TaggedComponent) -> Self {
        self.extra.push(c);
        self
    }

    /// The IOR. Without endpoints it is nil-like (no profiles), since a
    /// profile without an address could not be used.
    pub fn build(self) -> Ior {
        let mut eps = self.endpoints.into_iter();
        let Some(primary) = eps.next() else {
            return Ior {
                type_id: self.type_id,
                profiles: Vec::new(),
            };
        };
        // omniORB's order: ORB type, code sets, then alternate addresses.
        let mut components = Vec::new();
        if self.version.has_components() {
            components.extend(self.orb_type.map(TaggedComponent::OrbType));
            components.extend(self.code_sets.map(TaggedComponent::CodeSets));
            components.extend(eps.map(|e| TaggedComponent::AlternateIiopAddress {
                host: e.host,
                port: e.port,
            }));
            components.extend(self.extra);
        }
        Ior {
            type_id: self.type_id,
            profiles: vec![TaggedProfile::Iiop(IiopProfile {
                version: self.version,
                host: primary.host,
                port: primary.port,
                object_key: self.object_key,
                components,
            })],
        }
    }
}
