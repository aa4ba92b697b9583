//! Plain-data analysis (DESIGN.md rule 8): which structs have a `repr(C)`
//! layout equal to their CDR layout, and the code that proves and uses it.

use std::fmt::Write as _;

/// A member type of a plain-data candidate, aliases resolved.
#[derive(Clone, Debug)]
pub enum PType {
    /// An integer, float, `char` or `octet` of this many bytes.
    Prim {
        /// Size (= alignment) in bytes.
        size: usize,
        /// `f32`/`f64` (swapped through `to_bits`).
        float: bool,
    },
    /// `[T; n]`.
    Array(Box<PType>, usize),
    /// A plain struct.
    Struct(std::rc::Rc<PlainInfo>),
}

impl PType {
    fn size(&self) -> usize {
        match self {
            PType::Prim { size, .. } => *size,
            PType::Array(t, n) => t.size() * n,
            PType::Struct(i) => i.size,
        }
    }
    fn align(&self) -> usize {
        match self {
            PType::Prim { size, .. } => *size,
            PType::Array(t, _) => t.align(),
            PType::Struct(i) => i.align,
        }
    }
}

/// One run of bytes of a value: a primitive, or a whole innermost octet
/// array.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// Offset from the start of the struct.
    pub off: usize,
    /// Length in bytes.
    pub size: usize,
    /// Access path relative to the value, e.g. `.s`, `.pad`, `.a[2].x`.
    pub expr: String,
    /// An octet array (copied as a slice) rather than a primitive.
    pub byte_run: bool,
}

/// Layout facts of a plain struct.
#[derive(Clone, Debug)]
pub struct PlainInfo {
    /// `size_of` = CDR size.
    pub size: usize,
    /// Largest member alignment.
    pub align: usize,
    /// All leaves in offset order.
    pub leaves: Vec<Leaf>,
    /// `(field, offset)` for the compile-time asserts.
    pub offsets: Vec<(String, usize)>,
    /// Byte ranges belonging to no member.
    pub padding: Vec<(usize, usize)>,
    /// Every array has at most 32 elements, so `Default` derives.
    pub default_ok: bool,
    /// Some member is 8 bytes wide (layout differs on i686, see gen).
    pub has8: bool,
}

/// Leaves beyond this make a struct non-plain (keeps analysis and the
/// generated code small; such structs still marshal member-wise).
const MAX_LEAVES: usize = 4096;

fn align_up(x: usize, a: usize) -> usize {
    x.div_ceil(a) * a
}

fn leaves_of(t: &PType, off: usize, expr: &str, out: &mut Vec<Leaf>) {
    if out.len() > MAX_LEAVES {
        return;
    }
    match t {
        PType::Prim { size, .. } => out.push(Leaf {
            off,
            size: *size,
            expr: expr.to_string(),
            byte_run: false,
        }),
        PType::Array(e, n) if matches!(**e, PType::Prim { size: 1, .. }) => out.push(Leaf {
            off,
            size: *n,
            expr: expr.to_string(),
            byte_run: true,
        }),
        PType::Array(e, n) => {
            for i in 0..*n {
                leaves_of(e, off + i * e.size(), &format!("{expr}[{i}]"), out);
            }
        }
        PType::Struct(info) => {
            for l in &info.leaves {
                out.push(Leaf {
                    off: off + l.off,
                    size: l.size,
                    expr: format!("{expr}{}", l.expr),
                    byte_run: l.byte_run,
                });
            }
        }
    }
}

fn default_ok(t: &PType) -> bool {
    match t {
        PType::Prim { .. } => true,
        PType::Array(e, n) => *n <= 32 && default_ok(e),
        PType::Struct(i) => i.default_ok,
    }
}

/// Computes the `repr(C)` layout of `members` and returns it if it equals
/// the CDR layout: every primitive at the offset CDR alignment gives it
/// when the struct starts 8-aligned, and no trailing padding (so elements
/// of a sequence sit `size` apart in both representations).
pub fn analyze(members: &[(String, PType)]) -> Option<PlainInfo> {
    let mut off = 0;
    let mut align = 1;
    let mut offsets = Vec::new();
    let mut leaves = Vec::new();
    for (name, t) in members {
        off = align_up(off, t.align());
        align = align.max(t.align());
        offsets.push((name.clone(), off));
        leaves_of(t, off, &format!(".{name}"), &mut leaves);
        off += t.size();
    }
    if leaves.len() > MAX_LEAVES || members.is_empty() {
        return None;
    }
    let size = align_up(off, align);
    // The CDR encoder aligns each primitive to its own size, relative to
    // an 8-aligned start; nested structs are not aligned as a whole.
    let mut cursor = 0;
    for l in &leaves {
        cursor = align_up(cursor, if l.byte_run { 1 } else { l.size });
        if cursor != l.off {
            return None;
        }
        cursor += l.size;
    }
    if cursor != size {
        return None;
    }
    let mut padding = Vec::new();
    let mut at = 0;
    for l in &leaves {
        if l.off > at {
            padding.push((at, l.off));
        }
        at = l.off + l.size;
    }
    Some(PlainInfo {
        size,
        align,
        has8: leaves.iter().any(|l| !l.byte_run && l.size == 8),
        default_ok: members.iter().all(|(_, t)| default_ok(t)),
        leaves,
        offsets,
        padding,
    })
}

/// Code of `swap_members` for a member of type `t` at place `place`.
pub fn swap_code(t: &PType, place: &str, cdr: &str, out: &mut String) {
    match t {
        PType::Prim { size: 1, .. } => {}
        PType::Prim { float: true, size } => {
            let f = if *size == 4 { "f32" } else { "f64" };
            let val = paren(place);
            let _ = writeln!(
                out,
                "{place} = {f}::from_bits({val}.to_bits().swap_bytes());"
            );
        }
        PType::Prim { .. } => {
            let _ = writeln!(out, "{place} = {}.swap_bytes();", paren(place));
        }
        PType::Array(e, _) => {
            if needs_swap(e) {
                let mut inner = String::new();
                swap_code(e, "*v", cdr, &mut inner);
                let it = place.strip_prefix('*').unwrap_or(place);
                let _ = writeln!(out, "for v in {it}.iter_mut() {{ {inner} }}");
            }
        }
        PType::Struct(_) => {
            let p = place.strip_prefix('*').unwrap_or(place);
            let r = if place.starts_with('*') {
                p.to_string()
            } else {
                format!("&mut {p}")
            };
            let _ = writeln!(out, "{cdr}::PlainData::swap_members({r});");
        }
    }
}

/// `*v` needs parentheses as a method receiver.
fn paren(place: &str) -> String {
    if place.starts_with('*') {
        format!("({place})")
    } else {
        place.to_string()
    }
}

fn needs_swap(t: &PType) -> bool {
    match t {
        PType::Prim { size, .. } => *size > 1,
        PType::Array(e, _) => needs_swap(e),
        PType::Struct(i) => i.leaves.iter().any(|l| !l.byte_run && l.size > 1),
    }
}

/// Largest struct whose `write_native` is generated word by word; larger
/// ones (and those without padding) use the trait's default, a copy of
/// the whole value, which is as good there.
pub const MAX_WORDWISE: usize = 256;

/// Body of `write_native`: each 8-byte word of the element is assembled
/// from its members (padding zeroed) and stored once. When the element is
/// a whole number of words, all words are stored as one `[u64; N]`: a
/// word holding a single octet and padding would otherwise be stored byte
/// by byte, and the single array store lets the compiler use vector
/// stores (BinStruct encode went from ~0.58 to ~0.8-1.0 of memcpy, see
/// docs/PERFORMANCE.md).
pub fn write_native_body(info: &PlainInfo) -> String {
    let mut s = String::new();
    let mut stores = String::new();
    let mut words: Vec<String> = Vec::new();
    let mut c = 0;
    let mut k = 0;
    while c < info.size {
        let len = 8.min(info.size - c);
        let inside: Vec<&Leaf> = info
            .leaves
            .iter()
            .filter(|l| l.off < c + len && l.off + l.size > c)
            .collect();
        // A word that is exactly one primitive or one whole octet array.
        if let [l] = inside.as_slice() {
            if l.off == c && l.size == len {
                let val = if l.byte_run {
                    format!("self{}", l.expr)
                } else if len == 1 {
                    format!("[self{}]", l.expr)
                } else {
                    format!("self{}.to_ne_bytes()", l.expr)
                };
                let _ = writeln!(
                    stores,
                    "elem.add({c}).cast::<[u8; {len}]>().write_unaligned({val});"
                );
                words.push(format!("u64::from_ne_bytes({val})"));
                c += len;
                continue;
            }
        }
        let _ = writeln!(s, "let mut w{k} = [0u8; {len}];");
        for l in inside {
            let a = l.off.max(c);
            let b = (l.off + l.size).min(c + len);
            let (da, db) = (a - c, b - c);
            if l.byte_run {
                let (sa, sb) = (a - l.off, b - l.off);
                if sb - sa == 1 {
                    let _ = writeln!(s, "w{k}[{da}] = self{}[{sa}];", l.expr);
                } else {
                    let _ = writeln!(
                        s,
                        "w{k}[{da}..{db}].copy_from_slice(&self{}[{sa}..{sb}]);",
                        l.expr
                    );
                }
            } else if l.size == 1 {
                let _ = writeln!(s, "w{k}[{da}] = self{};", l.expr);
            } else {
                let _ = writeln!(
                    s,
                    "w{k}[{da}..{db}].copy_from_slice(&self{}.to_ne_bytes());",
                    l.expr
                );
            }
        }
        let _ = writeln!(
            stores,
            "elem.add({c}).cast::<[u8; {len}]>().write_unaligned(w{k});"
        );
        words.push(format!("u64::from_ne_bytes(w{k})"));
        k += 1;
        c += len;
    }
    let stores = if info.size % 8 == 0 {
        format!(
            "elem.cast::<[u64; {}]>().write_unaligned([{}]);\n",
            words.len(),
            words.join(", ")
        )
    } else {
        stores.replace("elem.add(0).", "elem.")
    };
    let _ = write!(
        s,
        "// SAFETY: the caller passes {} writable bytes; every store is inside them.\nunsafe {{\n{stores}}}",
        info.size
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(size: usize) -> PType {
        PType::Prim { size, float: false }
    }

    #[test]
    fn binstruct_is_plain() {
        let m = vec![
            ("s".to_string(), p(2)),
            ("c".to_string(), p(1)),
            ("l".to_string(), p(4)),
            ("o".to_string(), p(1)),
            (
                "d".to_string(),
                PType::Prim {
                    size: 8,
                    float: true,
                },
            ),
            ("pad".to_string(), PType::Array(Box::new(p(1)), 8)),
        ];
        let i = analyze(&m).unwrap();
        assert_eq!(i.size, 32);
        assert_eq!(i.align, 8);
        assert_eq!(i.padding, vec![(3, 4), (9, 16)]);
        let offs: Vec<usize> = i.offsets.iter().map(|x| x.1).collect();
        assert_eq!(offs, vec![0, 2, 4, 8, 16, 24]);
    }

    #[test]
    fn trailing_padding_is_not_plain() {
        let m = vec![("d".to_string(), p(8)), ("o".to_string(), p(1))];
        assert!(analyze(&m).is_none());
    }

    #[test]
    fn nested_alignment_mismatch_is_not_plain() {
        // { octet a; double b; } is plain: a@0, b@8 in both.
        let inner = analyze(&[("a".into(), p(1)), ("b".into(), p(8))]).unwrap();
        assert_eq!((inner.size, inner.padding.clone()), (16, vec![(1, 8)]));
        // Nested after an octet: Rust puts the struct at 8 (a@8, b@16),
        // CDR puts a@1 and b@8.
        let outer = analyze(&[
            ("x".into(), p(1)),
            ("i".into(), PType::Struct(std::rc::Rc::new(inner))),
        ]);
        assert!(outer.is_none());
    }
}
