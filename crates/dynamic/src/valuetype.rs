//! Valuetype instances in the value tree: [`ValueNode`] (a value's type
//! and state), [`ValueLink`] (a member or argument pointing at one), and
//! the registry of value TypeCodes the decoder consults for derived types
//! it meets on the wire.
//!
//! # Why `Arc` nodes with a state set once, and weak back edges
//!
//! What CORBA preserves for values is *identity*: two members pointing at
//! one value arrive pointing at one value, and a graph may be cyclic. So a
//! value is a node shared by `Arc`, and its address is exactly the
//! identity the CDR writer keys its indirections on. One graph routinely
//! spans several `DynValue`s (two arguments of a request sharing a node,
//! an `Any` holding part of a graph), which rules out an arena owned by
//! one tree: every holder of a node would have to carry the arena too.
//!
//! A node's state is fixed once set, as a generated value's fields are
//! once it is shared: reading it takes no lock (the encoder reads every
//! node it writes). A cycle needs a node that exists before all of its
//! members do, so a node can also be made without its state
//! ([`ValueNode::pending`]) and given it once later
//! ([`ValueNode::set_state`]), as a generated value's
//! `ValueSlot` is filled once. Changing the state afterwards takes
//! exclusive access ([`ValueNode::state_mut`] through `Arc::get_mut`);
//! a shared node is changed by building a new one.
//!
//! Strong `Arc` cycles would never be freed, and a peer sending cyclic
//! values would then leak memory with every request. The decoder
//! therefore stores an edge that points back to a value whose state is
//! still being read (the only kind of edge that closes a cycle: every
//! other edge points to a value finished earlier) as a *weak* reference;
//! the graph lives as long as its root. Applications building cyclic
//! graphs do the same with [`ValueLink::weak`] (a strong cycle is allowed,
//! but stays in memory for good).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock, RwLock, Weak};

use peregrine_cdr::ValueObject;

use crate::error::{mismatch, DynError, Result};
use crate::kind::TcKind;
use crate::typecode::{Body, TypeCode};
use crate::value::DynValue;

/// `VM_NONE`: a plain valuetype.
pub const VM_NONE: i16 = 0;
/// `VM_CUSTOM`: state marshaled by application code.
pub const VM_CUSTOM: i16 = 1;
/// `VM_ABSTRACT`: no state, no instances of its own.
pub const VM_ABSTRACT: i16 = 2;
/// `VM_TRUNCATABLE`: may be read as its concrete base.
pub const VM_TRUNCATABLE: i16 = 3;

/// The repository id of `CORBA::ValueBase` ([`TypeCode::value_base`]).
pub const VALUE_BASE_ID: &str = "IDL:omg.org/CORBA/ValueBase:1.0";

/// Longest chain of concrete bases followed (decoded TypeCodes nest at
/// most 32 deep; a constructed one could be longer, but not usefully).
const MAX_BASE_CHAIN: usize = 64;

/// A value (`tk_value`) or value box (`tk_value_box`) instance: its own
/// type and its state.
///
/// The state of a valuetype is every state member of its concrete bases,
/// most basic first, then its own, in the order they travel on the wire
/// ([`ValueNode::member_names`] gives the names and visibilities); a value
/// box's state is the one boxed value. It is set once (see the module
/// docs): at construction, or for a node closing a cycle by
/// [`ValueNode::set_state`] after [`ValueNode::pending`]. A node may
/// instead hold a compiled value ([`ValueNode::compiled`]): how `custom`
/// valuetypes travel.
pub struct ValueNode {
    tc: TypeCode,
    /// The state given at construction (no synchronization to read; for
    /// a node made without its state, empty).
    state: Vec<DynValue>,
    /// The state set later through a shared reference, once.
    late: OnceLock<Vec<DynValue>>,
    /// A compiled value written in place of the state (see
    /// [`ValueNode::compiled`]).
    object: Option<peregrine_cdr::ValueRef<dyn ValueObject>>,
}

impl ValueNode {
    /// A value of type `tc` (a concrete `tk_value` or a `tk_value_box`)
    /// with `state` (checked for its length only; the member types are
    /// checked when the value is encoded).
    pub fn new(tc: TypeCode, state: Vec<DynValue>) -> Result<Arc<Self>> {
        // Kept resolved (not a recursive reference): the encoder looks
        // the type's plan up once per value.
        let tc = tc.resolve()?;
        if state.len() != state_len(&tc)? {
            return Err(mismatch("value state member count"));
        }
        Ok(Arc::new(Self::unchecked(tc, state)))
    }

    /// A value box of type `tc` holding `v`.
    pub fn boxed(tc: TypeCode, v: DynValue) -> Result<Arc<Self>> {
        Self::new(tc, vec![v])
    }

    /// A value of type `tc` whose state is set later, once, with
    /// [`ValueNode::set_state`]: how a cycle is built, the node existing
    /// before the members that point back to it. Until then its state
    /// is empty (and encoding it fails).
    pub fn pending(tc: TypeCode) -> Result<Arc<Self>> {
        let tc = tc.resolve()?;
        state_len(&tc)?;
        Ok(Arc::new(Self::unset(tc)))
    }

    /// Sets the state of a node made by [`ValueNode::pending`] (checked
    /// for its length as in [`ValueNode::new`]). Fails if the state was
    /// set before: a shared node's state does not change.
    pub fn set_state(&self, state: Vec<DynValue>) -> Result<()> {
        if !self.state.is_empty() || self.object.is_some() {
            return Err(already_set());
        }
        if state.len() != state_len(&self.tc)? {
            return Err(mismatch("value state member count"));
        }
        self.late.set(state).map_err(|_| already_set())
    }

    /// A value of type `tc` held as the compiled value `object`, which
    /// the encoder writes through its own `ValueObject` code: how a
    /// `custom` valuetype (whose state only its application code knows)
    /// travels in the value tree (see [`crate::custom`]). `tc` must be a
    /// valuetype or value box with `object`'s repository id. The node's
    /// state is empty and stays so.
    pub fn compiled(
        tc: TypeCode,
        object: peregrine_cdr::ValueRef<dyn ValueObject>,
    ) -> Result<Arc<Self>> {
        let tc = tc.resolve()?;
        state_len(&tc)?;
        if object.value_ids().first().copied() != Some(tc.id()?) {
            return Err(mismatch("compiled value of another repository id"));
        }
        Ok(Arc::new(Self::with_object(tc, object)))
    }

    /// A node holding `object`, unchecked (the decoder's).
    pub(crate) fn with_object(
        tc: TypeCode,
        object: peregrine_cdr::ValueRef<dyn ValueObject>,
    ) -> Self {
        Self {
            object: Some(object),
            ..Self::unset(tc)
        }
    }

    /// The compiled value a [`ValueNode::compiled`] node holds.
    pub fn object(&self) -> Option<&peregrine_cdr::ValueRef<dyn ValueObject>> {
        self.object.as_ref()
    }

    /// A node with `state`, unchecked (the decoder's).
    pub(crate) fn unchecked(tc: TypeCode, state: Vec<DynValue>) -> Self {
        Self {
            tc,
            state,
            late: OnceLock::new(),
            object: None,
        }
    }

    /// A node without its state yet, unchecked (the decoder's, for a
    /// value an indirection points back to while its state is read).
    pub(crate) fn unset(tc: TypeCode) -> Self {
        Self::unchecked(tc, Vec::new())
    }

    /// Sets the state of a node made by [`ValueNode::unset`], unchecked.
    pub(crate) fn fill(&self, state: Vec<DynValue>) {
        // Only the decoder that made the node fills it, once.
        let _ = self.late.set(state);
    }

    /// The value's own (most derived) type.
    pub fn type_code(&self) -> &TypeCode {
        &self.tc
    }

    /// The state, base members first (empty while a
    /// [`ValueNode::pending`] node's state is not set). Read without a
    /// lock: it does not change once set.
    #[inline]
    pub fn state(&self) -> &[DynValue] {
        match self.late.get() {
            Some(s) => s,
            None => &self.state,
        }
    }

    /// The state, for changes: takes exclusive access (a node not shared
    /// yet, or `Arc::get_mut` of one nobody else refers to, weakly or
    /// not). A pending node's state starts empty here.
    pub fn state_mut(&mut self) -> &mut Vec<DynValue> {
        if let Some(s) = self.late.take() {
            self.state = s;
        }
        &mut self.state
    }

    /// Names and visibilities (`PRIVATE_MEMBER` 0, `PUBLIC_MEMBER` 1) of
    /// the state members, in state order (empty names for a value box).
    pub fn member_names(&self) -> Vec<(String, i16)> {
        let mut out = Vec::new();
        match self.tc.body() {
            Body::Value(_) => {
                if let Ok(chain) = base_chain(&self.tc) {
                    for t in chain.iter().rev() {
                        if let Body::Value(v) = t.body() {
                            out.extend(v.members.iter().map(|m| (m.name.clone(), m.visibility)));
                        }
                    }
                }
            }
            _ => out.push((String::new(), 1)),
        }
        out
    }

    /// The state member called `name` (the most derived one if a base
    /// uses the name too).
    pub fn member(&self, name: &str) -> Option<DynValue> {
        let names = self.member_names();
        let i = names.iter().rposition(|(n, _)| n == name)?;
        self.state().get(i).cloned()
    }
}

impl fmt::Debug for ValueNode {
    /// Type and address only: a graph may have cycles.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ValueNode({} @ {:p})",
            self.tc.id().unwrap_or("?"),
            self as *const Self
        )
    }
}

/// A reference to a [`ValueNode`]: strong (keeps it alive) or weak (a
/// back edge of a cycle; see the module docs).
#[derive(Clone)]
pub struct ValueLink(Link);

#[derive(Clone)]
enum Link {
    Strong(Arc<ValueNode>),
    Weak(Weak<ValueNode>),
}

impl ValueLink {
    /// A strong reference.
    pub fn new(node: Arc<ValueNode>) -> Self {
        Self(Link::Strong(node))
    }

    /// A weak reference (for the edge that closes a cycle).
    pub fn weak(node: &Arc<ValueNode>) -> Self {
        Self(Link::Weak(Arc::downgrade(node)))
    }

    /// The node, or `None` for a weak reference whose node is gone.
    pub fn node(&self) -> Option<Arc<ValueNode>> {
        match &self.0 {
            Link::Strong(a) => Some(a.clone()),
            Link::Weak(w) => w.upgrade(),
        }
    }

    /// The node of a strong reference, borrowed.
    pub(crate) fn strong(&self) -> Option<&Arc<ValueNode>> {
        match &self.0 {
            Link::Strong(a) => Some(a),
            Link::Weak(_) => None,
        }
    }

    /// True for a weak reference.
    pub fn is_weak(&self) -> bool {
        matches!(self.0, Link::Weak(_))
    }

    /// The node's address: its identity on the wire.
    pub fn as_ptr(&self) -> *const ValueNode {
        match &self.0 {
            Link::Strong(a) => Arc::as_ptr(a),
            Link::Weak(w) => w.as_ptr(),
        }
    }

    /// True when both refer to the same node.
    pub fn ptr_eq(&self, other: &ValueLink) -> bool {
        core::ptr::eq(self.as_ptr(), other.as_ptr())
    }
}

impl From<Arc<ValueNode>> for ValueLink {
    fn from(node: Arc<ValueNode>) -> Self {
        Self::new(node)
    }
}

impl PartialEq for ValueLink {
    /// Identity, as for any value reference.
    fn eq(&self, other: &Self) -> bool {
        self.ptr_eq(other)
    }
}

impl fmt::Debug for ValueLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_weak() { "weak" } else { "strong" };
        write!(f, "ValueLink({kind} {:p})", self.as_ptr())
    }
}

#[cold]
fn already_set() -> DynError {
    mismatch("value state already set")
}

/// The concrete bases of a valuetype, the type itself first.
pub(crate) fn base_chain(tc: &TypeCode) -> Result<Vec<TypeCode>> {
    let mut chain = vec![tc.resolve()?];
    loop {
        let last = chain.last().expect("not empty");
        let Body::Value(v) = last.body() else {
            return Err(mismatch("expected a valuetype TypeCode"));
        };
        match &v.base {
            None => return Ok(chain),
            Some(b) if chain.len() < MAX_BASE_CHAIN => chain.push(b.resolve()?),
            Some(_) => return Err(crate::error::bad_tc("valuetype base chain too long")),
        }
    }
}

/// The number of state members of a value of type `tc`.
pub(crate) fn state_len(tc: &TypeCode) -> Result<usize> {
    let tc = tc.resolve()?;
    match tc.kind() {
        TcKind::ValueBox => Ok(1),
        TcKind::Value => Ok(base_chain(&tc)?
            .iter()
            .map(|t| match t.body() {
                Body::Value(v) => v.members.len(),
                _ => 0,
            })
            .sum()),
        _ => Err(mismatch("expected a valuetype or value box TypeCode")),
    }
}

/// True when `tc` is `formal` or one of its concrete bases is (ids
/// compared).
pub(crate) fn derives_from(tc: &TypeCode, formal_id: &str) -> bool {
    // The common case, a value of the formal type itself, walks no chain.
    if tc.id() == Ok(formal_id) {
        return true;
    }
    match tc.kind() {
        TcKind::Value => base_chain(tc).is_ok_and(|c| c.iter().any(|t| t.id() == Ok(formal_id))),
        _ => tc.id() == Ok(formal_id),
    }
}

type Registry = RwLock<HashMap<String, TypeCode>>;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Default::default)
}

/// Makes the valuetype or value box `tc` known to the decoder, which
/// then reads values of that type wherever a base of it (or any value,
/// in an abstract interface) is expected, rather than truncating them or
/// failing. Returns the TypeCode it replaces.
pub fn register_value_type(tc: TypeCode) -> Result<Option<TypeCode>> {
    let id = match tc.kind() {
        TcKind::Value | TcKind::ValueBox => tc.id()?.to_owned(),
        _ => return Err(DynError::BadKind),
    };
    Ok(registry()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, tc))
}

/// Forgets the type registered for `id`.
pub fn unregister_value_type(id: &str) -> Option<TypeCode> {
    registry()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(id)
}

/// The type registered for `id`.
pub fn lookup_value_type(id: &str) -> Option<TypeCode> {
    registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(id)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::typecode::ValueMember;

    fn vt(id: &str, modifier: i16, base: Option<TypeCode>, names: &[&str]) -> TypeCode {
        let members = names
            .iter()
            .map(|n| ValueMember {
                name: (*n).into(),
                tc: TypeCode::long(),
                visibility: 1,
            })
            .collect();
        TypeCode::value_tc(id, id, modifier, base, members)
    }

    #[test]
    fn state_is_base_members_first_and_checked_for_length() {
        let base = vt("IDL:B:1.0", VM_NONE, None, &["a", "x"]);
        let derived = vt("IDL:D:1.0", VM_TRUNCATABLE, Some(base.clone()), &["x", "c"]);
        assert_eq!(state_len(&derived).unwrap(), 4);
        assert!(ValueNode::new(derived.clone(), vec![DynValue::Long(1)]).is_err());
        let n = ValueNode::new(derived.clone(), (1..=4).map(DynValue::Long).collect()).unwrap();
        let names: Vec<_> = n.member_names().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "x", "x", "c"]);
        // The derived type's `x` hides the base's.
        assert_eq!(n.member("x"), Some(DynValue::Long(3)));
        assert!(derives_from(&derived, "IDL:B:1.0"));
        assert!(!derives_from(&base, "IDL:D:1.0"));
        assert!(state_len(&TypeCode::long()).is_err());
    }

    #[test]
    fn state_is_set_once_and_changed_only_through_exclusive_access() {
        let tc = vt("IDL:Once:1.0", VM_NONE, None, &["a", "b"]);
        let n = ValueNode::pending(tc.clone()).unwrap();
        assert!(n.state().is_empty(), "no state until set");
        assert!(n.set_state(vec![DynValue::Long(1)]).is_err(), "length");
        assert!(n.state().is_empty(), "a refused state is not kept");
        n.set_state(vec![DynValue::Long(1), DynValue::Long(2)])
            .unwrap();
        assert_eq!(n.state(), [DynValue::Long(1), DynValue::Long(2)]);
        assert!(
            n.set_state(vec![DynValue::Long(3), DynValue::Long(4)])
                .is_err(),
            "set once"
        );
        assert_eq!(n.state()[0], DynValue::Long(1));
        let shared = n.clone();
        let mut n = n;
        assert!(Arc::get_mut(&mut n).is_none(), "shared: no change");
        drop(shared);
        Arc::get_mut(&mut n).unwrap().state_mut()[1] = DynValue::Long(20);
        assert_eq!(n.member("b"), Some(DynValue::Long(20)));
        assert!(ValueNode::pending(TypeCode::long()).is_err());
    }

    #[test]
    fn weak_and_strong_references_share_identity() {
        let tc = vt("IDL:N:1.0", VM_NONE, None, &["a"]);
        let n = ValueNode::new(tc, vec![DynValue::Long(1)]).unwrap();
        let strong = ValueLink::new(n.clone());
        let weak = ValueLink::weak(&n);
        assert_eq!(strong, weak);
        assert!(weak.is_weak() && !strong.is_weak());
        drop((n, strong));
        assert!(
            weak.node().is_none(),
            "a weak reference keeps nothing alive"
        );
    }

    #[test]
    fn registry_takes_value_types_only() {
        assert_eq!(
            register_value_type(TypeCode::long()).unwrap_err(),
            DynError::BadKind
        );
        let tc = vt("IDL:Registered/Unit:1.0", VM_NONE, None, &[]);
        assert!(register_value_type(tc.clone()).unwrap().is_none());
        assert!(lookup_value_type("IDL:Registered/Unit:1.0").is_some());
        assert!(unregister_value_type("IDL:Registered/Unit:1.0").is_some());
        assert!(lookup_value_type("IDL:Registered/Unit:1.0").is_none());
    }
}
