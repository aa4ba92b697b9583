//! Human-readable and JSON renderings of decoded object references.

use std::fmt::Write;

use peregrine_giop::component::{code_set_name, component_tag_name, orb_type_name};
use peregrine_giop::corbaloc::{escape_key, ObjAddr};
use peregrine_giop::ior::{profile_tag_name, TAG_INTERNET_IOP};
use peregrine_giop::{
    CodeSetComponent, Corbaloc, IiopProfile, Ior, ObjectUrl, TaggedComponent, TaggedProfile,
};

use serde::Serialize;

/// Text for one reference, in omniORB `catior` style.
pub fn text(url: &ObjectUrl) -> String {
    let mut out = String::new();
    match url {
        ObjectUrl::Ior(ior) => ior_text(&mut out, ior),
        ObjectUrl::Corbaloc(loc) => {
            out.push_str("corbaloc URL\n");
            loc_text(&mut out, loc, "Object key");
        }
        ObjectUrl::Corbaname(n) => {
            out.push_str("corbaname URL\n");
            loc_text(&mut out, &n.loc, "Naming context key");
            match &n.name {
                Some(name) => {
                    let _ = writeln!(out, "Name: \"{}\"", escape_text(name.as_bytes()));
                }
                None => out.push_str("Name: (none: the naming context itself)\n"),
            }
        }
    }
    out
}

fn loc_text(out: &mut String, loc: &Corbaloc, key_label: &str) {
    out.push_str("Addresses:\n");
    for (i, a) in loc.addrs.iter().enumerate() {
        match a {
            ObjAddr::Rir => {
                let _ = writeln!(out, "{}. rir (resolve_initial_references)", i + 1);
            }
            ObjAddr::Iiop(a) => {
                let default = if a.explicit_version.is_none() {
                    " (default version)"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "{}. IIOP {} {} {}{default}",
                    i + 1,
                    a.version(),
                    a.host,
                    a.port
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "{key_label}: \"{}\"  ({} bytes)",
        escape_text(&loc.key),
        loc.key.len()
    );
    let _ = writeln!(out, "{key_label} hex: 0x{}", hex(&loc.key));
    let _ = writeln!(out, "{key_label} escaped: {}", escape_key(&loc.key));
}

fn ior_text(out: &mut String, ior: &Ior) {
    if ior.profiles.is_empty() && ior.type_id.is_empty() {
        out.push_str("IOR is a nil object reference.\n");
        return;
    }
    let _ = writeln!(out, "Type ID: \"{}\"", escape_text(ior.type_id.as_bytes()));
    out.push_str("Profiles:\n");
    for (i, p) in ior.profiles.iter().enumerate() {
        let n = i + 1;
        match p {
            TaggedProfile::Iiop(iiop) => iiop_text(out, n, iiop, false),
            TaggedProfile::Other {
                tag: TAG_INTERNET_IOP,
                data,
            } => match IiopProfile::from_body(data) {
                Ok(iiop) => iiop_text(out, n, &iiop, true),
                Err(e) => {
                    let _ = writeln!(out, "{n}. IIOP profile that does not decode: {e}");
                    let _ = writeln!(out, "      ({} bytes) 0x{}", data.len(), hex(data));
                }
            },
            TaggedProfile::MultipleComponents(cs) => {
                let _ = writeln!(out, "{n}. Multiple Component Profile");
                components_text(out, cs);
            }
            TaggedProfile::Other { tag, data } => {
                match profile_tag_name(*tag) {
                    Some(name) => {
                        let _ = writeln!(out, "{n}. {name} profile (tag 0x{tag:x})");
                    }
                    None => {
                        let _ = writeln!(out, "{n}. Unrecognised profile tag: 0x{tag:x}");
                    }
                }
                let _ = writeln!(out, "      ({} bytes) 0x{}", data.len(), hex(data));
            }
        }
        out.push('\n');
    }
}

fn iiop_text(out: &mut String, n: usize, p: &IiopProfile, raw: bool) {
    let _ = writeln!(out, "{n}. IIOP {} {} {}", p.version, p.host, p.port);
    if raw {
        out.push_str("      (kept as received: not in canonical encoding)\n");
    }
    let _ = writeln!(
        out,
        "      object key: \"{}\"  ({} bytes)",
        escape_text(&p.object_key),
        p.object_key.len()
    );
    let _ = writeln!(out, "      object key hex: 0x{}", hex(&p.object_key));
    components_text(out, &p.components);
}

fn components_text(out: &mut String, cs: &[TaggedComponent]) {
    for c in cs {
        match c.to_typed() {
            Ok(TaggedComponent::OrbType(t)) => {
                let vendor = orb_type_name(t).unwrap_or("(unknown)");
                let _ = writeln!(
                    out,
                    "      TAG_ORB_TYPE {vendor} ({})",
                    escape_text(&t.to_be_bytes())
                );
            }
            Ok(TaggedComponent::CodeSets(info)) => {
                let char_conv = conv_names(&info.for_char_data);
                let wchar_conv = conv_names(&info.for_wchar_data);
                let _ = writeln!(
                    out,
                    "      TAG_CODE_SETS char native code set:       {}",
                    cs_name(info.for_char_data.native_code_set.0)
                );
                let _ = writeln!(
                    out,
                    "                    char conversion code sets:  {char_conv}"
                );
                let _ = writeln!(
                    out,
                    "                    wchar native code set:      {}",
                    cs_name(info.for_wchar_data.native_code_set.0)
                );
                let _ = writeln!(
                    out,
                    "                    wchar conversion code sets: {wchar_conv}"
                );
                out.push('\n');
            }
            Ok(TaggedComponent::AlternateIiopAddress { host, port }) => {
                let _ = writeln!(out, "      TAG_ALTERNATE_IIOP_ADDRESS {host} {port}");
            }
            Ok(TaggedComponent::Other { tag, data }) => {
                let _ = match component_tag_name(tag) {
                    Some(name) => {
                        writeln!(out, "      {name} ({} bytes) 0x{}", data.len(), hex(&data))
                    }
                    None => writeln!(
                        out,
                        "      Unknown component tag {tag} (0x{tag:x}) ({} bytes) 0x{}",
                        data.len(),
                        hex(&data)
                    ),
                };
            }
            Err(e) => {
                let _ = writeln!(out, "      Broken component with tag {} ({e})", c.tag());
            }
        }
    }
}

fn cs_name(id: u32) -> String {
    code_set_name(id).map_or_else(|| format!("(0x{id:08x})"), str::to_owned)
}

fn conv_names(c: &CodeSetComponent) -> String {
    c.conversion_code_sets
        .iter()
        .map(|id| cs_name(id.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Printable ASCII as is, backslash doubled, everything else `\xNN`, as
/// catior prints keys.
fn escape_text(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for &c in b {
        match c {
            b'\\' => s.push_str("\\\\"),
            b' '..=b'~' => s.push(c as char),
            _ => {
                let _ = write!(s, "\\x{c:02x}");
            }
        }
    }
    s
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(2 * b.len());
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

// ------------------------------------------------------------------ JSON
//
// The JSON output is these types through serde_json: field order is the
// declaration order, so the output reads the same way as the text form.

/// A machine-readable rendering of a decoded reference; `kind` says which.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum UrlJson {
    /// A stringified IOR.
    Ior {
        /// The nil reference (no type id, no profiles).
        nil: bool,
        /// The repository id.
        type_id: String,
        /// The tagged profiles, in order.
        profiles: Vec<ProfileJson>,
    },
    /// A `corbaloc:` URL.
    Corbaloc(LocJson),
    /// A `corbaname:` URL: a `corbaloc:` plus a stringified name.
    Corbaname {
        /// The naming context's location.
        #[serde(flatten)]
        loc: LocJson,
        /// The name after `#`, unescaped (`null` without one).
        name: Option<String>,
    },
}

/// The location part of a `corbaloc:`/`corbaname:` URL.
#[derive(Serialize)]
pub struct LocJson {
    addresses: Vec<AddrJson>,
    object_key: String,
    object_key_hex: String,
    object_key_escaped: String,
}

/// One address of a `corbaloc:` URL.
#[derive(Serialize)]
#[serde(tag = "protocol", rename_all = "lowercase")]
enum AddrJson {
    Rir,
    Iiop {
        version: String,
        version_explicit: bool,
        host: String,
        port: u16,
    },
}

/// One tagged profile of an IOR.
#[derive(Serialize)]
pub struct ProfileJson {
    tag: u32,
    tag_name: Option<&'static str>,
    #[serde(flatten)]
    body: ProfileBody,
}

#[derive(Serialize)]
#[serde(untagged)]
enum ProfileBody {
    Iiop {
        /// Decoded by the IOR parser (`true`) or from the raw body after
        /// the parser kept it opaque (`false`).
        canonical: bool,
        #[serde(flatten)]
        iiop: IiopJson,
    },
    Components {
        components: Vec<ComponentJson>,
    },
    Malformed {
        error: String,
        data_hex: String,
    },
    Opaque {
        data_hex: String,
    },
}

#[derive(Serialize)]
struct IiopJson {
    iiop_version: String,
    host: String,
    port: u16,
    object_key: String,
    object_key_hex: String,
    endpoints: Vec<EndpointJson>,
    components: Vec<ComponentJson>,
}

#[derive(Serialize)]
struct EndpointJson {
    host: String,
    port: u16,
}

#[derive(Serialize)]
struct ComponentJson {
    tag: u32,
    tag_name: Option<&'static str>,
    #[serde(flatten)]
    body: ComponentBody,
}

#[derive(Serialize)]
#[serde(untagged)]
enum ComponentBody {
    OrbType {
        orb_type: u32,
        orb_type_hex: String,
        vendor: Option<&'static str>,
    },
    CodeSets {
        char: CodeSetJson,
        wchar: CodeSetJson,
    },
    Address {
        host: String,
        port: u16,
    },
    Malformed {
        error: String,
        data_hex: String,
    },
    Opaque {
        data_hex: String,
    },
}

#[derive(Serialize)]
struct CodeSetJson {
    native: u32,
    native_name: Option<&'static str>,
    conversion: Vec<u32>,
    conversion_names: Vec<Option<&'static str>>,
}

/// A machine-readable rendering.
pub fn json(url: &ObjectUrl) -> UrlJson {
    match url {
        ObjectUrl::Ior(ior) => UrlJson::Ior {
            nil: ior.is_nil(),
            type_id: ior.type_id.clone(),
            profiles: ior.profiles.iter().map(profile_json).collect(),
        },
        ObjectUrl::Corbaloc(loc) => UrlJson::Corbaloc(loc_json(loc)),
        ObjectUrl::Corbaname(n) => UrlJson::Corbaname {
            loc: loc_json(&n.loc),
            name: n.name.clone(),
        },
    }
}

fn loc_json(loc: &Corbaloc) -> LocJson {
    LocJson {
        addresses: loc
            .addrs
            .iter()
            .map(|a| match a {
                ObjAddr::Rir => AddrJson::Rir,
                ObjAddr::Iiop(a) => AddrJson::Iiop {
                    version: a.version().to_string(),
                    version_explicit: a.explicit_version.is_some(),
                    host: a.host.clone(),
                    port: a.port,
                },
            })
            .collect(),
        object_key: escape_text(&loc.key),
        object_key_hex: hex(&loc.key),
        object_key_escaped: escape_key(&loc.key),
    }
}

fn profile_json(p: &TaggedProfile) -> ProfileJson {
    let body = match p {
        TaggedProfile::Iiop(iiop) => ProfileBody::Iiop {
            canonical: true,
            iiop: iiop_json(iiop),
        },
        TaggedProfile::Other {
            tag: TAG_INTERNET_IOP,
            data,
        } => match IiopProfile::from_body(data) {
            Ok(iiop) => ProfileBody::Iiop {
                canonical: false,
                iiop: iiop_json(&iiop),
            },
            Err(e) => ProfileBody::Malformed {
                error: e.to_string(),
                data_hex: hex(data),
            },
        },
        TaggedProfile::MultipleComponents(cs) => ProfileBody::Components {
            components: components_json(cs),
        },
        TaggedProfile::Other { data, .. } => ProfileBody::Opaque {
            data_hex: hex(data),
        },
    };
    ProfileJson {
        tag: p.tag(),
        tag_name: profile_tag_name(p.tag()),
        body,
    }
}

fn iiop_json(p: &IiopProfile) -> IiopJson {
    IiopJson {
        iiop_version: p.version.to_string(),
        host: p.host.clone(),
        port: p.port,
        object_key: escape_text(&p.object_key),
        object_key_hex: hex(&p.object_key),
        endpoints: p
            .endpoints()
            .into_iter()
            .map(|e| EndpointJson {
                host: e.host,
                port: e.port,
            })
            .collect(),
        components: components_json(&p.components),
    }
}

fn codeset_json(c: &CodeSetComponent) -> CodeSetJson {
    CodeSetJson {
        native: c.native_code_set.0,
        native_name: code_set_name(c.native_code_set.0),
        conversion: c.conversion_code_sets.iter().map(|id| id.0).collect(),
        conversion_names: c
            .conversion_code_sets
            .iter()
            .map(|id| code_set_name(id.0))
            .collect(),
    }
}

fn components_json(cs: &[TaggedComponent]) -> Vec<ComponentJson> {
    cs.iter()
        .map(|c| {
            let body = match c.to_typed() {
                Ok(TaggedComponent::OrbType(t)) => ComponentBody::OrbType {
                    orb_type: t,
                    orb_type_hex: format!("{t:#010x}"),
                    vendor: orb_type_name(t),
                },
                Ok(TaggedComponent::CodeSets(info)) => ComponentBody::CodeSets {
                    char: codeset_json(&info.for_char_data),
                    wchar: codeset_json(&info.for_wchar_data),
                },
                Ok(TaggedComponent::AlternateIiopAddress { host, port }) => {
                    ComponentBody::Address { host, port }
                }
                Ok(TaggedComponent::Other { data, .. }) => ComponentBody::Opaque {
                    data_hex: hex(&data),
                },
                Err(e) => ComponentBody::Malformed {
                    error: e.to_string(),
                    data_hex: match c {
                        TaggedComponent::Other { data, .. } => hex(data),
                        _ => String::new(),
                    },
                },
            };
            ComponentJson {
                tag: c.tag(),
                tag_name: component_tag_name(c.tag()),
                body,
            }
        })
        .collect()
}
