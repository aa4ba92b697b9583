//! The edges of a value: which value references it holds.
//!
//! The values a reader decodes from one message share one arena, counted
//! once; the references between them are not counted. To know how many
//! of its count are such references, the reader walks every value it
//! made when it ends, through the walk each valuetype and value box
//! declares in `ValueType::EDGES`. This module generates the walks: a
//! `__value_edges` for each valuetype and value box, and for each struct,
//! union and abstract interface holder that can hold a value reference,
//! reporting every value slot and abstract interface value, in members,
//! elements and branches.
//!
//! The walk must report every reference the value holds, once, and
//! nothing else (`cdr::Edges::new` is `unsafe` for that reason): one
//! reported that the value does not hold could free values still in use.
//! References behind `Any` (the dynamic layer's nodes, which may be shared
//! outside the value) are not reported: missing one only keeps the
//! message's values in memory.

use peregrine_idl::{DefId, Type};
use std::collections::HashSet;

use super::Gen;

impl Gen<'_> {
    /// True if a value of `ty` can hold a value reference: a value slot,
    /// an abstract interface, or a member, element or branch of one.
    pub(super) fn holds_values(&self, ty: &Type) -> bool {
        self.holds(ty, true, &mut HashSet::new())
    }

    /// Statements reporting the value references in `expr` (a `&T` for
    /// `ty`) to `e`, the `ValueEdges`; `depth` names the loop variables.
    pub(super) fn edges_of(&self, ty: &Type, expr: &str, depth: usize) -> String {
        if !self.holds_values(ty) {
            return String::new();
        }
        if self.value_slot(ty).is_some() || self.abstract_vt(ty).is_some() || self.is_value_base(ty)
        {
            return format!("e.slot({expr});\n");
        }
        if self.abstract_iface(ty).is_some() {
            return format!("if let Some(a) = {expr} {{ a.__value_edges(e); }}\n");
        }
        self.nested_walk(ty, expr, depth, "__value_edges(e)", &|t, e, d| {
            self.edges_of(t, e, d)
        })
    }

    /// `impl Name { fn __value_edges }` for struct or union `id` when it
    /// can hold value references (else nothing).
    pub(super) fn edges_impl(&self, id: DefId, name: &str) -> String {
        if !self.holds_values(&Type::Named(id)) {
            return String::new();
        }
        let Some(body) = self.members_walk(id, &|t, e| self.edges_of(t, e, 0)) else {
            return String::new();
        };
        format!(
            "impl {name} {{
    /// Reports the value references held (see `ValueType::EDGES` of the
    /// values holding this).
    #[doc(hidden)]
    #[allow(unreachable_patterns, clippy::single_match)]
    pub fn __value_edges(&self, e: &mut {cdr}::ValueEdges<'_>) {{
        {body}    }}
}}

",
            cdr = self.o.cdr,
        )
    }

    /// The `__value_edges` of a valuetype or value box whose value
    /// references are those of `members` (type and `&self` expression),
    /// as an inherent method, and the `EDGES` constant of its `ValueType`
    /// impl that names it.
    pub(super) fn value_edges(&self, members: &[(&Type, String)]) -> (String, String) {
        let cdr = &self.o.cdr;
        let body: String = members
            .iter()
            .map(|(t, expr)| self.edges_of(t, expr, 0))
            .collect();
        let body = if body.is_empty() {
            "let _ = e;\n".to_string()
        } else {
            body
        };
        let method = format!(
            "/// Reports the value references the state holds (the walk of
/// `ValueType::EDGES`).
#[doc(hidden)]
#[allow(unreachable_patterns, clippy::single_match)]
pub fn __value_edges(&self, e: &mut {cdr}::ValueEdges<'_>) {{
{body}}}
"
        );
        let constant = format!(
            "    // SAFETY: `__value_edges` is generated from the state members:
    // it reports each value slot and abstract interface value they hold,
    // at any depth, once, and nothing else.
    const EDGES: Option<{cdr}::Edges<Self>> = Some(unsafe {{ {cdr}::Edges::new(Self::__value_edges) }});
"
        );
        (method, constant)
    }
}
