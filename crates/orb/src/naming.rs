//! The bit of a CosNaming client that `corbaname:` needs: parsing a
//! stringified name and calling `NamingContext::resolve`. The stringified
//! form's escaping rules (the Interoperable Naming Service's) live here
//! in both directions, so `peregrine-naming`'s `to_name`/`to_string` and
//! `corbaname:` read and write names the same way.

use peregrine_giop::system_exception::minor;

use crate::error::raise;
use crate::runtime::{Cause, Phase};
use crate::runtime::{CompletionStatus, ObjectRef, SystemException, SystemExceptionKind as K};

/// A `CosNaming::NameComponent`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NameComponent {
    /// `id`.
    pub id: String,
    /// `kind`.
    pub kind: String,
}

/// Parses a stringified name (`a.b/c`, with `\` escaping `/`, `.`, `\`),
/// per CosNaming's `to_name`.
pub fn parse_name(s: &str) -> Option<Vec<NameComponent>> {
    let mut out = Vec::new();
    let mut cur = NameComponent::default();
    let mut in_kind = false;
    let mut saw_dot = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let n = chars.next()?;
                if in_kind {
                    cur.kind.push(n)
                } else {
                    cur.id.push(n)
                }
            }
            '/' => {
                if cur.id.is_empty() && cur.kind.is_empty() && !saw_dot {
                    return None;
                }
                out.push(std::mem::take(&mut cur));
                in_kind = false;
                saw_dot = false;
            }
            '.' if !in_kind => {
                in_kind = true;
                saw_dot = true;
            }
            '.' => return None,
            c => {
                if in_kind {
                    cur.kind.push(c)
                } else {
                    cur.id.push(c)
                }
            }
        }
    }
    if cur.id.is_empty() && cur.kind.is_empty() && !saw_dot {
        return None;
    }
    out.push(cur);
    Some(out)
}

/// The stringified form of a name given as `(id, kind)` pairs, per
/// CosNaming's `to_string`: components joined by `/`, `id.kind` (only
/// `id` when the kind is empty, `.kind` when the id is empty, `.` when
/// both are), with `/`, `.` and `\` escaped by `\`. [`parse_name`]
/// reads it back; an empty name gives the empty string, which is not a
/// valid stringified name.
pub fn format_name<'a>(components: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    fn escaped(out: &mut String, s: &str) {
        for c in s.chars() {
            if matches!(c, '/' | '.' | '\\') {
                out.push('\\');
            }
            out.push(c);
        }
    }
    let mut out = String::new();
    for (i, (id, kind)) in components.into_iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        escaped(&mut out, id);
        if !kind.is_empty() || id.is_empty() {
            out.push('.');
            escaped(&mut out, kind);
        }
    }
    out
}

/// `NamingContext::resolve` of a stringified name.
pub fn resolve_str(ctx: &ObjectRef, name: &str) -> Result<ObjectRef, SystemException> {
    let n = parse_name(name).ok_or_else(|| {
        raise(
            K::BadParam,
            minor::BAD_PARAM_BAD_URI_OTHER,
            CompletionStatus::No,
            || {
                Cause::new(Phase::Resolve)
                    .with_detail(format_args!("malformed stringified name {name:?}"))
            },
        )
    })?;
    resolve(ctx, &n)
}

/// `NamingContext::resolve`. Naming exceptions (`NotFound`,
/// `CannotProceed`, `InvalidName`) come back as `BAD_PARAM` minor 10
/// (what `string_to_object` of a `corbaname:` raises).
pub fn resolve(ctx: &ObjectRef, name: &[NameComponent]) -> Result<ObjectRef, SystemException> {
    let orb = ctx.orb().clone();
    let r: Result<Option<ObjectRef>, SystemException> = ctx.invoke(
        "resolve",
        |w| {
            w.write_len(name.len())?;
            for c in name {
                w.write_string(&c.id)?;
                w.write_string(&c.kind)?;
            }
            Ok(())
        },
        |r| ObjectRef::decode(r, &orb),
        |id, _| {
            Some(Ok(raise(
                K::BadParam,
                minor::BAD_PARAM_BAD_URI_OTHER,
                CompletionStatus::Yes,
                || {
                    Cause::new(Phase::Resolve)
                        .with_detail(format_args!("naming service raised {id}"))
                },
            )))
        },
    );
    r?.ok_or_else(|| {
        raise(
            K::BadParam,
            minor::BAD_PARAM_BAD_URI_OTHER,
            CompletionStatus::Yes,
            || {
                Cause::new(Phase::Resolve)
                    .with_detail(format_args!("naming service resolved the name to nil"))
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let n = parse_name("a.b/c/d\\/e.").unwrap();
        assert_eq!(n.len(), 3);
        assert_eq!((n[0].id.as_str(), n[0].kind.as_str()), ("a", "b"));
        assert_eq!((n[1].id.as_str(), n[1].kind.as_str()), ("c", ""));
        assert_eq!((n[2].id.as_str(), n[2].kind.as_str()), ("d/e", ""));
        assert!(parse_name("a//b").is_none());
        assert!(parse_name("").is_none());
    }

    #[test]
    fn formatted_names_parse_back() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("a", "b"), ("c", "")], "a.b/c"),
            (&[("", "")], "."),
            (&[("", "k")], ".k"),
            (&[("d/e", ""), ("x.y", "z\\")], "d\\/e/x\\.y.z\\\\"),
        ];
        for (pairs, text) in cases {
            assert_eq!(format_name(pairs.iter().copied()), *text);
            let back = parse_name(text).unwrap();
            let back: Vec<(&str, &str)> = back
                .iter()
                .map(|c| (c.id.as_str(), c.kind.as_str()))
                .collect();
            assert_eq!(back, *pairs, "{text}");
        }
        assert_eq!(format_name([]), "");
    }
}
