//! The engine of interpreted stubs and skeletons (issue #6; seed 004,
//! section IV: TAO's `do_static_call` and its table-driven skeletons).
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
//! `&mut dyn Param` (client) or `&mut dyn Slot` / `&dyn Encode` (server),
//! whose vtable — generated once per Rust type by the compiler, not per
//! operation — holds the type's `Encode`/`Decode` code. The table's
//! [`TypeDesc`] describes the type (IDL name, TypeCode when the generator
//! provides one) for tools and checks; the walk itself needs only the
//! modes. The bytes on the wire are those of the compiled form: the same
//! `Encode`/`Decode` impls run in the same order.
//!
//! Only the public runtime contract ([`ObjectRef::invoke`],
//! [`ServerRequest`]) is used, so the engine works with any transport.

use std::cell::Cell;

use peregrine_cdr::{Decode, Encode, Reader, Writer};

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
/// into the operation's error type.
pub struct ExcDesc<E> {
    /// The exception's repository id.
    pub id: &'static str,
    /// Decodes the members (after the id) into the error type.
    pub decode: for<'a> fn(&mut Reader<'a>) -> peregrine_cdr::Result<E>,
}

/// A client-side argument: `in` arguments encode, `out` slots decode,
/// `inout` ones do both. Implemented by [`In`], [`InOut`] and [`Out`] for
/// every type with `Encode`/`Decode`; the vtable of each is the type's
/// shared marshal entry.
pub trait Param {
    /// Writes the argument into the request.
    fn put(&self, w: &mut Writer) -> peregrine_cdr::Result<()>;
    /// Reads the argument's new value from the reply.
    fn get(&mut self, r: &mut Reader<'_>) -> peregrine_cdr::Result<()>;
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
    fn put(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.0.encode(w)
    }
    fn get(&mut self, _r: &mut Reader<'_>) -> peregrine_cdr::Result<()> {
        Ok(())
    }
}

impl<T: Encode + for<'de> Decode<'de>> Param for InOut<'_, T> {
    fn put(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.0.encode(w)
    }
    fn get(&mut self, r: &mut Reader<'_>) -> peregrine_cdr::Result<()> {
        *self.0 = T::decode(r)?;
        Ok(())
    }
}

impl<T: for<'de> Decode<'de>> Param for Out<T> {
    fn put(&self, _w: &mut Writer) -> peregrine_cdr::Result<()> {
        Ok(())
    }
    fn get(&mut self, r: &mut Reader<'_>) -> peregrine_cdr::Result<()> {
        self.0 = Some(T::decode(r)?);
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

/// Encodes the `in`/`inout` arguments of `params` (table order).
fn put_args(op: &OpDesc, params: &[&mut dyn Param], w: &mut Writer) -> peregrine_cdr::Result<()> {
    debug_assert_eq!(params.len(), op.params.len(), "{}: arguments", op.name);
    for (d, a) in op.params.iter().zip(params) {
        if d.mode != Mode::Out {
            a.put(w)?;
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
    // The request is encoded before the reply is decoded, but both
    // closures are handed over at once: the arguments pass from one to
    // the other through a cell.
    let args = Cell::new(Some(args));
    obj.invoke(
        op.name,
        |w| {
            let a = args.take().unwrap_or_default();
            let skip = usize::from(op.result.is_some()).min(a.len());
            let r = put_args(op, &a[skip..], w);
            args.set(Some(a));
            r
        },
        |r| {
            let a = args.take().unwrap_or_default();
            let (ret, params) = a.split_at_mut(usize::from(op.result.is_some()).min(a.len()));
            if let Some(ret) = ret.first_mut() {
                ret.get(r)?;
            }
            for (d, p) in op.params.iter().zip(params.iter_mut()) {
                if d.mode != Mode::In {
                    p.get(r)?;
                }
            }
            Ok(())
        },
        |id, r| raises.iter().find(|e| e.id == id).map(|e| (e.decode)(r)),
    )
}

/// The generic client routine for a `oneway` operation: encodes the
/// arguments (`args`: one per parameter, all `in`) and sends.
pub fn call_oneway(
    obj: &ObjectRef,
    op: &'static OpDesc,
    args: &[&mut dyn Param],
) -> Result<(), SystemException> {
    obj.invoke_oneway(op.name, |w| put_args(op, args, w))
}

/// A server-side slot for an `in`/`inout` argument: [`Val<T>`] (or
/// `Option<T>`) for every `T: Decode<'de>` (`Cow<'de, str>` and
/// `&'de [u8]` borrow from the request buffer).
pub trait Slot<'de> {
    /// Decodes the argument into the slot.
    fn fill(&mut self, r: &mut Reader<'de>) -> peregrine_cdr::Result<()>;
}

impl<'de, T: Decode<'de>> Slot<'de> for Option<T> {
    fn fill(&mut self, r: &mut Reader<'de>) -> peregrine_cdr::Result<()> {
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
    fn fill(&mut self, r: &mut Reader<'de>) -> peregrine_cdr::Result<()> {
        *self.0 = Some(T::decode(r)?);
        Ok(())
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
    let r = req.args();
    for s in slots {
        s.fill(r)?;
    }
    Ok(())
}

/// The generic reply routine of interpreted skeletons: writes the
/// NO_EXCEPTION reply of `op` with `values` (the return value, then the
/// `inout`/`out` arguments in IDL order), still on the handler's stack. An
/// encoding failure is a system exception with `COMPLETED_YES`.
pub fn write_results(
    req: &mut ServerRequest<'_>,
    op: &OpDesc,
    values: &[&dyn Encode],
) -> Result<(), SystemException> {
    debug_assert_eq!(values.len(), op.reply_values(), "{}: results", op.name);
    let w = req.reply();
    for v in values {
        v.encode(w)
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

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_cdr::ByteOrder;

    static SHORT: TypeDesc = TypeDesc {
        idl: "short",
        type_code: None,
    };
    static OP: OpDesc = OpDesc {
        name: "test_short",
        oneway: false,
        result: Some(&SHORT),
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
            put_args(&OP, &args, &mut w).unwrap();
        }
        let bytes = w.into_vec();
        assert_eq!(bytes.len(), 4, "in and inout only");
        let mut r = Reader::new(&bytes, ByteOrder::NATIVE);
        InOut(&mut s2).get(&mut r).unwrap();
        s3.get(&mut r).unwrap();
        assert_eq!((s2, s3.value()), (1, 2));
    }
}
