//! Walks of the value slots held in plain members.
//!
//! A value slot inside a struct, a union's branch, a value box's content
//! or a nested sequence or array is decoded as part of a plain Rust value
//! that is then moved into its owner, so a back edge there (to a value
//! whose state is still being read) cannot be completed where it was
//! read. The reader counts those slots instead, and the owner (a
//! valuetype or value box) has them filled once it exists by a walk that
//! meets them again in the order they were read
//! (`Reader::open_value_scope`, `Reader::close_value_scope`,
//! `ValueWalk`). This module generates the walks: for each struct and
//! union holding such slots an inherent `__walk_values`, and for the
//! owner the walk of its plain members. Types without value slots get
//! nothing, and their decoding is unchanged.

use std::collections::HashSet;
use std::fmt::Write as _;

use peregrine_idl::{BasicType, DefId, DefKind, Type};

use super::Gen;
use crate::names::{camel, snake};

impl Gen<'_> {
    /// True if decoding `ty` as a plain member reads value slots (values,
    /// boxes, abstract valuetypes, `ValueBase`) other than through another
    /// value's state.
    pub(super) fn holds_slots(&self, ty: &Type) -> bool {
        self.holds(ty, false, &mut HashSet::new())
    }

    /// True if `ty` is, or has as a member, element or branch at any
    /// depth, a value slot (a value, a box, an abstract valuetype,
    /// `ValueBase`), or with `abstract_ifaces` an abstract interface.
    pub(super) fn holds(
        &self,
        ty: &Type,
        abstract_ifaces: bool,
        seen: &mut HashSet<DefId>,
    ) -> bool {
        match ty {
            Type::Basic(BasicType::ValueBase) => true,
            Type::Sequence(t, _) | Type::Array(t, _) => self.holds(t, abstract_ifaces, seen),
            Type::Named(id) => match &self.def(*id).kind {
                DefKind::Value { .. } | DefKind::ValueBox { .. } => true,
                DefKind::Interface {
                    is_abstract: true, ..
                } => abstract_ifaces,
                DefKind::Struct { .. } | DefKind::Union { .. } | DefKind::Typedef { .. } => {
                    // A recursive type's members are looked at once.
                    seen.insert(*id)
                        && self
                            .member_types(*id)
                            .into_iter()
                            .any(|t| self.holds(t, abstract_ifaces, seen))
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// Statements meeting the slots in `expr` (a `&T` for `ty`) in the
    /// order they are decoded, `w` being the `ValueWalk`; `depth` names
    /// the loop variables.
    pub(super) fn walk_slots(&self, ty: &Type, expr: &str, cur: &[String], depth: usize) -> String {
        if !self.holds_slots(ty) {
            return String::new();
        }
        if self.value_slot(ty).is_some() {
            return format!("w.value({expr});\n");
        }
        if let Some(poly) = self.poly_reader(ty, cur) {
            return format!("w.poly({expr}, &{poly});\n");
        }
        self.nested_walk(ty, expr, depth, "__walk_values(w)", &|t, e, d| {
            self.walk_slots(t, e, cur, d)
        })
    }

    /// The statements of a walk into `expr` (a `&T` for `ty`), a sequence
    /// or array (a loop per dimension, `inner(element type, element,
    /// depth)` for each element; `depth` names the loop variables) or a
    /// struct or union (a call of its `method`, given with its argument).
    pub(super) fn nested_walk(
        &self,
        ty: &Type,
        expr: &str,
        depth: usize,
        method: &str,
        inner: &dyn Fn(&Type, &str, usize) -> String,
    ) -> String {
        // Methods take `&self`: a place is enough.
        let place = expr.strip_prefix('&').unwrap_or(expr);
        match self.resolve_owned(ty) {
            Type::Sequence(t, _) => {
                let e = format!("e{depth}");
                let inner = inner(&t, &e, depth + 1);
                format!("for {e} in {place}.iter() {{\n{inner}}}\n")
            }
            Type::Array(t, dims) => {
                // One loop per dimension, innermost last.
                let mut e = place.to_string();
                let mut head = String::new();
                for d in 0..dims.len() {
                    let v = format!("e{}", depth + d);
                    let _ = writeln!(head, "for {v} in {e}.iter() {{");
                    e = v;
                }
                let inner = inner(&t, &e, depth + dims.len());
                format!("{head}{inner}{}\n", "}".repeat(dims.len()))
            }
            Type::Named(_) => format!("{place}.{method};\n"),
            _ => String::new(),
        }
    }

    /// The body of a walk of struct or union `id`: `member(type, expr)`
    /// for each member (a `&self.name`) or branch (`v`, matched), the
    /// branches that yield nothing left out; `None` for another kind.
    pub(super) fn members_walk(
        &self,
        id: DefId,
        member: &dyn Fn(&Type, &str) -> String,
    ) -> Option<String> {
        Some(match &self.def(id).kind {
            DefKind::Struct { members, .. } => members
                .iter()
                .map(|m| member(&m.ty, &format!("&self.{}", snake(&m.name))))
                .collect(),
            DefKind::Union { branches, .. } => {
                let mut arms = String::new();
                for b in branches {
                    let walk = member(&b.ty, "v");
                    if walk.is_empty() {
                        continue;
                    }
                    let v = camel(&b.name);
                    let pat = if Self::keeps_disc(b) {
                        format!("Self::{v} {{ value: v, .. }}")
                    } else {
                        format!("Self::{v}(v)")
                    };
                    let _ = writeln!(arms, "{pat} => {{\n{walk}}}");
                }
                format!("match self {{\n{arms}_ => {{}}\n}}\n")
            }
            _ => return None,
        })
    }

    /// `impl Name { fn __walk_values }` for struct or union `id` when it
    /// holds value slots (else nothing).
    pub(super) fn walk_impl(&self, id: DefId, name: &str, cur: &[String]) -> String {
        if !self.holds_slots(&Type::Named(id)) {
            return String::new();
        }
        let cdr = &self.o.cdr;
        let Some(body) = self.members_walk(id, &|t, e| self.walk_slots(t, e, cur, 0)) else {
            return String::new();
        };
        format!(
            "impl {name} {{
    /// Meets the value slots held, in the order they are decoded (a
    /// value holding this completes back edges through them).
    #[doc(hidden)]
    #[allow(unreachable_patterns, clippy::single_match)]
    pub fn __walk_values(&self, w: &mut {cdr}::ValueWalk<'_>) {{
        {body}    }}
}}

"
        )
    }

    /// The body of `read_state` for a value named `name` whose state is
    /// read by `body` (which evaluates to `Result<ValueRef<Self>>`): as is when
    /// `walk` (over `s: &Self`) meets no slot, else inside a scope whose
    /// back edges `walk` completes.
    pub(super) fn in_value_scope(&self, name: &str, body: &str, walk: &str) -> String {
        if walk.is_empty() {
            return body.to_string();
        }
        let cdr = &self.o.cdr;
        format!(
            "let scope = r.open_value_scope();
let v = (|| -> {cdr}::Result<{cdr}::ValueRef<Self>> {{ {body} }})();
r.close_value_scope(scope, v, |s: &{name}, w: &mut {cdr}::ValueWalk<'_>| {{
{walk}}})"
        )
    }
}
