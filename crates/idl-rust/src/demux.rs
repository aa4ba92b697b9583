//! O(1) operation demultiplexing (DESIGN.md rule 6, seed 002).
//!
//! The generated function switches on the operation name's length, then
//! on the byte that best splits the remaining candidates (chosen at
//! generation time), recursively, until one candidate is left; only then
//! does it compare the whole name once. The cost is bounded by the name
//! length, never by the number of operations: no linear chain of string
//! compares. `match` on a `u8` compiles to a jump table or a short binary
//! search.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The body of `fn(op: &[u8]) -> Option<u32>` returning the index of the
/// matching name in `names`.
pub fn demux_body(names: &[&str]) -> String {
    let mut by_len: BTreeMap<usize, Vec<(usize, &[u8])>> = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        by_len.entry(n.len()).or_default().push((i, n.as_bytes()));
    }
    if by_len.is_empty() {
        return "let _ = op; None".to_string();
    }
    let mut s = String::from("match op.len() {\n");
    for (len, group) in &by_len {
        let _ = writeln!(s, "{len} => {},", tree(group));
    }
    s.push_str("_ => None,\n}");
    s
}

fn tree(group: &[(usize, &[u8])]) -> String {
    if let [(i, name)] = group {
        return format!(
            "if op == {} {{ Some({i}) }} else {{ None }}",
            byte_str(name)
        );
    }
    let len = group[0].1.len();
    // The position with the most distinct bytes splits best; names in a
    // group are distinct and of equal length, so some position differs
    // and every split makes progress.
    let pos = (0..len)
        .max_by_key(|&p| {
            let mut seen: Vec<u8> = group.iter().map(|(_, n)| n[p]).collect();
            seen.sort_unstable();
            seen.dedup();
            // Prefer earlier positions on ties (max_by_key keeps the last).
            (seen.len(), std::cmp::Reverse(p))
        })
        .unwrap_or(0);
    let mut sub: BTreeMap<u8, Vec<(usize, &[u8])>> = BTreeMap::new();
    for &(i, n) in group {
        sub.entry(n[pos]).or_default().push((i, n));
    }
    let mut s = format!("match op[{pos}] {{\n");
    for (b, g) in &sub {
        let _ = writeln!(s, "{} => {},", byte_lit(*b), tree(g));
    }
    s.push_str("_ => None,\n}");
    s
}

fn byte_lit(b: u8) -> String {
    if b.is_ascii_alphanumeric() || b == b'_' {
        format!("b'{}'", b as char)
    } else {
        format!("{b}")
    }
}

fn byte_str(n: &[u8]) -> String {
    let mut s = String::from("b\"");
    for &b in n {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' {
            s.push(b as char);
        } else {
            let _ = write!(s, "\\x{b:02x}");
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let b = demux_body(&["sync", "sendShortSeq", "sendLongSeq_", "send"]);
        assert!(b.starts_with("match op.len()"));
        assert!(b.contains("if op == b\"sync\""));
        // "sync" and "send" differ first at position 1.
        assert!(b.contains("match op[1]"));
        assert_eq!(demux_body(&[]), "let _ = op; None");
    }
}
