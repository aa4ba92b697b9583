//! IDL identifiers to Rust identifiers.
//!
//! IDL names keep their words but follow Rust's case conventions, so the
//! generated code passes `non_camel_case_types`/`non_snake_case` without
//! blanket `allow`s: types and variants `UpperCamelCase`, modules,
//! functions and fields `snake_case`, constants `SCREAMING_SNAKE_CASE`.
//! Rust keywords become raw identifiers (`r#type`), or get a trailing `_`
//! where Rust has no raw form (`self_`, `Self_`, `crate_`, `super_`).

/// Splits an identifier into words: at `_`, at a lower-to-upper change
/// (`BinStruct` -> `Bin`, `Struct`), before the last capital of a run of
/// capitals followed by a lower-case letter (`IORTable` -> `IOR`,
/// `Table`), and between letters and digits only where a digit run ends
/// (`utf8String` -> `utf8`, `String`).
pub fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if !cur.is_empty() && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `UpperCamelCase`.
pub fn camel(name: &str) -> String {
    let mut s = String::new();
    for w in words(name) {
        let mut cs = w.chars();
        if let Some(f) = cs.next() {
            s.extend(f.to_uppercase());
            s.push_str(&cs.as_str().to_lowercase());
        }
    }
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'X');
    }
    type_ident(s)
}

/// `snake_case`.
pub fn snake(name: &str) -> String {
    let s = words(name)
        .iter()
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join("_");
    let s = if s.is_empty() { "x".to_string() } else { s };
    ident(s)
}

/// The Rust name of an operation's parameter: [`snake`], with `_`
/// appended when that would be a name the generated stub and skeleton
/// bodies give their own locals and closure arguments (the request's
/// writer `w` and reader `r`, the ORB, the servant...), which the
/// parameter would shadow or be shadowed by.
pub fn param(name: &str) -> String {
    let s = snake(name);
    if GENERATED_LOCALS.contains(&s.as_str()) {
        format!("{s}_")
    } else {
        s
    }
}

/// The Rust names of an operation's parameters, in order: [`param`] of
/// each IDL name, with `_` appended while that is the name of an earlier
/// parameter (IDL `fooBar` and `foo_bar`, or `w` and `w_`, are distinct
/// names that map to one Rust name).
pub fn params<'a>(idl: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in idl {
        let mut n = param(name);
        while out.iter().any(|o| bare(o) == bare(&n)) {
            n = format!("{}_", bare(&n));
        }
        out.push(n);
    }
    out
}

/// The locals a stub binds the values of `out` and `inout` parameters
/// to: for each of `params` (Rust parameter names, from [`param`], each
/// with whether it needs a local), `x_out` for parameter `x`, with `_`
/// appended while that is a parameter's name (`in long x_out` beside
/// `out long x`), another such local or a name the bodies use.
pub fn out_locals(params: &[(String, bool)]) -> Vec<Option<String>> {
    let mut taken: Vec<String> = params.iter().map(|(n, _)| bare(n).to_string()).collect();
    params
        .iter()
        .map(|(n, wants)| {
            wants.then(|| {
                let mut v = format!("{}_out", bare(n).trim_end_matches('_'));
                while taken.contains(&v) || GENERATED_LOCALS.contains(&v.as_str()) {
                    v.push('_');
                }
                taken.push(v.clone());
                v
            })
        })
        .collect()
}

/// The names generated operation bodies use for themselves.
const GENERATED_LOCALS: &[&str] = &[
    "w", "r", "v", "e", "orb", "orb_ctx", "req", "servant", "ret", "io", "ctx", "id", "body",
    "tail", "args", "obj", "i",
];

/// `SCREAMING_SNAKE_CASE`.
pub fn screaming(name: &str) -> String {
    let s = words(name)
        .iter()
        .map(|w| w.to_uppercase())
        .collect::<Vec<_>>()
        .join("_");
    if s.is_empty() {
        "X".to_string()
    } else {
        s
    }
}

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if",
    "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static",
    "struct", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized",
    "virtual", "yield", "try", "gen",
];

/// Keywords that cannot be raw identifiers.
const NO_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

fn ident(s: String) -> String {
    if NO_RAW.contains(&s.as_str()) {
        format!("{s}_")
    } else if KEYWORDS.contains(&s.as_str()) {
        format!("r#{s}")
    } else {
        s
    }
}

fn type_ident(s: String) -> String {
    // `Self` is the only camel-case keyword.
    ident(s)
}

/// The name with any `r#` prefix removed (for building derived names).
pub fn bare(s: &str) -> &str {
    s.strip_prefix("r#").unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases() {
        assert_eq!(camel("BinStruct"), "BinStruct");
        assert_eq!(camel("ttcp_sequence"), "TtcpSequence");
        assert_eq!(camel("Fixed_Struct"), "FixedStruct");
        assert_eq!(camel("IORTable"), "IorTable");
        assert_eq!(camel("nobject"), "Nobject");
        assert_eq!(camel("Self"), "Self_");
        assert_eq!(snake("CosNaming"), "cos_naming");
        assert_eq!(snake("CORBA"), "corba");
        assert_eq!(snake("sendShortSeq"), "send_short_seq");
        assert_eq!(snake("sendNoParams_2way"), "send_no_params_2way");
        assert_eq!(snake("type"), "r#type");
        assert_eq!(snake("self"), "self_");
        assert_eq!(snake("utf8String"), "utf8_string");
        assert_eq!(screaming("maxLen"), "MAX_LEN");
        assert_eq!(screaming("MAX_LEN"), "MAX_LEN");
    }

    #[test]
    fn params_are_unique() {
        assert_eq!(
            params(["fooBar", "foo_bar", "w", "w_", "type", "type_", "x"]),
            ["foo_bar", "foo_bar_", "w_", "w__", "r#type", "type_", "x"]
        );
    }

    #[test]
    fn out_locals_avoid_every_parameter() {
        let p = |v: &[(&str, bool)]| -> Vec<(String, bool)> {
            v.iter().map(|(n, o)| (n.to_string(), *o)).collect()
        };
        // `out x` beside `in x_out`, and beside `inout x_out` (whose own
        // local is `x_out_out`): no local is a parameter or another local.
        assert_eq!(
            out_locals(&p(&[("x", true), ("x_out", false)])),
            [Some("x_out_".to_string()), None]
        );
        assert_eq!(
            out_locals(&p(&[("x", true), ("x_out", true), ("x_out_out", false)])),
            [
                Some("x_out_".to_string()),
                Some("x_out_out_".to_string()),
                None
            ]
        );
        // A renamed parameter (`w` is `w_`) keeps the plain form.
        assert_eq!(out_locals(&p(&[("w_", true)])), [Some("w_out".to_string())]);
        assert_eq!(
            out_locals(&p(&[("r#type", true)])),
            [Some("type_out".to_string())]
        );
    }
}
