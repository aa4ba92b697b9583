//! Human-readable and JSON renderings of decoded object references.

use std::fmt::Write;

use peregrine_giop::component::{code_set_name, component_tag_name, orb_type_name};
use peregrine_giop::corbaloc::{escape_key, ObjAddr};
use peregrine_giop::ior::{profile_tag_name, TAG_INTERNET_IOP};
use peregrine_giop::{
    CodeSetComponent, Corbaloc, IiopProfile, Ior, ObjectUrl, TaggedComponent, TaggedProfile,
};

use crate::json::Json;

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

/// A machine-readable rendering.
pub fn json(url: &ObjectUrl) -> Json {
    match url {
        ObjectUrl::Ior(ior) => ior_json(ior),
        ObjectUrl::Corbaloc(loc) => loc_json(Json::obj().with("kind", "corbaloc"), loc),
        ObjectUrl::Corbaname(n) => {
            loc_json(Json::obj().with("kind", "corbaname"), &n.loc).with("name", n.name.clone())
        }
    }
}

fn loc_json(j: Json, loc: &Corbaloc) -> Json {
    let addrs = loc
        .addrs
        .iter()
        .map(|a| match a {
            ObjAddr::Rir => Json::obj().with("protocol", "rir"),
            ObjAddr::Iiop(a) => Json::obj()
                .with("protocol", "iiop")
                .with("version", a.version().to_string())
                .with("version_explicit", a.explicit_version.is_some())
                .with("host", a.host.as_str())
                .with("port", a.port),
        })
        .collect::<Vec<_>>();
    j.with("addresses", addrs)
        .with("object_key", escape_text(&loc.key))
        .with("object_key_hex", hex(&loc.key))
        .with("object_key_escaped", escape_key(&loc.key))
}

fn ior_json(ior: &Ior) -> Json {
    let profiles = ior
        .profiles
        .iter()
        .map(|p| {
            let j = Json::obj()
                .with("tag", p.tag())
                .with("tag_name", profile_tag_name(p.tag()));
            match p {
                TaggedProfile::Iiop(iiop) => iiop_json(j.with("canonical", true), iiop),
                TaggedProfile::Other {
                    tag: TAG_INTERNET_IOP,
                    data,
                } => match IiopProfile::from_body(data) {
                    Ok(iiop) => iiop_json(j.with("canonical", false), &iiop),
                    Err(e) => j.with("error", e.to_string()).with("data_hex", hex(data)),
                },
                TaggedProfile::MultipleComponents(cs) => j.with("components", components_json(cs)),
                TaggedProfile::Other { data, .. } => j.with("data_hex", hex(data)),
            }
        })
        .collect::<Vec<_>>();
    Json::obj()
        .with("kind", "ior")
        .with("nil", ior.is_nil())
        .with("type_id", ior.type_id.as_str())
        .with("profiles", profiles)
}

fn iiop_json(j: Json, p: &IiopProfile) -> Json {
    let endpoints = p
        .endpoints()
        .into_iter()
        .map(|e| Json::obj().with("host", e.host).with("port", e.port))
        .collect::<Vec<_>>();
    j.with("iiop_version", p.version.to_string())
        .with("host", p.host.as_str())
        .with("port", p.port)
        .with("object_key", escape_text(&p.object_key))
        .with("object_key_hex", hex(&p.object_key))
        .with("endpoints", endpoints)
        .with("components", components_json(&p.components))
}

fn codeset_json(c: &CodeSetComponent) -> Json {
    Json::obj()
        .with("native", c.native_code_set.0)
        .with("native_name", code_set_name(c.native_code_set.0))
        .with(
            "conversion",
            c.conversion_code_sets
                .iter()
                .map(|id| Json::from(id.0))
                .collect::<Vec<_>>(),
        )
        .with(
            "conversion_names",
            c.conversion_code_sets
                .iter()
                .map(|id| Json::from(code_set_name(id.0)))
                .collect::<Vec<_>>(),
        )
}

fn components_json(cs: &[TaggedComponent]) -> Vec<Json> {
    cs.iter()
        .map(|c| {
            let j = Json::obj()
                .with("tag", c.tag())
                .with("tag_name", component_tag_name(c.tag()));
            match c.to_typed() {
                Ok(TaggedComponent::OrbType(t)) => j
                    .with("orb_type", t)
                    .with("orb_type_hex", format!("{t:#010x}"))
                    .with("vendor", orb_type_name(t)),
                Ok(TaggedComponent::CodeSets(info)) => j
                    .with("char", codeset_json(&info.for_char_data))
                    .with("wchar", codeset_json(&info.for_wchar_data)),
                Ok(TaggedComponent::AlternateIiopAddress { host, port }) => {
                    j.with("host", host).with("port", port)
                }
                Ok(TaggedComponent::Other { data, .. }) => j.with("data_hex", hex(&data)),
                Err(e) => {
                    let data = match c {
                        TaggedComponent::Other { data, .. } => hex(data),
                        _ => String::new(),
                    };
                    j.with("error", e.to_string()).with("data_hex", data)
                }
            }
        })
        .collect()
}
