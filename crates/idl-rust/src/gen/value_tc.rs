//! TypeCodes and `Any` support of valuetypes and value boxes.
//!
//! A valuetype's TypeCode is `tk_value` with its type modifier
//! (`VM_CUSTOM`, `VM_ABSTRACT`, `VM_TRUNCATABLE` or `VM_NONE`), its
//! concrete base's TypeCode and its own state members with their
//! visibility; a value box's is `tk_value_box` over the boxed type. Both
//! take part in the recursion scheme of [`super::tc`]: values are the
//! usual way IDL builds graphs (`valuetype Node { public Node next; }`),
//! so a value reached again from inside its own TypeCode becomes a
//! recursive placeholder (an indirection on the wire).
//!
//! A generated value type `T` implements `IdlType`; the dynamic layer's
//! blanket impls then give `ValueSlot<T>` (and `ValueRef<T>`) `ToAny`, and
//! `ValueSlot<T>` `FromAny`, through the compiled `ValueType` code, so a
//! graph keeps its sharing and cycles through an `Any`. A custom value's
//! state is known to its application code alone, so the interpreter
//! carries it as the compiled value: the `Any` support of a custom value
//! (and of every type holding one) first registers the compiled types
//! of the custom values it may meet with the dynamic layer, which reads
//! them with that code.

use std::collections::HashSet;
use std::fmt::Write as _;

use peregrine_idl::{BasicType, DefId, DefKind, Type};

use super::{lit_str, Gen};

impl Gen<'_> {
    /// The types named inside `id`'s TypeCode: members and alias target
    /// as for every aggregate, plus a valuetype's concrete base and own
    /// state members and a value box's boxed type.
    fn tc_children(&self, id: DefId) -> Vec<Type> {
        let d = self.def(id);
        match &d.kind {
            DefKind::Value { .. } => {
                let mut out: Vec<Type> = self
                    .concrete_base(id)
                    .map(Type::Named)
                    .into_iter()
                    .collect();
                for &c in self.spec.contents(id) {
                    if let DefKind::StateMember { ty, .. } = &self.def(c).kind {
                        out.push(ty.clone());
                    }
                }
                out
            }
            DefKind::ValueBox { ty } => vec![ty.clone()],
            _ => self.member_types(id).into_iter().cloned().collect(),
        }
    }

    /// True if the TypeCode of `from` names `target` somewhere inside
    /// (through members, sequences, arrays, bases and boxes).
    pub(super) fn tc_reaches(&self, from: DefId, target: DefId, seen: &mut HashSet<DefId>) -> bool {
        fn named(t: &Type, out: &mut Vec<DefId>) {
            match t {
                Type::Named(i) => out.push(*i),
                Type::Sequence(t, _) | Type::Array(t, _) => named(t, out),
                _ => {}
            }
        }
        let mut ids = Vec::new();
        for t in self.tc_children(from) {
            named(&t, &mut ids);
        }
        ids.into_iter()
            .any(|i| i == target || (seen.insert(i) && self.tc_reaches(i, target, seen)))
    }

    /// True for a valuetype or value box: an aggregate for the recursion
    /// scheme of TypeCode building.
    pub(super) fn is_value_def(&self, id: DefId) -> bool {
        matches!(
            self.def(id).kind,
            DefKind::Value { .. } | DefKind::ValueBox { .. }
        )
    }

    /// An expression building the TypeCode of valuetype or value box
    /// `id` itself (`id` is pushed on `stack` while its members are
    /// built, so a reference back to it becomes a recursive placeholder).
    pub(super) fn value_tc_build(
        &self,
        id: DefId,
        cur: &[String],
        stack: &mut Vec<DefId>,
    ) -> String {
        let dy = self.o.dynamic.clone();
        let d = self.def(id);
        let rid = lit_str(&d.repo_id);
        let name = lit_str(&d.name);
        stack.push(id);
        let s = match &d.kind {
            DefKind::ValueBox { ty } => {
                let boxed = self.tc_expr(ty, cur, stack);
                format!("{dy}::TypeCode::value_box_tc({rid}, {name}, {boxed})")
            }
            DefKind::Value {
                is_abstract,
                is_custom,
                truncatable,
                ..
            } => {
                let modifier = if *is_custom {
                    "VM_CUSTOM"
                } else if *is_abstract {
                    "VM_ABSTRACT"
                } else if *truncatable {
                    "VM_TRUNCATABLE"
                } else {
                    "VM_NONE"
                };
                let modifier = format!("{dy}::valuetype::{modifier}");
                let base = match self.concrete_base(id) {
                    Some(b) => format!("Some({})", self.tc_expr(&Type::Named(b), cur, stack)),
                    None => "None".to_string(),
                };
                let mut members = Vec::new();
                for &c in self.spec.contents(id) {
                    let m = self.def(c);
                    if let DefKind::StateMember { ty, public } = &m.kind {
                        members.push(format!(
                            "{dy}::ValueMember {{ name: {}.into(), tc: {}, visibility: {} }}",
                            lit_str(&m.name),
                            self.tc_expr(ty, cur, stack),
                            i16::from(*public)
                        ));
                    }
                }
                format!(
                    "{dy}::TypeCode::value_tc({rid}, {name}, {modifier}, {base}, Vec::from([{}]))",
                    members.join(", ")
                )
            }
            _ => format!("{dy}::TypeCode::null()"),
        };
        stack.pop();
        s
    }

    /// True if `ty` holds a `ValueBase` anywhere: putting it into an `Any`
    /// needs the TypeCodes of the values that may fill it registered with
    /// the dynamic layer (`idl_rt::register_value_types`).
    pub(super) fn holds_value_base(&self, ty: &Type) -> bool {
        self.value_base_in(ty, &mut HashSet::new())
    }

    fn value_base_in(&self, ty: &Type, seen: &mut HashSet<DefId>) -> bool {
        match ty {
            Type::Basic(BasicType::ValueBase) => true,
            Type::Sequence(t, _) | Type::Array(t, _) => self.value_base_in(t, seen),
            Type::Named(id) => {
                seen.insert(*id)
                    && self
                        .tc_children(*id)
                        .iter()
                        .any(|t| self.value_base_in(t, seen))
            }
            _ => false,
        }
    }

    /// The statements that register what the interpreter needs to read
    /// `ty` into an `Any`: the value TypeCodes a `ValueBase` inside may
    /// need, and the compiled types of the `custom` valuetypes inside
    /// (whose state only their own code reads).
    pub(super) fn register_values(&self, ty: &Type, cur: &[String]) -> String {
        let mut s = String::new();
        if self.holds_value_base(ty) {
            let _ = writeln!(s, "{}::register_value_types();", self.rt(cur));
        }
        let mut customs = Vec::new();
        self.customs_in(ty, &mut HashSet::new(), &mut customs);
        for id in customs {
            let _ = writeln!(
                s,
                "{}::register_custom_value::<{}>();",
                self.o.dynamic,
                self.path(cur, id, "")
            );
        }
        s
    }

    /// The `custom` valuetypes `ty` holds anywhere (itself included), in
    /// the order first met.
    fn customs_in(&self, ty: &Type, seen: &mut HashSet<DefId>, out: &mut Vec<DefId>) {
        match ty {
            Type::Sequence(t, _) | Type::Array(t, _) => self.customs_in(t, seen, out),
            Type::Named(id) => {
                if !seen.insert(*id) {
                    return;
                }
                if let DefKind::Value {
                    is_custom: true, ..
                } = self.def(*id).kind
                {
                    out.push(*id);
                }
                for t in self.tc_children(*id) {
                    self.customs_in(&t, seen, out);
                }
            }
            _ => {}
        }
    }

    /// TypeCode function of valuetype or value box `id` (generated as
    /// Rust type `name`), and its `IdlType` impl unless it is abstract (a
    /// trait, not a type).
    pub(super) fn value_tc_items(&self, id: DefId, name: &str, cur: &[String]) -> String {
        let dy = &self.o.dynamic;
        let mut s = self.tc_function(id, cur);
        let concrete = !matches!(
            self.def(id).kind,
            DefKind::Value {
                is_abstract: true,
                ..
            }
        );
        if concrete {
            let _ = write!(
                s,
                "/// `ValueSlot<{name}>` and `ValueRef<{name}>` go into an `Any` and
/// `ValueSlot<{name}>` comes out of one, sharing and cycles kept.
impl {dy}::IdlType for {name} {{
    fn type_code() -> {dy}::TypeCode {{
        {reg}{f}()
    }}
}}

",
                f = self.tc_fn(id),
                reg = self.register_values(&Type::Named(id), cur),
            );
        }
        s
    }
}
