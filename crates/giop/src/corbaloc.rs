//! Object URLs (CORBA 3.x Part 2, 7.6.10): `corbaloc:`, `corbaname:` and,
//! through [`ObjectUrl::parse`], stringified `IOR:` references.
//!
//! ```text
//! corbaloc:<obj_addr>[,<obj_addr>]*[/<key_string>]
//! <obj_addr>  = rir: | iiop:<iiop_addr> | :<iiop_addr>
//! <iiop_addr> = [<major>.<minor>@]<host>[:<port>]    host may be [ipv6]
//! corbaname:<obj_addr>[,<obj_addr>]*[/<key_string>][#<string_name>]
//! ```
//!
//! The rules where the grammar is silent follow omniORB's parser, the
//! reference peer: a missing version means IIOP 1.0, a missing port means
//! 2809, an empty IIOP address means `localhost`, `rir:` may not be mixed
//! with other addresses, `corbaloc:` needs a key and `corbaname:` defaults
//! it to `NameService`, and a key or name may hold only URI-legal
//! characters and `%` escapes. `file://`, `http://` and other indirections
//! are deliberately not supported: they would make a parser do I/O.

use std::fmt;

use crate::iiop::{IiopProfile, IiopVersion};
use crate::ior::{Ior, IorError, TaggedProfile};

/// The IANA-assigned default port of corbaloc IIOP addresses.
pub const DEFAULT_CORBALOC_PORT: u16 = 2809;

/// The object key a `corbaname:` URL uses when it names none.
pub const DEFAULT_CORBANAME_KEY: &str = "NameService";

/// One address of a corbaloc URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ObjAddr {
    /// `rir:`: resolve the key with `resolve_initial_references`.
    Rir,
    /// An IIOP address.
    Iiop(IiopAddr),
}

/// An IIOP address in a corbaloc URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IiopAddr {
    /// The version written in the URL, if any (see [`IiopAddr::version`]).
    pub explicit_version: Option<IiopVersion>,
    /// Host name or address literal (IPv6 without its brackets).
    pub host: String,
    /// TCP port (2809 when the URL gives none).
    pub port: u16,
}

impl IiopAddr {
    /// The IIOP version to speak: the one written, else 1.0 as the
    /// specification says.
    pub fn version(&self) -> IiopVersion {
        self.explicit_version.unwrap_or(IiopVersion::V1_0)
    }
}

/// A parsed `corbaloc:` URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Corbaloc {
    /// The addresses, in order of preference (a lone [`ObjAddr::Rir`], or
    /// IIOP addresses).
    pub addrs: Vec<ObjAddr>,
    /// The object key with `%` escapes decoded.
    pub key: Vec<u8>,
}

/// A parsed `corbaname:` URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Corbaname {
    /// Where the naming context is, and its key (`NameService` by default).
    pub loc: Corbaloc,
    /// The stringified CosNaming name after `#`, `%` escapes decoded;
    /// `None` when the URL names the naming context itself.
    pub name: Option<String>,
}

/// Any string `string_to_object` accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectUrl {
    /// `IOR:` followed by hex.
    Ior(Ior),
    /// `corbaloc:`.
    Corbaloc(Corbaloc),
    /// `corbaname:`.
    Corbaname(Corbaname),
}

/// What is wrong in a corbaloc/corbaname URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CorbalocErrorKind {
    /// The string starts with no scheme this ORB handles.
    UnknownScheme,
    /// An address starts with a protocol other than `iiop`, `rir` or empty.
    UnknownProtocol,
    /// A malformed `<major>.<minor>@` version.
    BadVersion,
    /// An empty host where one is needed (before a `:port`).
    EmptyHost,
    /// A `[` without its `]`, or bad text inside the brackets.
    BadIpv6Literal,
    /// A port that is not a number up to 65535.
    BadPort,
    /// `rir:` together with other addresses.
    RirNotAlone,
    /// `corbaloc:` without `/key`.
    MissingKey,
    /// A `%` not followed by two hex digits.
    BadEscape,
    /// A character that must be `%`-escaped in a key or name.
    IllegalChar,
    /// Text after the URL ended (e.g. `#` in a corbaloc URL).
    TrailingGarbage,
    /// A corbaname name that is not UTF-8 once unescaped.
    NameNotUtf8,
}

impl CorbalocErrorKind {
    fn describe(self) -> &'static str {
        match self {
            Self::UnknownScheme => "unknown URL scheme (expected IOR:, corbaloc: or corbaname:)",
            Self::UnknownProtocol => "unknown address protocol (expected iiop:, : or rir:)",
            Self::BadVersion => "malformed IIOP version (expected <major>.<minor>@)",
            Self::EmptyHost => "empty host",
            Self::BadIpv6Literal => "malformed [IPv6] address literal",
            Self::BadPort => "port is not a number from 0 to 65535",
            Self::RirNotAlone => "rir: cannot be combined with other addresses",
            Self::MissingKey => "corbaloc URL has no /object key",
            Self::BadEscape => "% is not followed by two hex digits",
            Self::IllegalChar => "character must be %-escaped",
            Self::TrailingGarbage => "unexpected text after the URL",
            Self::NameNotUtf8 => "unescaped name is not UTF-8",
        }
    }
}

/// A URL parse error and the byte offset in the input where it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CorbalocError {
    /// What is wrong.
    pub kind: CorbalocErrorKind,
    /// Byte offset in the parsed string.
    pub pos: usize,
}

impl fmt::Display for CorbalocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind.describe(), self.pos)
    }
}

impl std::error::Error for CorbalocError {}

/// Why [`ObjectUrl::parse`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectUrlError {
    /// A bad `IOR:` string.
    Ior(IorError),
    /// A bad corbaloc/corbaname URL, or an unknown scheme.
    Url(CorbalocError),
}

impl fmt::Display for ObjectUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ior(e) => e.fmt(f),
            Self::Url(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ObjectUrlError {}

impl From<IorError> for ObjectUrlError {
    fn from(e: IorError) -> Self {
        Self::Ior(e)
    }
}

impl From<CorbalocError> for ObjectUrlError {
    fn from(e: CorbalocError) -> Self {
        Self::Url(e)
    }
}

type PResult<T> = Result<T, CorbalocError>;

fn err<T>(kind: CorbalocErrorKind, pos: usize) -> PResult<T> {
    Err(CorbalocError { kind, pos })
}

/// Strips an ASCII-case-insensitive `prefix` from `s` at `pos`.
fn eat(s: &[u8], pos: &mut usize, prefix: &str) -> bool {
    let p = prefix.as_bytes();
    let ok = s.len() >= *pos + p.len() && s[*pos..*pos + p.len()].eq_ignore_ascii_case(p);
    if ok {
        *pos += p.len();
    }
    ok
}

impl ObjectUrl {
    /// Parses an `IOR:`, `corbaloc:` or `corbaname:` string (schemes in any
    /// case; surrounding ASCII whitespace ignored).
    pub fn parse(s: &str) -> Result<Self, ObjectUrlError> {
        let lead = s.len() - s.trim_start().len();
        let t = s.trim();
        let b = t.as_bytes();
        let mut p = 0;
        if eat(b, &mut p, "IOR:") {
            return Ok(Self::Ior(Ior::from_stringified(s)?));
        }
        let shift = |e: CorbalocError| CorbalocError {
            kind: e.kind,
            pos: e.pos + lead,
        };
        if eat(b, &mut p, "corbaloc:") {
            return Ok(Self::Corbaloc(Corbaloc::parse(t).map_err(shift)?));
        }
        if eat(b, &mut p, "corbaname:") {
            return Ok(Self::Corbaname(Corbaname::parse(t).map_err(shift)?));
        }
        Err(ObjectUrlError::Url(CorbalocError {
            kind: CorbalocErrorKind::UnknownScheme,
            pos: lead,
        }))
    }
}

impl std::str::FromStr for ObjectUrl {
    type Err = ObjectUrlError;
    fn from_str(s: &str) -> Result<Self, ObjectUrlError> {
        Self::parse(s)
    }
}

impl fmt::Display for ObjectUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ior(i) => i.fmt(f),
            Self::Corbaloc(c) => c.fmt(f),
            Self::Corbaname(c) => c.fmt(f),
        }
    }
}

/// Parses `<obj_addr_list>` starting at `*p`; stops at `/`, `#` or the end.
fn parse_addr_list(b: &[u8], p: &mut usize) -> PResult<Vec<ObjAddr>> {
    let mut addrs = Vec::new();
    loop {
        let start = *p;
        let addr = if eat(b, p, "rir:") {
            ObjAddr::Rir
        } else if eat(b, p, "iiop:") || eat(b, p, ":") {
            ObjAddr::Iiop(parse_iiop_addr(b, p)?)
        } else {
            return err(CorbalocErrorKind::UnknownProtocol, start);
        };
        if !addrs.is_empty() && (addr == ObjAddr::Rir || addrs[0] == ObjAddr::Rir) {
            return err(CorbalocErrorKind::RirNotAlone, start);
        }
        addrs.push(addr);
        if b.get(*p) == Some(&b',') {
            *p += 1;
        } else {
            return Ok(addrs);
        }
    }
}

fn is_addr_end(c: Option<&u8>) -> bool {
    matches!(c, None | Some(b',' | b'/' | b'#'))
}

fn parse_iiop_addr(b: &[u8], p: &mut usize) -> PResult<IiopAddr> {
    if is_addr_end(b.get(*p)) {
        // The INS specification (and omniORB) read an empty address as
        // the local host on the default port.
        return Ok(IiopAddr {
            explicit_version: None,
            host: "localhost".into(),
            port: DEFAULT_CORBALOC_PORT,
        });
    }
    let explicit_version = parse_version(b, p)?;
    let host_start = *p;
    let host = if b.get(*p) == Some(&b'[') {
        let close = b[*p..]
            .iter()
            .position(|&c| c == b']')
            .map(|i| *p + i)
            .ok_or(CorbalocError {
                kind: CorbalocErrorKind::BadIpv6Literal,
                pos: *p,
            })?;
        let inner = &b[*p + 1..close];
        let ok = !inner.is_empty()
            && inner.contains(&b':')
            && inner
                .iter()
                .all(|&c| c.is_ascii_hexdigit() || matches!(c, b':' | b'.' | b'%'));
        if !ok {
            return err(CorbalocErrorKind::BadIpv6Literal, *p);
        }
        *p = close + 1;
        inner
    } else {
        while let Some(&c) = b.get(*p) {
            if c.is_ascii_alphanumeric() || b"-._".contains(&c) {
                *p += 1;
            } else if is_addr_end(Some(&c)) || c == b':' {
                break;
            } else {
                return err(CorbalocErrorKind::IllegalChar, *p);
            }
        }
        &b[host_start..*p]
    };
    if host.is_empty() {
        return err(CorbalocErrorKind::EmptyHost, host_start);
    }
    let Ok(host) = std::str::from_utf8(host) else {
        return err(CorbalocErrorKind::IllegalChar, host_start);
    };
    let mut port = DEFAULT_CORBALOC_PORT;
    if b.get(*p) == Some(&b':') {
        *p += 1;
        let start = *p;
        while b.get(*p).is_some_and(u8::is_ascii_digit) {
            *p += 1;
        }
        // "host:" with no digits means the default port, as in omniORB.
        if *p > start {
            port = std::str::from_utf8(&b[start..*p])
                .ok()
                .and_then(|s| s.parse::<u16>().ok())
                .ok_or(CorbalocError {
                    kind: CorbalocErrorKind::BadPort,
                    pos: start,
                })?;
        }
        if !is_addr_end(b.get(*p)) {
            return err(CorbalocErrorKind::BadPort, start);
        }
    } else if !is_addr_end(b.get(*p)) {
        return err(CorbalocErrorKind::IllegalChar, *p);
    }
    Ok(IiopAddr {
        explicit_version,
        host: host.to_owned(),
        port,
    })
}

/// Parses `<major>.<minor>@` if an `@` comes before the end of the address.
fn parse_version(b: &[u8], p: &mut usize) -> PResult<Option<IiopVersion>> {
    let end = b[*p..]
        .iter()
        .position(|&c| matches!(c, b'@' | b',' | b'/' | b'#' | b'['))
        .map_or(b.len(), |i| *p + i);
    if b.get(end) != Some(&b'@') {
        return Ok(None);
    }
    let text = &b[*p..end];
    let bad = CorbalocError {
        kind: CorbalocErrorKind::BadVersion,
        pos: *p,
    };
    let num = |t: &[u8]| -> Option<u8> {
        if t.is_empty() || !t.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(t).ok()?.parse::<u8>().ok()
    };
    let dot = text.iter().position(|&c| c == b'.').ok_or(bad)?;
    let major = num(&text[..dot]).ok_or(bad)?;
    let minor = num(&text[dot + 1..]).ok_or(bad)?;
    *p = end + 1;
    Ok(Some(IiopVersion::new(major, minor)))
}

/// The characters omniORB accepts unescaped in a key or name: RFC 2396
/// unreserved plus reserved characters that cannot end the key.
fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b";/?:@&=+$,-_.!~*()'".contains(&c)
}

/// Decodes `%` escapes in `b[*p..]` up to `#` or the end.
fn unescape(b: &[u8], p: &mut usize) -> PResult<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(&c) = b.get(*p) {
        match c {
            b'#' => break,
            b'%' => {
                let hex = |i: usize| b.get(i).and_then(|&d| (d as char).to_digit(16));
                match (hex(*p + 1), hex(*p + 2)) {
                    (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                    _ => return err(CorbalocErrorKind::BadEscape, *p),
                }
                *p += 3;
            }
            c if is_key_char(c) => {
                out.push(c);
                *p += 1;
            }
            _ => return err(CorbalocErrorKind::IllegalChar, *p),
        }
    }
    Ok(out)
}

/// `%`-escapes an object key or name for a URL: every octet outside the
/// characters omniORB accepts unescaped becomes `%xx` (lowercase hex, as
/// omniORB writes it).
pub fn escape_key(key: &[u8]) -> String {
    let mut s = String::with_capacity(key.len());
    for &c in key {
        if is_key_char(c) {
            s.push(c as char);
        } else {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            s.push('%');
            s.push(HEX[usize::from(c >> 4)] as char);
            s.push(HEX[usize::from(c & 15)] as char);
        }
    }
    s
}

impl Corbaloc {
    /// Parses a `corbaloc:` URL (scheme in any case).
    pub fn parse(s: &str) -> Result<Self, CorbalocError> {
        let b = s.as_bytes();
        let mut p = 0;
        if !eat(b, &mut p, "corbaloc:") {
            return err(CorbalocErrorKind::UnknownScheme, 0);
        }
        let loc = parse_loc(b, &mut p, None)?;
        if p != b.len() {
            return err(CorbalocErrorKind::TrailingGarbage, p);
        }
        Ok(loc)
    }

    /// True for `corbaloc:rir:...`.
    pub fn is_rir(&self) -> bool {
        self.addrs.first() == Some(&ObjAddr::Rir)
    }

    /// The IIOP addresses.
    pub fn iiop_addrs(&self) -> impl Iterator<Item = &IiopAddr> {
        self.addrs.iter().filter_map(|a| match a {
            ObjAddr::Iiop(a) => Some(a),
            ObjAddr::Rir => None,
        })
    }

    /// An IOR with an empty type id and one IIOP profile per address, in
    /// URL order, each at the address's version: what `string_to_object`
    /// makes of the URL before it contacts the object. `None` for `rir:`.
    pub fn to_ior(&self) -> Option<Ior> {
        if self.is_rir() {
            return None;
        }
        let profiles = self
            .iiop_addrs()
            .map(|a| {
                TaggedProfile::Iiop(IiopProfile {
                    version: a.version(),
                    host: a.host.clone(),
                    port: a.port,
                    object_key: self.key.clone(),
                    components: Vec::new(),
                })
            })
            .collect();
        Some(Ior {
            type_id: String::new(),
            profiles,
        })
    }

    fn fmt_body(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.addrs.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            match a {
                ObjAddr::Rir => f.write_str("rir:")?,
                ObjAddr::Iiop(a) => {
                    f.write_str("iiop:")?;
                    if let Some(v) = a.explicit_version {
                        write!(f, "{v}@")?;
                    }
                    if a.host.contains(':') {
                        write!(f, "[{}]:{}", a.host, a.port)?;
                    } else {
                        write!(f, "{}:{}", a.host, a.port)?;
                    }
                }
            }
        }
        write!(f, "/{}", escape_key(&self.key))
    }
}

/// Parses `<obj_addr_list>[/<key>]`; `default_key` is used when no key is
/// given (corbaname), else the key is required.
fn parse_loc(b: &[u8], p: &mut usize, default_key: Option<&str>) -> PResult<Corbaloc> {
    let addrs = parse_addr_list(b, p)?;
    let key = if b.get(*p) == Some(&b'/') {
        *p += 1;
        unescape(b, p)?
    } else if let Some(k) = default_key {
        k.as_bytes().to_vec()
    } else if *p == b.len() {
        return err(CorbalocErrorKind::MissingKey, *p);
    } else {
        return err(CorbalocErrorKind::TrailingGarbage, *p);
    };
    Ok(Corbaloc { addrs, key })
}

/// Writes `iiop:` addresses with their port and version explicit, so the
/// text parses back to an equal value.
impl fmt::Display for Corbaloc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("corbaloc:")?;
        self.fmt_body(f)
    }
}

impl Corbaname {
    /// Parses a `corbaname:` URL (scheme in any case).
    pub fn parse(s: &str) -> Result<Self, CorbalocError> {
        let b = s.as_bytes();
        let mut p = 0;
        if !eat(b, &mut p, "corbaname:") {
            return err(CorbalocErrorKind::UnknownScheme, 0);
        }
        let loc = parse_loc(b, &mut p, Some(DEFAULT_CORBANAME_KEY))?;
        let name = if b.get(p) == Some(&b'#') {
            p += 1;
            let start = p;
            let raw = unescape(b, &mut p)?;
            if p != b.len() {
                // A second '#'.
                return err(CorbalocErrorKind::IllegalChar, p);
            }
            Some(String::from_utf8(raw).map_err(|_| CorbalocError {
                kind: CorbalocErrorKind::NameNotUtf8,
                pos: start,
            })?)
        } else if p == b.len() {
            None
        } else {
            return err(CorbalocErrorKind::TrailingGarbage, p);
        };
        Ok(Self { loc, name })
    }
}

impl fmt::Display for Corbaname {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("corbaname:")?;
        self.loc.fmt_body(f)?;
        if let Some(n) = &self.name {
            write!(f, "#{}", escape_key(n.as_bytes()))?;
        }
        Ok(())
    }
}
