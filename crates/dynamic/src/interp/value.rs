//! Valuetypes, value boxes and abstract interfaces through the CDR value
//! codec (`peregrine_cdr`'s `Writer::write_value` and
//! `Reader::read_value_start`/`finish_value`), producing the octets the
//! compiled `ValueType` code does: the same repository ids (the type's
//! own, then its truncatable bases), chunking exactly for truncatable
//! values, and indirections for every value met a second time.
//!
//! Decoding picks the type to read a value as from the ids on the wire:
//! the formal type (the TypeCode of the slot), a type registered with
//! [`crate::valuetype::register_value_type`] that derives from it, or,
//! when the value is chunked and lists the formal type among its
//! truncatable bases, the formal type with the rest of the state skipped
//! (truncation). A `ValueBase` slot takes a value of any registered
//! type. Anything else is `MARSHAL` minor 1 (no value factory).
//! `custom` valuetypes travel as compiled values
//! ([`ValueNode::compiled`]), written by their own code and read by the
//! compiled type registered for their id
//! ([`crate::custom::register_custom_value`]); without one they are
//! `NO_IMPLEMENT` minor 1 both ways, as only application code knows
//! their state.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use peregrine_cdr::{CdrError, Reader, ValueInfo, ValueStart, Writer};

use crate::custom::custom_reader;
use crate::error::{minor, mismatch, DynError, Result};
use crate::interp::{decode_value, encode_value};
use crate::kind::TcKind;
use crate::typecode::{Body, TypeCode};
use crate::value::DynValue;
use crate::valuetype::{
    base_chain, derives_from, lookup_value_type, ValueLink, ValueNode, VALUE_BASE_ID, VM_ABSTRACT,
    VM_CUSTOM, VM_TRUNCATABLE,
};

/// Writes a value of the valuetype or value box `formal`.
pub(crate) fn encode_valuetype(formal: &TypeCode, v: &DynValue, w: &mut Writer) -> Result<()> {
    let DynValue::Value(r) = v else {
        return Err(mismatch("expected a value"));
    };
    let Some(r) = r else {
        w.write_null_value();
        return Ok(());
    };
    // A strong reference is used in place (no reference count change).
    let upgraded;
    let node = match r.strong() {
        Some(node) => node,
        None => {
            upgraded = r
                .node()
                .ok_or_else(|| mismatch("weak value reference whose value is gone"))?;
            &upgraded
        }
    };
    if !is_type(formal, node.type_code()) {
        let fid = formal.id()?;
        let fits = match formal.kind() {
            // Every value is a `ValueBase`.
            TcKind::Value if fid == VALUE_BASE_ID => true,
            TcKind::Value => {
                node.type_code().kind() == TcKind::Value && derives_from(node.type_code(), fid)
            }
            _ => node.type_code().kind() == TcKind::ValueBox && node.type_code().id()? == fid,
        };
        if !fits {
            return Err(mismatch("value of a type not derived from the formal type"));
        }
    }
    write_node(node, w)
}

/// True when `t` is the very TypeCode `formal` stands for (itself, or
/// the target of a recursive reference): the common case, a value of its
/// slot's own type, told without comparing ids.
fn is_type(formal: &TypeCode, t: &TypeCode) -> bool {
    if formal.ptr_eq(t) {
        return true;
    }
    match formal.body() {
        Body::Recursive { target, .. } => target
            .get()
            .is_some_and(|w| core::ptr::eq(w.as_ptr(), Arc::as_ptr(&t.0))),
        _ => false,
    }
}

/// Writes an abstract interface: `TRUE` and an object reference, or
/// `FALSE` and a value (null included).
pub(crate) fn encode_abstract(v: &DynValue, w: &mut Writer) -> Result<()> {
    match v {
        DynValue::ObjRef(ior) => {
            w.write_bool(true);
            Ok(peregrine_cdr::Encode::encode(&**ior, w)?)
        }
        DynValue::Value(r) => {
            w.write_bool(false);
            match r {
                None => {
                    w.write_null_value();
                    Ok(())
                }
                Some(r) => {
                    let node = r
                        .node()
                        .ok_or_else(|| mismatch("weak value reference whose value is gone"))?;
                    write_node(&node, w)
                }
            }
        }
        _ => Err(DynError::BadParam {
            minor: minor::BAD_PARAM_INCORRECT_ABSTRACT_INTF_TYPE,
            what: "expected an object reference or a value",
        }),
    }
}

/// A node's header and state (or an indirection to it: then neither
/// the plan nor the state is looked at).
fn write_node(node: &Arc<ValueNode>, w: &mut Writer) -> Result<()> {
    if let Some(obj) = node.object() {
        // Keyed by the compiled value's address, as its own code keys
        // it: the same value held twice is written once.
        return Ok(w.write_value(
            peregrine_cdr::ValueRef::as_ptr(obj).cast::<()>(),
            obj.value_ids(),
            obj.value_chunked(),
            |w| obj.write_value_state(w),
        )?);
    }
    // The first error of the interpreter, passed through the codec's
    // callbacks (which return codec errors).
    let err = Cell::new(None);
    let fail = |e: DynError| {
        err.set(Some(e));
        CdrError::BadEncapsulation
    };
    // Nodes hold resolved TypeCodes (`ValueNode::new`, the decoder).
    let tc = node.type_code();
    let written = w.write_value_with(
        Arc::as_ptr(node).cast(),
        || plan(tc).and_then(ValuePlan::header).map_err(fail),
        |w| {
            // Read only here: a second visit of this node is an
            // indirection written before this closure would run.
            let state = node.state();
            let types = plan(tc).and_then(ValuePlan::state).map_err(fail)?;
            if state.len() != types.len() {
                return Err(fail(mismatch("value state member count")));
            }
            types
                .iter()
                .zip(state.iter())
                .try_for_each(|(t, x)| encode_value(t, x, w))
                .map_err(fail)
        },
    );
    match (written, err.into_inner()) {
        (_, Some(e)) => Err(e),
        (Err(e), None) => Err(e.into()),
        (Ok(()), None) => Ok(()),
    }
}

/// What encoding and decoding a value of one type needs, computed once
/// per TypeCode (cached in its [`crate::Layout`]) rather than per value.
#[derive(Debug)]
pub struct ValuePlan {
    /// The state members' types in wire order.
    state: Result<Vec<TypeCode>>,
    /// The header's repository ids and chunking.
    header: Result<(Vec<String>, bool)>,
}

impl ValuePlan {
    /// The plan of the valuetype or value box `tc`.
    pub(crate) fn new(tc: &TypeCode) -> Self {
        Self {
            state: state_types(tc),
            header: header(tc),
        }
    }

    fn state(&self) -> Result<&[TypeCode]> {
        self.state.as_deref().map_err(Clone::clone)
    }

    fn header(&self) -> Result<(&[String], bool)> {
        match &self.header {
            Ok((ids, chunked)) => Ok((ids, *chunked)),
            Err(e) => Err(e.clone()),
        }
    }
}

fn plan(tc: &TypeCode) -> Result<&ValuePlan> {
    tc.layout()
        .value
        .as_deref()
        .ok_or_else(|| mismatch("expected a valuetype or value box TypeCode"))
}

/// The repository ids a header of a value of type `tc` carries (its own,
/// then its truncatable bases while they are truncatable), and whether
/// the state is chunked: what the compiled code sends.
fn header(tc: &TypeCode) -> Result<(Vec<String>, bool)> {
    match tc.body() {
        Body::Value(v) => {
            match v.modifier {
                VM_CUSTOM => return Err(custom()),
                VM_ABSTRACT => return Err(mismatch("abstract valuetypes have no instances")),
                _ => {}
            }
            let mut ids = Vec::with_capacity(1);
            for t in base_chain(tc)? {
                ids.push(t.id()?.to_owned());
                match t.body() {
                    Body::Value(b) if b.modifier == VM_TRUNCATABLE => {}
                    _ => break,
                }
            }
            Ok((ids, v.modifier == VM_TRUNCATABLE))
        }
        _ => Ok((vec![tc.id()?.to_owned()], false)),
    }
}

/// The TypeCodes of the state members, in wire order.
fn state_types(tc: &TypeCode) -> Result<Vec<TypeCode>> {
    match tc.body() {
        Body::Value(_) => {
            let chain = base_chain(tc)?;
            let mut out = Vec::new();
            for t in chain.iter().rev() {
                if let Body::Value(v) = t.body() {
                    out.extend(v.members.iter().map(|m| m.tc.clone()));
                }
            }
            Ok(out)
        }
        Body::Alias { content, .. } => Ok(vec![content.clone()]),
        _ => Err(mismatch("expected a valuetype or value box TypeCode")),
    }
}

#[cold]
fn custom() -> DynError {
    DynError::NoImplement {
        minor: minor::NO_IMPLEMENT_NO_VALUE_IMPL,
        what: "custom valuetype: its state is marshaled by application code only",
    }
}

#[cold]
fn no_factory(what: &'static str) -> DynError {
    DynError::Marshal {
        minor: minor::MARSHAL_NO_VALUE_FACTORY,
        what,
    }
}

thread_local! {
    /// Values whose state is being decoded on this thread, by the input
    /// index of their tag: what an indirection closing a cycle points
    /// to. Pushed and popped in stack order (a guard pops on error), so
    /// a nested decode of another stream sees its own entries on top.
    static PENDING: RefCell<Vec<(usize, Pending)>> = const { RefCell::new(Vec::new()) };
}

/// A value whose state is being decoded.
enum Pending {
    /// Its type: no indirection has pointed back to it (yet).
    Type(TypeCode),
    /// The node made for an indirection that closes a cycle, its state
    /// filled in once read.
    Node(Arc<ValueNode>),
}

/// Pops the pending entries pushed since it was made.
struct PendingGuard(usize);

impl PendingGuard {
    fn push(at: usize, tc: TypeCode) -> Self {
        PENDING.with(|p| {
            let mut p = p.borrow_mut();
            let len = p.len();
            p.push((at, Pending::Type(tc)));
            PendingGuard(len)
        })
    }

    /// The node of the value this guard's entry stands for, with `state`.
    /// Only a value met again inside its own state has a node already
    /// (made without its state, which it takes now); any other is made
    /// now, complete.
    fn finish(self, state: Vec<DynValue>) -> Arc<ValueNode> {
        let entry = PENDING.with(|p| {
            let mut p = p.borrow_mut();
            let entry = p.pop();
            // Entries above ours were popped by their own guards.
            debug_assert_eq!(p.len(), self.0);
            entry
        });
        match entry {
            Some((_, Pending::Node(node))) => {
                node.fill(state);
                node
            }
            Some((_, Pending::Type(tc))) => Arc::new(ValueNode::unchecked(tc, state)),
            None => unreachable!("pushed by this guard"),
        }
    }
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        PENDING.with(|p| p.borrow_mut().truncate(self.0));
    }
}

/// The node of the value at input index `at` whose state is being
/// decoded, made now if this is the first indirection back to it.
fn pending(at: usize) -> Option<Arc<ValueNode>> {
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        let (_, entry) = p.iter_mut().rev().find(|(pos, _)| *pos == at)?;
        Some(match entry {
            Pending::Node(node) => node.clone(),
            Pending::Type(tc) => {
                let node = Arc::new(ValueNode::unset(tc.clone()));
                *entry = Pending::Node(node.clone());
                node
            }
        })
    })
}

/// Reads a value for a slot of type `formal` (a valuetype or value box;
/// `None` in an abstract interface, where any registered type goes).
pub(crate) fn decode_valuetype(formal: Option<&TypeCode>, r: &mut Reader<'_>) -> Result<DynValue> {
    let info = match r.read_value_start()? {
        ValueStart::Null => return Ok(DynValue::Value(None)),
        ValueStart::Shared(v) => {
            // The reader holds the decoder's nodes (`finish_value_as`).
            let node = Arc::clone(
                &*v.downcast::<Arc<ValueNode>>()
                    .map_err(|_| no_factory("indirection to a value of another decoder"))?,
            );
            check_fits(formal, &node)?;
            return Ok(DynValue::Value(Some(ValueLink::new(node))));
        }
        ValueStart::Cycle(at) => {
            let node = pending(at).ok_or(DynError::Cdr(CdrError::UnsupportedCycle))?;
            check_fits(formal, &node)?;
            return Ok(DynValue::Value(Some(ValueLink::weak(&node))));
        }
        ValueStart::New(info) => info,
    };
    let tc = choose_type(formal, &info)?;
    if matches!(tc.body(), Body::Value(v) if v.modifier == VM_CUSTOM) {
        let read = tc.id().ok().and_then(custom_reader).ok_or_else(custom)?;
        let obj = r.without_value_scope(|r| read(r, &info))?;
        let node = Arc::new(ValueNode::with_object(tc, obj));
        r.finish_value_as(&info, node.clone())?;
        return Ok(DynValue::Value(Some(ValueLink::new(node))));
    }
    let types = plan(&tc)?.state()?;
    let mut state = Vec::with_capacity(types.len());
    // The node is made once the state is read (see `PendingGuard::finish`).
    let guard = PendingGuard::push(info.pos, tc.clone());
    for t in types {
        state.push(decode_value(t, r)?);
    }
    let node = guard.finish(state);
    r.finish_value_as(&info, node.clone())?;
    Ok(DynValue::Value(Some(ValueLink::new(node))))
}

/// Reads an abstract interface: an object reference or a value.
pub(crate) fn decode_abstract(r: &mut Reader<'_>) -> Result<DynValue> {
    if r.read_bool()? {
        let ior = <peregrine_giop::Ior as peregrine_cdr::Decode>::decode(r)?;
        Ok(DynValue::ObjRef(Box::new(ior)))
    } else {
        decode_valuetype(None, r)
    }
}

/// A value met again (an indirection) must fit the slot too.
fn check_fits(formal: Option<&TypeCode>, node: &ValueNode) -> Result<()> {
    match formal {
        Some(f) if !is_type(f, node.type_code()) && !fits(f, node.type_code()) => Err(no_factory(
            "indirection to a value of a type not derived from the formal type",
        )),
        _ => Ok(()),
    }
}

/// True when a value of type `t` may fill a slot of type `formal`.
fn fits(formal: &TypeCode, t: &TypeCode) -> bool {
    let Ok(fid) = formal.id() else { return false };
    match formal.kind() {
        TcKind::Value if fid == VALUE_BASE_ID => true,
        TcKind::Value => t.kind() == TcKind::Value && derives_from(t, fid),
        _ => t.kind() == TcKind::ValueBox && t.id() == Ok(fid),
    }
}

/// The type to read the value whose header is `info` as (see the module
/// docs).
fn choose_type(formal: Option<&TypeCode>, info: &ValueInfo<'_>) -> Result<TypeCode> {
    // A `ValueBase` slot takes any value of a known type, as an abstract
    // interface's does (`ValueBase` itself has no instances).
    let formal = formal.filter(|f| f.id() != Ok(VALUE_BASE_ID));
    let ids = info.ids.as_slice();
    let chosen = if ids.is_empty() {
        // Resolved: the formal type may be a recursive placeholder.
        formal
            .ok_or_else(|| no_factory("value without a repository id where any value may be"))?
            .resolve()?
    } else {
        let mut found = None;
        for (i, id) in ids.iter().enumerate() {
            // Only a chunked state can be cut down to a base's.
            if i > 0 && !info.chunked {
                break;
            }
            if let Some(f) = formal {
                if f.id() == Ok(*id) {
                    found = Some(f.resolve()?);
                    break;
                }
            }
            if let Some(t) = lookup_value_type(id) {
                if formal.map_or(true, |f| fits(f, &t)) {
                    found = Some(t);
                    break;
                }
            }
        }
        found.ok_or_else(|| {
            no_factory("value of a type neither known nor truncatable to the formal type")
        })?
    };
    match chosen.body() {
        Body::Value(v) if v.modifier == VM_ABSTRACT => {
            Err(no_factory("value claims an abstract valuetype"))
        }
        _ => Ok(chosen),
    }
}
