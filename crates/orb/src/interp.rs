//! The engine of interpreted stubs and skeletons (after TAO's
//! `do_static_call` and its table-driven skeletons).
//!
//! An interface generated with `Marshal::Interpreted` keeps the public API
//! of the compiled form (the same servant trait, `IRef` methods and
//! `ISkeleton`), but its per-operation code only builds an argument array
//! and calls one routine of this module, which walks a static
//! per-operation table ([`OpDesc`]: name, result, parameter modes and
//! types, user exceptions):
//!
//! * client: [`call`] (twoway) and [`call_oneway`] encode the `in` and
//!   `inout` arguments in table order, send the request, and decode the
//!   return value then the `inout`/`out` arguments into slots on the
//!   stub's stack ([`Out`], [`InOut`]); no heap is used for results beyond
//!   what the values themselves own.
//! * server: [`read_args`] decodes `in`/`inout` arguments into [`Val`]
//!   slots on the skeleton handler's stack (strings and octet sequences
//!   borrowed from the request buffer), the handler calls the servant, and
//!   [`write_results`] encodes the return value and `inout`/`out`
//!   arguments while the handler's activation record is still alive
//!   (seed 004, IV-C: no heap for `inout`/`out`/`return`).
//!
//! Marshaling of each type is shared by every operation: an argument is a
//! `&mut dyn Param` (client) or `&mut dyn Slot` / `&dyn Reply` (server),
//! whose vtable — generated once per Rust type by the compiler, not per
//! operation — holds the type's marshaling code. Two families of entries:
//!
//! * plain ([`In`], [`InOut`], [`Out`], [`Val`]): the type's own
//!   `Encode`/`Decode` (numbers, unbounded strings and sequences, structs,
//!   unions, enums, `any`, `TypeCode`); the table's [`TypeDesc`] is not
//!   consulted.
//! * typed ([`TIn`], [`TInOut`], [`TOut`], [`TVal`]): the [`Put`] and
//!   [`Take`] entries of the Rust type, driven by the [`TypeDesc`]'s
//!   [`Kind`]: the bound of a bounded `string`/`wstring`/`sequence` lives
//!   in the descriptor and is checked on encode and decode exactly as the
//!   compiled form does (`CdrError::BoundExceeded`, i.e. `BAD_PARAM`);
//!   `wstring`/`wchar` use the connection's negotiated code sets carried
//!   by the [`Reader`]/[`Writer`]; object references (`Option<IRef>`,
//!   `Option<ObjectRef>`, abstract interfaces `Option<IAbstract>`, or
//!   named types holding them; see [`Nullable`]) are decoded through the
//!   decode context [`Cx`], which carries the ORB (the stub's
//!   `ObjectRef::orb`, the request's ORB on the server).
//!
//! The bytes on the wire are those of the compiled form: the same
//! primitive writes and checks run in the same order.
//!
//! Only the public runtime contract ([`ObjectRef::invoke`],
//! [`ServerRequest`]) is used, so the engine works with any transport.

use std::cell::Cell;

use peregrine_cdr::{Decode, Encode, Reader, ValueObject, ValueSlot, Writer};

use peregrine_cdr::CdrError;

use crate::context::Context;
use crate::orb::Orb;
use crate::runtime::{CompletionStatus, ObjectRef, ServerRequest, SystemException};

/// Parameter passing mode of an IDL operation parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `in`: sent with the request.
    In,
    /// `inout`: sent with the request and returned with the reply.
    InOut,
    /// `out`: returned with the reply.
    Out,
}

/// What an operation table says about a type.
#[derive(Debug)]
pub struct TypeDesc {
    /// The IDL type as written (`short`, `string`, `::StrSeq`).
    pub idl: &'static str,
    /// The type's TypeCode, when the generator emits one.
    pub type_code: Option<fn() -> peregrine_dynamic::TypeCode>,
    /// How the typed entries ([`Put`], [`Take`]) marshal the type.
    pub kind: Kind,
}

/// The structure of a type as the typed entries see it (aliases
/// resolved). Bounds are `u32::MAX` when unbounded.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// The Rust type's own `Encode`/`Decode` (numbers, `wchar`, named
    /// types, `any`, `TypeCode`).
    Plain,
    /// `string` / `string<N>` (the bound counts octets).
    String(u32),
    /// `wstring` / `wstring<N>` (the bound counts characters).
    WString(u32),
    /// `sequence<T>` / `sequence<T, N>`, with the element's descriptor.
    Sequence(u32, &'static TypeDesc),
    /// An array; the element's descriptor (an array of the remaining
    /// dimensions for a multi-dimensional one). The length is the Rust
    /// type's.
    Array(&'static TypeDesc),
    /// `Object` or an interface: a possibly nil reference; or an abstract
    /// interface (a reference or a value, see [`Nullable`]).
    Object,
    /// `ValueBase`: a value of any type, read by the generated code's
    /// reader of such slots (it knows the concrete value types of its
    /// IDL); written through the value's `ValueObject`.
    ValueBase(ReadValueBase),
    /// An abstract valuetype: a value of any concrete type derived from
    /// it, read by the generated code's reader of such slots (the
    /// [`SlotValue`] entry of its trait object); written through the
    /// value's `ValueObject`.
    AbstractValue,
}

/// How a [`Kind::ValueBase`] slot is read: null, a value met before, or a
/// new value of a type the generated code (or a registered factory)
/// knows; with the call's ORB, which the generated reader hands to the
/// reader when some value it knows holds object references.
pub type ReadValueBase =
    for<'a> fn(
        &mut Reader<'a>,
        &Orb,
    ) -> peregrine_cdr::Result<peregrine_cdr::ValueSlot<dyn ValueObject>>;

impl TypeDesc {
    /// A descriptor of a type marshaled by its own `Encode`/`Decode`.
    pub const fn plain(idl: &'static str) -> TypeDesc {
        TypeDesc {
            idl,
            type_code: None,
            kind: Kind::Plain,
        }
    }
}

/// The decode context of typed entries: what decoding needs beyond the
/// reader (the ORB, to bind object references). The code sets are the
/// reader's.
#[derive(Clone, Copy)]
pub struct Cx<'a> {
    orb: &'a Orb,
}

impl<'a> Cx<'a> {
    /// A context binding references to `orb`.
    #[inline]
    pub fn new(orb: &'a Orb) -> Self {
        Cx { orb }
    }

    /// The ORB references are bound to.
    #[inline]
    pub fn orb(&self) -> &'a Orb {
        self.orb
    }
}

/// One parameter of an operation table.
#[derive(Debug)]
pub struct ParamDesc {
    /// The IDL parameter name.
    pub name: &'static str,
    /// Its passing mode.
    pub mode: Mode,
    /// Its type.
    pub ty: &'static TypeDesc,
}

/// The table of one operation: everything the engine needs to marshal a
/// request and its reply in the order the compiled form does.
#[derive(Debug)]
pub struct OpDesc {
    /// The operation name on the wire (`_get_x`/`_set_x` for attributes).
    pub name: &'static str,
    /// `oneway`: no reply.
    pub oneway: bool,
    /// The result type (`None` for `void`).
    pub result: Option<&'static TypeDesc>,
    /// The parameters in IDL order.
    pub params: &'static [ParamDesc],
    /// Repository ids of the user exceptions the operation raises.
    pub raises: &'static [&'static str],
    /// The patterns of the operation's IDL `context` clause (empty
    /// without one): the properties of the caller's [`Context`] they
    /// select follow the arguments.
    pub contexts: &'static [&'static str],
}

impl OpDesc {
    /// Bytes of static data this table occupies: the descriptor, its
    /// parameter array, exception list and the strings they point to
    /// (the [`TypeDesc`]s are shared by every operation using the type and
    /// are not counted).
    pub fn footprint(&self) -> usize {
        std::mem::size_of::<OpDesc>()
            + self.name.len()
            + std::mem::size_of_val(self.params)
            + self.params.iter().map(|p| p.name.len()).sum::<usize>()
            + std::mem::size_of_val(self.raises)
            + self.raises.iter().map(|r| r.len()).sum::<usize>()
            + std::mem::size_of_val(self.contexts)
            + self.contexts.iter().map(|c| c.len()).sum::<usize>()
    }

    /// Number of values in a reply: the result (if any), then every
    /// `inout` and `out` parameter.
    pub fn reply_values(&self) -> usize {
        usize::from(self.result.is_some())
            + self.params.iter().filter(|p| p.mode != Mode::In).count()
    }

    /// Number of values in a request: every `in` and `inout` parameter.
    pub fn request_values(&self) -> usize {
        self.params.iter().filter(|p| p.mode != Mode::Out).count()
    }
}

/// A user exception a stub can decode: its repository id and a decoder
/// into the operation's error type (the context binds references the
/// exception holds).
pub struct ExcDesc<E> {
    /// The exception's repository id.
    pub id: &'static str,
    /// Decodes the members (after the id) into the error type.
    pub decode: for<'a, 'b> fn(&mut Reader<'a>, &Cx<'b>) -> peregrine_cdr::Result<E>,
}

/// A client-side argument: `in` arguments encode, `out` slots decode,
/// `inout` ones do both. Implemented by [`In`], [`InOut`] and [`Out`] for
/// every type with `Encode`/`Decode` (the descriptor is not consulted),
/// and by [`TIn`], [`TInOut`] and [`TOut`] for every type with [`Put`] /
/// [`Take`] (driven by the descriptor); the vtable of each is the type's
/// shared marshal entry.
pub trait Param {
    /// Writes the argument (of type `ty`) into the request; nothing for
    /// an `out` slot.
    fn put(&self, ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        let _ = (ty, w);
        Ok(())
    }
    /// Reads the argument's new value (of type `ty`) from the reply;
    /// nothing for an `in` argument.
    fn get(&mut self, ty: &TypeDesc, cx: &Cx<'_>, r: &mut Reader<'_>) -> peregrine_cdr::Result<()> {
        let _ = (ty, cx, r);
        Ok(())
    }
}

/// An `in` argument (borrowed).
pub struct In<'a, T: ?Sized>(pub &'a T);

/// An `inout` argument: encoded from and decoded into the caller's value.
pub struct InOut<'a, T>(pub &'a mut T);

/// An `out` argument or the return value: a slot on the stub's stack.
pub struct Out<T>(Option<T>);

impl<T> Out<T> {
    /// An empty slot.
    #[inline]
    pub const fn new() -> Self {
        Out(None)
    }

    /// The decoded value. The engine fills every slot of a successful
    /// call, so an empty slot is a bug of the generator.
    #[inline]
    pub fn value(self) -> T {
        val(self.0)
    }
}

impl<T> Default for Out<T> {
    fn default() -> Self {
        Out::new()
    }
}

impl<T: Encode + ?Sized> Param for In<'_, T> {
    fn put(&self, _ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.0.encode(w)
    }
}

impl<T: Encode + for<'de> Decode<'de>> Param for InOut<'_, T> {
    fn put(&self, _ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.0.encode(w)
    }
    fn get(
        &mut self,
        _ty: &TypeDesc,
        _cx: &Cx<'_>,
        r: &mut Reader<'_>,
    ) -> peregrine_cdr::Result<()> {
        *self.0 = T::decode(r)?;
        Ok(())
    }
}

impl<T: for<'de> Decode<'de>> Param for Out<T> {
    fn get(
        &mut self,
        _ty: &TypeDesc,
        _cx: &Cx<'_>,
        r: &mut Reader<'_>,
    ) -> peregrine_cdr::Result<()> {
        self.0 = Some(T::decode(r)?);
        Ok(())
    }
}

/// A typed `in` argument (borrowed): marshaled by its [`Put`] entry.
pub struct TIn<'a, T: ?Sized>(pub &'a T);

/// A typed `inout` argument: [`Put`] then [`Take`] on the caller's value.
pub struct TInOut<'a, T>(pub &'a mut T);

/// A typed `out` argument or return value: a slot on the stub's stack,
/// filled by the type's [`Take`] entry.
pub struct TOut<T>(Option<T>);

impl<T> TOut<T> {
    /// An empty slot.
    #[inline]
    pub const fn new() -> Self {
        TOut(None)
    }

    /// The decoded value (see [`Out::value`]).
    #[inline]
    pub fn value(self) -> T {
        val(self.0)
    }
}

impl<T> Default for TOut<T> {
    fn default() -> Self {
        TOut::new()
    }
}

impl<T: Put + ?Sized> Param for TIn<'_, T> {
    fn put(&self, ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.0.put(ty, w)
    }
}

impl<T: Put + for<'de> Take<'de>> Param for TInOut<'_, T> {
    fn put(&self, ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.0.put(ty, w)
    }
    fn get(&mut self, ty: &TypeDesc, cx: &Cx<'_>, r: &mut Reader<'_>) -> peregrine_cdr::Result<()> {
        *self.0 = T::take(ty, cx, r)?;
        Ok(())
    }
}

impl<T: for<'de> Take<'de>> Param for TOut<T> {
    fn get(&mut self, ty: &TypeDesc, cx: &Cx<'_>, r: &mut Reader<'_>) -> peregrine_cdr::Result<()> {
        self.0 = Some(T::take(ty, cx, r)?);
        Ok(())
    }
}

/// The value of a slot the engine filled.
#[inline]
pub fn val<T>(slot: Option<T>) -> T {
    match slot {
        Some(v) => v,
        None => unfilled(),
    }
}

#[cold]
#[inline(never)]
fn unfilled() -> ! {
    panic!("interpreted stub: a result slot was not filled (generator and table disagree)")
}

/// Encodes the `in`/`inout` arguments of `params` (table order), then,
/// for an operation with a `context` clause, the properties of `ctx` it
/// selects (none when `ctx` is `None`).
fn put_args(
    op: &OpDesc,
    params: &[&mut dyn Param],
    ctx: Option<&Context>,
    w: &mut Writer,
) -> peregrine_cdr::Result<()> {
    debug_assert_eq!(params.len(), op.params.len(), "{}: arguments", op.name);
    for (d, a) in op.params.iter().zip(params) {
        if d.mode != Mode::Out {
            a.put(d.ty, w)?;
        }
    }
    if !op.contexts.is_empty() {
        match ctx {
            Some(c) => c.encode_matching(op.contexts, w)?,
            None => Context::new().encode_matching(op.contexts, w)?,
        }
    }
    Ok(())
}

/// The generic client routine of interpreted stubs (TAO's
/// `do_static_call`): a twoway call of `op` on `obj`. `args` holds the
/// return-value slot first (when `op.result` is set), then one argument
/// per parameter in IDL order; `raises` decodes the user exceptions.
pub fn call<E: From<SystemException>>(
    obj: &ObjectRef,
    op: &'static OpDesc,
    raises: &[ExcDesc<E>],
    args: &mut [&mut dyn Param],
) -> Result<(), E> {
    call_in_context(obj, op, raises, args, None)
}

/// [`call`] for an operation with a `context` clause: the properties of
/// `ctx` that `op.contexts` selects follow the arguments.
pub fn call_in_context<E: From<SystemException>>(
    obj: &ObjectRef,
    op: &'static OpDesc,
    raises: &[ExcDesc<E>],
    args: &mut [&mut dyn Param],
    ctx: Option<&Context>,
) -> Result<(), E> {
    // The request is encoded before the reply is decoded, but both
    // closures are handed over at once: the arguments pass from one to
    // the other through a cell.
    let args = Cell::new(Some(args));
    let cx = Cx::new(obj.orb());
    obj.invoke(
        op.name,
        |w| {
            let a = args.take().unwrap_or_default();
            let skip = usize::from(op.result.is_some()).min(a.len());
            let r = put_args(op, &a[skip..], ctx, w);
            args.set(Some(a));
            r
        },
        |r| {
            let a = args.take().unwrap_or_default();
            let (ret, params) = a.split_at_mut(usize::from(op.result.is_some()).min(a.len()));
            if let (Some(ret), Some(ty)) = (ret.first_mut(), op.result) {
                ret.get(ty, &cx, r)?;
            }
            for (d, p) in op.params.iter().zip(params.iter_mut()) {
                if d.mode != Mode::In {
                    p.get(d.ty, &cx, r)?;
                }
            }
            Ok(())
        },
        |id, r| {
            raises
                .iter()
                .find(|e| e.id == id)
                .map(|e| (e.decode)(r, &cx))
        },
    )
}

/// The generic client routine for a `oneway` operation: encodes the
/// arguments (`args`: one per parameter, all `in`) and sends.
pub fn call_oneway(
    obj: &ObjectRef,
    op: &'static OpDesc,
    args: &[&mut dyn Param],
) -> Result<(), SystemException> {
    call_oneway_in_context(obj, op, args, None)
}

/// [`call_oneway`] for an operation with a `context` clause.
pub fn call_oneway_in_context(
    obj: &ObjectRef,
    op: &'static OpDesc,
    args: &[&mut dyn Param],
    ctx: Option<&Context>,
) -> Result<(), SystemException> {
    obj.invoke_oneway(op.name, |w| put_args(op, args, ctx, w))
}

/// A server-side slot for an `in`/`inout` argument: [`Val<T>`] (or
/// `Option<T>`) for every `T: Decode<'de>` (`Cow<'de, str>` and
/// `&'de [u8]` borrow from the request buffer).
pub trait Slot<'de> {
    /// Decodes the argument (of type `ty`) into the slot.
    fn fill(
        &mut self,
        ty: &TypeDesc,
        cx: &Cx<'_>,
        r: &mut Reader<'de>,
    ) -> peregrine_cdr::Result<()>;
}

impl<'de, T: Decode<'de>> Slot<'de> for Option<T> {
    fn fill(
        &mut self,
        _ty: &TypeDesc,
        _cx: &Cx<'_>,
        r: &mut Reader<'de>,
    ) -> peregrine_cdr::Result<()> {
        *self = Some(T::decode(r)?);
        Ok(())
    }
}

/// A value held by an interpreted skeleton handler (an argument slot,
/// the return value, an `out` value) whose drop is one out-of-line
/// function per type, shared by every handler, instead of drop glue
/// inlined into each handler on its normal and unwind paths.
pub struct Val<T>(std::mem::ManuallyDrop<Option<T>>);

impl<T> Val<T> {
    /// An empty slot, filled by [`read_args`].
    #[inline]
    pub const fn empty() -> Self {
        Val(std::mem::ManuallyDrop::new(None))
    }

    /// Holds `v`.
    #[inline]
    pub fn new(v: T) -> Self {
        Val(std::mem::ManuallyDrop::new(Some(v)))
    }

    /// The value (the engine filled the slot).
    #[inline]
    pub fn get(&self) -> &T {
        match &*self.0 {
            Some(v) => v,
            None => unfilled(),
        }
    }

    /// The value, mutably (an `inout` argument).
    #[inline]
    pub fn get_mut(&mut self) -> &mut T {
        match &mut *self.0 {
            Some(v) => v,
            None => unfilled(),
        }
    }
}

impl<T> Drop for Val<T> {
    #[inline(never)]
    fn drop(&mut self) {
        // SAFETY: the value is dropped here once, and never used after.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.0) }
    }
}

impl<'de, T: Decode<'de>> Slot<'de> for Val<T> {
    fn fill(
        &mut self,
        _ty: &TypeDesc,
        _cx: &Cx<'_>,
        r: &mut Reader<'de>,
    ) -> peregrine_cdr::Result<()> {
        *self.0 = Some(T::decode(r)?);
        Ok(())
    }
}

/// A typed value held by an interpreted skeleton handler: like [`Val`]
/// (same out-of-line drop), but filled by the type's [`Take`] entry and
/// written by its [`Put`] entry, driven by the table's [`TypeDesc`].
pub struct TVal<T>(Val<T>);

impl<T> TVal<T> {
    /// An empty slot, filled by [`read_args`].
    #[inline]
    pub const fn empty() -> Self {
        TVal(Val::empty())
    }

    /// Holds `v`.
    #[inline]
    pub fn new(v: T) -> Self {
        TVal(Val::new(v))
    }

    /// The value (the engine filled the slot).
    #[inline]
    pub fn get(&self) -> &T {
        self.0.get()
    }

    /// The value, mutably (an `inout` argument).
    #[inline]
    pub fn get_mut(&mut self) -> &mut T {
        self.0.get_mut()
    }
}

impl<'de, T: Take<'de>> Slot<'de> for TVal<T> {
    fn fill(
        &mut self,
        ty: &TypeDesc,
        cx: &Cx<'_>,
        r: &mut Reader<'de>,
    ) -> peregrine_cdr::Result<()> {
        *(self.0).0 = Some(T::take(ty, cx, r)?);
        Ok(())
    }
}

/// A server-side reply value: any `Encode` type (plain; the descriptor
/// is not consulted) or a [`TVal`] (typed).
pub trait Reply {
    /// Writes the value (of type `ty`) into the reply.
    fn put_reply(&self, ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()>;
}

impl<T: Encode + ?Sized> Reply for T {
    #[inline]
    fn put_reply(&self, _ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.encode(w)
    }
}

impl<T: Put> Reply for TVal<T> {
    #[inline]
    fn put_reply(&self, ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.get().put(ty, w)
    }
}

/// The generic argument routine of interpreted skeletons: decodes the
/// `in`/`inout` arguments of `op` (one slot each, in IDL order) from the
/// request. A decoding failure is the system exception the compiled form
/// raises (`COMPLETED_NO`).
pub fn read_args<'de>(
    req: &mut ServerRequest<'de>,
    op: &OpDesc,
    slots: &mut [&mut dyn Slot<'de>],
) -> Result<(), SystemException> {
    debug_assert_eq!(slots.len(), op.request_values(), "{}: slots", op.name);
    let cx = Cx::new(req.orb);
    let r = &mut req.args;
    let types = op.params.iter().filter(|p| p.mode != Mode::Out);
    for (s, d) in slots.iter_mut().zip(types) {
        s.fill(d.ty, &cx, r)?;
    }
    Ok(())
}

/// Reads the properties of an operation with a `context` clause, which
/// follow its arguments (after [`read_args`]). An odd number of strings is
/// `MARSHAL` (`MARSHAL_INVALID_CONTEXT`).
pub fn read_context(req: &mut ServerRequest<'_>) -> Result<Context, SystemException> {
    Context::decode(&mut req.args)
}

/// The generic reply routine of interpreted skeletons: writes the
/// NO_EXCEPTION reply of `op` with `values` (the return value, then the
/// `inout`/`out` arguments in IDL order), still on the handler's stack. An
/// encoding failure is a system exception with `COMPLETED_YES`.
pub fn write_results(
    req: &mut ServerRequest<'_>,
    op: &OpDesc,
    values: &[&dyn Reply],
) -> Result<(), SystemException> {
    debug_assert_eq!(values.len(), op.reply_values(), "{}: results", op.name);
    let w = req.reply();
    let types = op.result.into_iter().chain(
        op.params
            .iter()
            .filter(|p| p.mode != Mode::In)
            .map(|p| p.ty),
    );
    for (v, ty) in values.iter().zip(types) {
        v.put_reply(ty, w)
            .map_err(|e| SystemException::from_cdr(&e, CompletionStatus::Yes))?;
    }
    Ok(())
}

/// Writes a USER_EXCEPTION reply: the repository id `id`, then the
/// exception's members.
pub fn write_user_exception(
    req: &mut ServerRequest<'_>,
    id: &str,
    exc: &dyn Encode,
) -> Result<(), SystemException> {
    exc.encode(req.user_exception(id))
        .map_err(|e| SystemException::from_cdr(&e, CompletionStatus::Yes))
}

/// The typed encode entry of a Rust type: marshals a value as its
/// [`TypeDesc`] says (bounds, wide strings, references, elements).
/// Implemented here for the primitives, strings, sequences, arrays,
/// references, `any` and `TypeCode`, and by generated code for named IDL
/// types (through their `Encode`).
pub trait Put {
    /// Writes `self` as a value of type `ty`.
    fn put(&self, ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()>;

    /// Writes the elements of a sequence or array (no length), each of
    /// type `ty`. Types with a bulk `Encode::encode_slice` override this.
    #[inline]
    fn put_elems(items: &[Self], ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()>
    where
        Self: Sized,
    {
        items.iter().try_for_each(|x| x.put(ty, w))
    }
}

/// The typed decode entry of a Rust type (see [`Put`]); `'de` is the
/// input's lifetime (`Cow<'de, str>` and `&'de [u8]` borrow from it).
pub trait Take<'de>: Sized {
    /// Reads a value of type `ty`.
    fn take(ty: &TypeDesc, cx: &Cx<'_>, r: &mut Reader<'de>) -> peregrine_cdr::Result<Self>;

    /// Reads `n` elements of type `ty` (`n` already checked against the
    /// input, one octet per element). Types with a bulk
    /// `Decode::decode_vec` override this.
    #[inline]
    fn take_vec(
        ty: &TypeDesc,
        cx: &Cx<'_>,
        r: &mut Reader<'de>,
        n: usize,
    ) -> peregrine_cdr::Result<Vec<Self>> {
        let mut v = Vec::with_capacity(n.min(r.remaining() / std::mem::size_of::<Self>().max(1)));
        for _ in 0..n {
            v.push(Self::take(ty, cx, r)?);
        }
        Ok(v)
    }
}

/// The compiled form's bound check (`idl_rt::check_bound`).
#[inline]
fn check_bound(len: usize, bound: u32) -> peregrine_cdr::Result<()> {
    if len as u64 > u64::from(bound) {
        Err(CdrError::BoundExceeded {
            bound,
            len: len as u64,
        })
    } else {
        Ok(())
    }
}

#[cold]
#[inline(never)]
fn kind_mismatch(ty: &TypeDesc, rust: &str) -> ! {
    panic!(
        "interpreted table: type {:?} ({:?}) does not describe a Rust {rust} (generator and table disagree)",
        ty.idl, ty.kind
    )
}

/// Types whose typed entries are their `Encode`/`Decode` (bulk element
/// copies included).
macro_rules! plain_entries {
    ($($t:ty),* $(,)?) => {$(
        impl Put for $t {
            #[inline]
            fn put(&self, _ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
                Encode::encode(self, w)
            }
            #[inline]
            fn put_elems(items: &[Self], _ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
                <$t as Encode>::encode_slice(items, w)
            }
        }
        impl<'de> Take<'de> for $t {
            #[inline]
            fn take(_ty: &TypeDesc, _cx: &Cx<'_>, r: &mut Reader<'de>) -> peregrine_cdr::Result<Self> {
                <$t as Decode<'de>>::decode(r)
            }
            #[inline]
            fn take_vec(
                _ty: &TypeDesc,
                _cx: &Cx<'_>,
                r: &mut Reader<'de>,
                n: usize,
            ) -> peregrine_cdr::Result<Vec<Self>> {
                <$t as Decode<'de>>::decode_vec(r, n)
            }
        }
    )*};
}

plain_entries!(
    i16,
    i32,
    i64,
    u16,
    u32,
    u64,
    f32,
    f64,
    u8,
    bool,
    char,
    peregrine_dynamic::Any,
    peregrine_dynamic::TypeCode,
);

/// The values a `ValueSlot<Self>` of a table-driven operation holds, and
/// how the engine reads them: concrete valuetypes and value boxes (their
/// compiled `ValueType` code), `ValueBase` (`dyn ValueObject`, read by
/// the reader [`Kind::ValueBase`] carries) and abstract valuetypes (`dyn
/// V`, implemented by the generated code for its trait through
/// [`take_abstract`]). Every slot is written to the message's one writer
/// and read from its one reader, so values shared between arguments or
/// elements stay shared, and a value keeps its most derived type.
pub trait SlotValue: ValueObject {
    /// Reads a slot described by `ty`: null, a value met before in this
    /// message, or a new value (whose references, if its state holds
    /// any, are bound to `cx`'s ORB).
    fn take_slot(
        ty: &TypeDesc,
        cx: &Cx<'_>,
        r: &mut Reader<'_>,
    ) -> peregrine_cdr::Result<ValueSlot<Self>>;

    /// Writes `slot`: by default through the value's `ValueObject`.
    #[inline]
    fn put_slot(slot: &ValueSlot<Self>, w: &mut Writer) -> peregrine_cdr::Result<()> {
        peregrine_cdr::write_value_object(w, slot.get())
    }
}

/// A valuetype or value box (elements of bounded sequences and arrays
/// of values): the compiled `ValueType` code.
impl<T: peregrine_cdr::ValueType> SlotValue for T {
    #[inline]
    fn take_slot(
        _ty: &TypeDesc,
        cx: &Cx<'_>,
        r: &mut Reader<'_>,
    ) -> peregrine_cdr::Result<ValueSlot<T>> {
        if T::NEEDS_CONTEXT {
            // References in the state are bound to the call's ORB.
            r.set_value_context(|| std::sync::Arc::new(cx.orb().clone()));
        }
        <ValueSlot<T> as Decode<'_>>::decode(r)
    }

    #[inline]
    fn put_slot(slot: &ValueSlot<T>, w: &mut Writer) -> peregrine_cdr::Result<()> {
        Encode::encode(slot, w)
    }
}

/// `ValueBase`: read by the reader the descriptor carries
/// ([`Kind::ValueBase`]).
impl SlotValue for dyn ValueObject {
    #[inline]
    fn take_slot(
        ty: &TypeDesc,
        cx: &Cx<'_>,
        r: &mut Reader<'_>,
    ) -> peregrine_cdr::Result<ValueSlot<Self>> {
        let Kind::ValueBase(read) = ty.kind else {
            kind_mismatch(ty, "ValueSlot<dyn ValueObject>")
        };
        read(r, cx.orb())
    }
}

/// Reads a slot of an abstract valuetype (`ty` is [`Kind::AbstractValue`])
/// through `values`, the generated code's reader of the concrete
/// valuetypes derived from it: the [`SlotValue`] entry of `dyn V`.
pub fn take_abstract<V: ?Sized + Send + Sync + 'static>(
    ty: &TypeDesc,
    r: &mut Reader<'_>,
    values: &peregrine_cdr::Polymorphic<V>,
) -> peregrine_cdr::Result<ValueSlot<V>> {
    let Kind::AbstractValue = ty.kind else {
        kind_mismatch(ty, "ValueSlot<dyn V>")
    };
    values
        .read_value(r)
        .and_then(|v| v.ready())
        .map(ValueSlot::from)
}

/// A value slot of any kind ([`SlotValue`]).
impl<V: ?Sized + SlotValue> Put for ValueSlot<V> {
    #[inline]
    fn put(&self, _ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        V::put_slot(self, w)
    }
}

impl<'de, V: ?Sized + SlotValue> Take<'de> for ValueSlot<V> {
    #[inline]
    fn take(ty: &TypeDesc, cx: &Cx<'_>, r: &mut Reader<'de>) -> peregrine_cdr::Result<Self> {
        V::take_slot(ty, cx, r)
    }
}

/// `fixed<D, S>` (its `Encode`/`Decode`: packed BCD).
impl<const D: u16, const S: u16> Put for peregrine_cdr::FixedPoint<D, S> {
    #[inline]
    fn put(&self, _ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        Encode::encode(self, w)
    }
}

impl<'de, const D: u16, const S: u16> Take<'de> for peregrine_cdr::FixedPoint<D, S> {
    #[inline]
    fn take(_ty: &TypeDesc, _cx: &Cx<'_>, r: &mut Reader<'de>) -> peregrine_cdr::Result<Self> {
        <Self as Decode<'de>>::decode(r)
    }
}

/// `string`, `string<N>`, `wstring`, `wstring<N>`.
impl Put for str {
    fn put(&self, ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        match ty.kind {
            Kind::String(b) => {
                if b != u32::MAX {
                    check_bound(self.len(), b)?;
                }
                w.write_string(self)
            }
            Kind::WString(b) => {
                if b != u32::MAX {
                    check_bound(self.chars().count(), b)?;
                }
                w.write_wstring(self)
            }
            _ => kind_mismatch(ty, "string"),
        }
    }
}

impl Put for String {
    #[inline]
    fn put(&self, ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.as_str().put(ty, w)
    }
}

impl<'de> Take<'de> for String {
    fn take(ty: &TypeDesc, _cx: &Cx<'_>, r: &mut Reader<'de>) -> peregrine_cdr::Result<Self> {
        match ty.kind {
            Kind::String(b) => {
                let s = r.read_string()?;
                if b != u32::MAX {
                    check_bound(s.len(), b)?;
                }
                Ok(s)
            }
            Kind::WString(b) => {
                let s = r.read_wstring()?;
                if b != u32::MAX {
                    check_bound(s.chars().count(), b)?;
                }
                Ok(s)
            }
            _ => kind_mismatch(ty, "String"),
        }
    }
}

/// A skeleton's `in` string, borrowed from the request where the code
/// set allows (as the compiled handler's `decode_str`).
impl<'de> Take<'de> for std::borrow::Cow<'de, str> {
    fn take(ty: &TypeDesc, cx: &Cx<'_>, r: &mut Reader<'de>) -> peregrine_cdr::Result<Self> {
        match ty.kind {
            Kind::String(b) => {
                let s = r.read_str()?;
                check_bound(s.len(), b)?;
                Ok(s)
            }
            _ => String::take(ty, cx, r).map(std::borrow::Cow::Owned),
        }
    }
}

/// A skeleton's `in` `sequence<octet>`, borrowed from the request (as
/// the compiled handler's `decode_octets`: read, then bound-checked).
impl<'de> Take<'de> for &'de [u8] {
    fn take(ty: &TypeDesc, _cx: &Cx<'_>, r: &mut Reader<'de>) -> peregrine_cdr::Result<Self> {
        let Kind::Sequence(b, _) = ty.kind else {
            kind_mismatch(ty, "&[u8]")
        };
        let v = r.read_octet_seq()?;
        check_bound(v.len(), b)?;
        Ok(v)
    }
}

/// `sequence<T>` / `sequence<T, N>`: the bound is checked before the
/// length is written.
impl<T: Put> Put for [T] {
    fn put(&self, ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        let Kind::Sequence(b, elem) = ty.kind else {
            kind_mismatch(ty, "slice")
        };
        check_bound(self.len(), b)?;
        w.write_len(self.len())?;
        T::put_elems(self, elem, w)
    }
}

impl<T: Put> Put for Vec<T> {
    #[inline]
    fn put(&self, ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.as_slice().put(ty, w)
    }
}

/// The length is checked against the bound, then against the input,
/// before anything is reserved (the compiled form's `decode_bounded` /
/// `decode_seq`).
impl<'de, T: Take<'de>> Take<'de> for Vec<T> {
    fn take(ty: &TypeDesc, cx: &Cx<'_>, r: &mut Reader<'de>) -> peregrine_cdr::Result<Self> {
        let Kind::Sequence(b, elem) = ty.kind else {
            kind_mismatch(ty, "Vec")
        };
        let n = r.read_u32()?;
        check_bound(n as usize, b)?;
        let n = r.check_len(n, 1)?;
        T::take_vec(elem, cx, r, n)
    }
}

/// Arrays (no length on the wire).
impl<T: Put, const N: usize> Put for [T; N] {
    fn put(&self, ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        let Kind::Array(elem) = ty.kind else {
            kind_mismatch(ty, "array")
        };
        T::put_elems(self, elem, w)
    }
}

impl<'de, T: Take<'de>, const N: usize> Take<'de> for [T; N] {
    fn take(ty: &TypeDesc, cx: &Cx<'_>, r: &mut Reader<'de>) -> peregrine_cdr::Result<Self> {
        let Kind::Array(elem) = ty.kind else {
            kind_mismatch(ty, "array")
        };
        let mut v = Vec::with_capacity(N);
        for _ in 0..N {
            v.push(T::take(elem, cx, r)?);
        }
        v.try_into().map_err(|_| CdrError::Truncated {
            needed: N,
            remaining: 0,
        })
    }
}

/// The object reference types the engine marshals: [`ObjectRef`] or a
/// generated `IRef` (the one trait of the runtime, re-exported here).
pub use crate::runtime::Reference;

/// What the typed entries marshal as `Option<Self>`, `None` being nil:
/// object references (every [`Reference`]: the nil IOR), and the holders
/// of abstract interfaces, which generated code implements it for (a
/// boolean, then a reference or a value).
pub trait Nullable: Sized {
    /// Writes `v` (`None`: nil).
    fn put_opt(v: Option<&Self>, w: &mut Writer) -> peregrine_cdr::Result<()>;
    /// Reads a possibly nil instance; references are bound to the
    /// context's ORB.
    fn take_opt(cx: &Cx<'_>, r: &mut Reader<'_>) -> peregrine_cdr::Result<Option<Self>>;
}

/// A possibly nil reference (`None` is the nil IOR).
impl<R: Reference> Nullable for R {
    #[inline]
    fn put_opt(v: Option<&Self>, w: &mut Writer) -> peregrine_cdr::Result<()> {
        ObjectRef::encode_opt(v.map(Reference::object_ref), w)
    }
    #[inline]
    fn take_opt(cx: &Cx<'_>, r: &mut Reader<'_>) -> peregrine_cdr::Result<Option<Self>> {
        Ok(ObjectRef::decode(r, cx.orb())?.map(R::from_object_ref))
    }
}

impl<R: Nullable> Put for Option<R> {
    #[inline]
    fn put(&self, _ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        R::put_opt(self.as_ref(), w)
    }
}

/// A stub's `in` object reference (or abstract interface) argument
/// (`Option<&IRef>`, the compiled form's `encode_ref`).
pub struct RefIn<'a, R>(pub Option<&'a R>);

impl<R: Nullable> Param for RefIn<'_, R> {
    fn put(&self, _ty: &TypeDesc, w: &mut Writer) -> peregrine_cdr::Result<()> {
        R::put_opt(self.0, w)
    }
}

/// A reference (or abstract interface) bound to the context's ORB.
impl<'de, R: Nullable> Take<'de> for Option<R> {
    #[inline]
    fn take(_ty: &TypeDesc, cx: &Cx<'_>, r: &mut Reader<'de>) -> peregrine_cdr::Result<Self> {
        R::take_opt(cx, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_cdr::ByteOrder;

    static SHORT: TypeDesc = TypeDesc::plain("short");
    static OP: OpDesc = OpDesc {
        name: "test_short",
        oneway: false,
        result: Some(&SHORT),
        contexts: &[],
        params: &[
            ParamDesc {
                name: "s1",
                mode: Mode::In,
                ty: &SHORT,
            },
            ParamDesc {
                name: "s2",
                mode: Mode::InOut,
                ty: &SHORT,
            },
            ParamDesc {
                name: "s3",
                mode: Mode::Out,
                ty: &SHORT,
            },
        ],
        raises: &[],
    };

    #[test]
    fn table_counts_and_footprint() {
        assert_eq!(OP.request_values(), 2);
        assert_eq!(OP.reply_values(), 3);
        assert!(OP.footprint() > std::mem::size_of::<OpDesc>());
    }

    #[test]
    fn params_encode_and_decode_by_mode() {
        let s1 = 1i16;
        let mut s2 = 2i16;
        let mut s3 = Out::<i16>::new();
        let mut w = Writer::new(ByteOrder::NATIVE);
        {
            let args: [&mut dyn Param; 3] = [&mut In(&s1), &mut InOut(&mut s2), &mut s3];
            put_args(&OP, &args, None, &mut w).unwrap();
        }
        let bytes = w.into_vec();
        assert_eq!(bytes.len(), 4, "in and inout only");
        let mut r = Reader::new(&bytes, ByteOrder::NATIVE);
        let orb = Orb::builder().build().unwrap();
        let cx = Cx::new(&orb);
        InOut(&mut s2).get(&SHORT, &cx, &mut r).unwrap();
        s3.get(&SHORT, &cx, &mut r).unwrap();
        assert_eq!((s2, s3.value()), (1, 2));
    }
}
