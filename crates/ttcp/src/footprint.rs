//! Code sizes read from the running binary (T6, seed 004 IV-D.5.b): the
//! ELF symbol table of `std::env::current_exe()`, parsed with the
//! `object` crate, and on x86-64 a call graph of direct calls
//! (`call`/`jmp rel32` whose target is the start of a function symbol).
//!
//! The size of a stub or skeleton is its entry point (generated
//! `#[inline(never)]` in both forms) plus the functions it calls that are
//! specific to it: reachable from the entry, and not called — directly or
//! through other shared functions — from anywhere else in the binary. A
//! compiled stub thus carries its own monomorphized copy of the ORB's
//! invocation path (its closures are type parameters); an interpreted
//! one calls the shared engine, which is counted once, with the per-type
//! marshaling, as the form's helpers.

use std::collections::{HashMap, HashSet};
use std::io;

use object::{Architecture, Object, ObjectSection, ObjectSymbol, SymbolKind};

/// A function symbol.
#[derive(Debug, Clone)]
pub struct Func {
    /// Demangled name without the hash.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
}

/// The functions of a binary and the direct calls between them.
#[derive(Debug, Default)]
pub struct Binary {
    /// Function symbols, one per address.
    pub funcs: Vec<Func>,
    /// Callees of each function (indices into `funcs`).
    pub calls: Vec<Vec<usize>>,
    /// Callers of each function.
    pub callers: Vec<Vec<usize>>,
    /// Whether the call graph was read (x86-64 only).
    pub has_calls: bool,
}

impl Binary {
    /// Reads the running executable.
    pub fn current() -> io::Result<Binary> {
        let path = std::env::current_exe()?;
        let data = std::fs::read(&path)?;
        Binary::parse(&data)
    }

    /// Parses an ELF image.
    pub fn parse(data: &[u8]) -> io::Result<Binary> {
        let file = object::File::parse(data).map_err(io::Error::other)?;
        let mut by_addr: HashMap<u64, usize> = HashMap::new();
        let mut funcs = Vec::new();
        let mut bodies: Vec<Option<(usize, u64)>> = Vec::new();
        let mut sections: HashMap<usize, (u64, &[u8])> = HashMap::new();
        for sym in file.symbols() {
            if sym.kind() != SymbolKind::Text || sym.size() == 0 {
                continue;
            }
            if by_addr.contains_key(&sym.address()) {
                continue;
            }
            let Ok(raw) = sym.name() else { continue };
            let name = format!("{:#}", rustc_demangle::demangle(raw));
            let body = sym.section_index().and_then(|i| {
                if let std::collections::hash_map::Entry::Vacant(e) = sections.entry(i.0) {
                    let s = file.section_by_index(i).ok()?;
                    e.insert((s.address(), s.data().ok()?));
                }
                Some((i.0, sym.address()))
            });
            by_addr.insert(sym.address(), funcs.len());
            funcs.push(Func {
                name,
                size: sym.size(),
            });
            bodies.push(body);
        }
        let has_calls = file.architecture() == Architecture::X86_64;
        let mut calls = vec![Vec::new(); funcs.len()];
        if has_calls {
            for (i, f) in funcs.iter().enumerate() {
                let Some((sec, addr)) = bodies[i] else {
                    continue;
                };
                let Some(&(base, bytes)) = sections.get(&sec) else {
                    continue;
                };
                let start = (addr - base) as usize;
                let end = (start + f.size as usize).min(bytes.len());
                let code = &bytes[start.min(end)..end];
                let mut out = HashSet::new();
                for at in 0..code.len().saturating_sub(4) {
                    if code[at] != 0xe8 && code[at] != 0xe9 {
                        continue;
                    }
                    let rel = i32::from_le_bytes([
                        code[at + 1],
                        code[at + 2],
                        code[at + 3],
                        code[at + 4],
                    ]);
                    let target = (addr + at as u64 + 5).wrapping_add_signed(i64::from(rel));
                    if let Some(&j) = by_addr.get(&target) {
                        if j != i {
                            out.insert(j);
                        }
                    }
                }
                calls[i] = out.into_iter().collect();
            }
        }
        let mut callers = vec![Vec::new(); funcs.len()];
        for (i, cs) in calls.iter().enumerate() {
            for &j in cs {
                callers[j].push(i);
            }
        }
        Ok(Binary {
            funcs,
            calls,
            callers,
            has_calls,
        })
    }

    /// The first function whose name satisfies `pred`.
    pub fn find(&self, pred: impl Fn(&str) -> bool) -> Option<usize> {
        self.funcs.iter().position(|f| pred(&f.name))
    }

    /// Everything reachable from `roots` by direct calls (roots included).
    fn reach(&self, roots: &[usize]) -> HashSet<usize> {
        let mut seen: HashSet<usize> = roots.iter().copied().collect();
        let mut stack: Vec<usize> = roots.to_vec();
        while let Some(f) = stack.pop() {
            for &c in &self.calls[f] {
                if seen.insert(c) {
                    stack.push(c);
                }
            }
        }
        seen
    }

    /// The functions specific to `roots`: the roots, and what they reach
    /// that nothing outside that set calls (directly or through a shared
    /// function).
    pub fn specific(&self, roots: &[usize]) -> HashSet<usize> {
        let reach = self.reach(roots);
        let root_set: HashSet<usize> = roots.iter().copied().collect();
        let entry_points: Vec<usize> = reach
            .iter()
            .copied()
            .filter(|f| !root_set.contains(f))
            .filter(|&f| self.callers[f].iter().any(|g| !reach.contains(g)))
            .collect();
        let shared = self.reach(&entry_points);
        reach
            .into_iter()
            .filter(|f| root_set.contains(f) || !shared.contains(f))
            .collect()
    }

    /// Total size of `set`.
    pub fn size_of(&self, set: &HashSet<usize>) -> u64 {
        set.iter().map(|&f| self.funcs[f].size).sum()
    }

    /// Total size of the functions whose name belongs to crate `krate`
    /// (its paths, and impls of its types or traits).
    pub fn crate_text(&self, krate: &str) -> u64 {
        let own = format!("{krate}::");
        let of_type = format!("<{krate}::");
        let of_trait = format!(" as {krate}::");
        self.funcs
            .iter()
            .filter(|f| {
                f.name.starts_with(&own)
                    || f.name.starts_with(&of_type)
                    || (f.name.starts_with('<') && f.name.contains(&of_trait))
            })
            .map(|f| f.size)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn only_here(x: u64) -> u64 {
        x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17)
    }

    #[inline(never)]
    fn entry_for_test(x: u64) -> u64 {
        only_here(std::hint::black_box(x)) ^ 3
    }

    #[test]
    fn reads_this_binary() {
        assert_eq!(entry_for_test(1), only_here(1) ^ 3);
        let b = Binary::current().unwrap();
        assert!(b.funcs.len() > 100);
        let e = b
            .find(|n| n.ends_with("footprint::tests::entry_for_test"))
            .expect("entry symbol");
        let spec = b.specific(&[e]);
        assert!(spec.contains(&e));
        if b.has_calls {
            let o = b
                .find(|n| n.ends_with("footprint::tests::only_here"))
                .unwrap();
            assert!(b.calls[e].contains(&o), "direct call found");
        }
        assert!(b.size_of(&spec) >= b.funcs[e].size);
        assert!(b.crate_text("std") > 0);
    }
}
