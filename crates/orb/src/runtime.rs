//! The contract between the ORB and IDL-generated code.
//!
//! Generated stubs hold an [`ObjectRef`] and call [`ObjectRef::invoke`] /
//! [`ObjectRef::invoke_oneway`]; generated skeletons implement [`Servant`]
//! and read arguments from / write results to a [`ServerRequest`].
//!
//! # Changes to the agreed shapes
//!
//! None of the agreed names or signatures changed. Additions:
//! [`ObjectRef::invoke_with_tail`], [`ObjectRef::invoke_oneway_with_tail`],
//! [`ObjectRef::decode`], [`ObjectRef::encode_opt`],
//! [`ObjectRef::with_timeout`], [`ObjectRef::is_equivalent`],
//! [`ObjectRef::hash`], [`ObjectRef::from_ior`], [`ObjectRef::locate`],
//! [`ObjectRef::is_nil`], [`ObjectRef::non_nil`],
//! `impl Encode for ObjectRef`, the traits [`Reference`] (implemented by
//! every generated `IRef`) and [`Skeleton`] (every generated
//! `ISkeleton<S>`, naming its `IRef`), and the traits [`EncodeArgs`],
//! [`DecodeResult`] and [`DecodeUserException`], names for the closure
//! types the invoke signatures always took (any such closure implements
//! them).
//!
//! # How generated code marshals object references
//!
//! An IDL interface type `I` used as a parameter, result or member maps to
//! `Option<IRef>` (nil is `None`); on the wire it is an IOR.
//!
//! * Encode: `ObjectRef::encode_opt(value.map(|r| r.as_object_ref()), w)?`
//!   (or `obj_ref.encode(w)?` for a value known to be non-nil;
//!   `ObjectRef` implements [`peregrine_cdr::Encode`]).
//! * Decode needs the ORB the reference will talk through:
//!   `ObjectRef::decode(r, orb)?` returns `Option<ObjectRef>` (`None` for a
//!   nil reference). In a client's `decode_result` closure use the stub's
//!   `self.obj.orb()`; in a skeleton use [`ServerRequest::orb`].
//!   Narrowing to `IRef` is the generated code's business: wrap the
//!   `ObjectRef` unchecked, or call [`ObjectRef::is_a`] first for a
//!   checked narrow.
//!
//! # Invocation semantics
//!
//! * Every call has a finite deadline (ORB default, overridable per
//!   reference with [`ObjectRef::with_timeout`]); expiry raises `TIMEOUT`
//!   (`COMPLETED_MAYBE` once the request was sent).
//! * A connection that drops fails every call pending on it at once with
//!   `COMM_FAILURE` `COMPLETED_MAYBE`; a request that may have executed is
//!   never re-sent. Requests the server provably did not process
//!   (CloseConnection before a reply, connect failures) are retried.
//! * `LOCATION_FORWARD`/`LOCATION_FORWARD_PERM` replies are followed
//!   transparently.
//! * A user exception whose repository id `decode_user_exception` does not
//!   know (returns `None`) becomes `UNKNOWN` minor 1 (`COMPLETED_YES`); a
//!   result or exception that fails to decode becomes `MARSHAL`
//!   `COMPLETED_YES`; arguments that fail to encode become the
//!   [`SystemException::from_cdr`] mapping with `COMPLETED_NO`.

pub use crate::client::DeferredCall;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use peregrine_cdr::{Encode, GiopVersion, Reader, Writer};
/// The minor codes of system exceptions (the OMG's and Peregrine's), for
/// servants that raise them and callers that match on them.
pub use peregrine_giop::system_exception::minor;
use peregrine_giop::Ior;
pub use peregrine_giop::{Cause, CompletionStatus, Phase, SystemException, SystemExceptionKind};

use crate::client::{self, RefInner};
use crate::orb::Orb;

/// A stub's argument encoder: writes a request's `in` and `inout`
/// arguments (the closure given to [`ObjectRef::invoke`] and its kin).
pub trait EncodeArgs: FnOnce(&mut Writer) -> peregrine_cdr::Result<()> {}
impl<F: FnOnce(&mut Writer) -> peregrine_cdr::Result<()>> EncodeArgs for F {}

/// A stub's result decoder: reads a reply's return value, then its
/// `inout` and `out` arguments.
pub trait DecodeResult<T>: for<'a> FnOnce(&mut Reader<'a>) -> peregrine_cdr::Result<T> {}
impl<T, F: for<'a> FnOnce(&mut Reader<'a>) -> peregrine_cdr::Result<T>> DecodeResult<T> for F {}

/// A stub's user exception decoder: given the repository id (already
/// read), decodes the members of an exception the operation raises, or
/// returns `None` for an id it does not know.
pub trait DecodeUserException<E>:
    for<'a> FnOnce(&str, &mut Reader<'a>) -> Option<peregrine_cdr::Result<E>>
{
}
impl<E, F> DecodeUserException<E> for F where
    F: for<'a> FnOnce(&str, &mut Reader<'a>) -> Option<peregrine_cdr::Result<E>>
{
}

/// Client side: an object reference (cheap to clone: `Arc` inside).
/// Shares the ORB's connection cache: every reference to one endpoint uses
/// the same connection(s).
///
/// Generated stubs (`IRef`) wrap one and add the interface's operations;
/// on its own it offers `CORBA::Object`'s (`is_a`, `non_existent`,
/// `locate`, `is_equivalent`, `hash`), per-reference policies
/// ([`ObjectRef::with_timeout`], [`ObjectRef::with_sync_scope`]) and
/// untyped calls ([`ObjectRef::invoke`], [`ObjectRef::request`] for DII).
///
/// ```
/// # use std::sync::Arc;
/// # use peregrine_orb::{CompletionStatus, ObjectRef, Servant, ServerRequest, Skeleton, SystemException, SystemExceptionKind};
/// # struct Greeter;
/// # impl Servant for Greeter {
/// #     fn repository_id(&self) -> &'static str { "IDL:Demo/Greeter:1.0" }
/// #     fn is_a(&self, id: &str) -> bool { id == self.repository_id() }
/// #     fn dispatch(&self, req: &mut ServerRequest<'_>) -> Result<(), SystemException> {
/// #         match req.operation() {
/// #             "greet" => {
/// #                 let name = req.args().read_string()?;
/// #                 req.reply().write_string(&format!("hello, {name}"))?;
/// #                 Ok(())
/// #             }
/// #             _ => Err(SystemException::new(SystemExceptionKind::BadOperation, peregrine_orb::minor::BAD_OPERATION_UNKNOWN_OPERATION, CompletionStatus::No)),
/// #         }
/// #     }
/// # }
/// # impl Skeleton for Greeter { type Reference = ObjectRef; }
/// use std::time::Duration;
/// use peregrine_orb::Orb;
///
/// # let server = Orb::builder().listen("127.0.0.1", 0).build()?;
/// # let root = server.root_poa();
/// # root.manager().activate()?;
/// # server.bind_object_key("Greeter", &root.servant_to_reference(&Arc::new(Greeter))?)?;
/// # let port = server.listen_addrs()[0].port();
/// let orb = Orb::builder().build()?;
/// let obj = orb.string_to_object(&format!("corbaloc::127.0.0.1:{port}/Greeter"))?;
/// assert!(!obj.is_nil());
/// assert!(obj.locate()?); // a LocateRequest: the server has it
/// assert!(obj.is_a("IDL:Demo/Greeter:1.0")?); // a remote `_is_a`
///
/// // A shorter deadline for this reference only.
/// let quick = obj.with_timeout(Duration::from_millis(500));
/// let hello: String = quick.invoke(
///     "greet",
///     |w| w.write_string("Bob"),
///     |r| r.read_string(),
///     |_, _| None::<peregrine_cdr::Result<SystemException>>,
/// )?;
/// assert_eq!(hello, "hello, Bob");
///
/// // An operation the servant does not have.
/// let err = obj
///     .invoke("nope", |_| Ok(()), |_| Ok(()), |_, _| None::<peregrine_cdr::Result<SystemException>>)
///     .unwrap_err();
/// assert_eq!(err.kind, SystemExceptionKind::BadOperation);
/// # orb.shutdown(true);
/// # server.shutdown(true);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct ObjectRef {
    pub(crate) inner: Arc<RefInner>,
}

impl ObjectRef {
    /// A reference for `ior` that talks through `orb`. Prefer
    /// [`Orb::object_from_ior`], which returns `None` for a nil IOR.
    pub fn from_ior(orb: &Orb, ior: Ior) -> ObjectRef {
        ObjectRef {
            inner: Arc::new(RefInner::new(orb.clone(), ior, None)),
        }
    }

    /// A twoway invocation of `op`: `encode_args` writes the `in`/`inout`
    /// arguments, `decode_result` reads the return value then the
    /// `inout`/`out` arguments, `decode_user_exception` decodes the members
    /// of a user exception whose repository id it knows (after the id).
    ///
    /// The decoders run on the reply in place, while the calling thread
    /// still reads the connection for everyone (no copy, one lock less):
    /// they must only decode. A decoder that invoked another operation on
    /// the same server would wait for a reader that is itself, until its
    /// call's deadline (`TIMEOUT`).
    pub fn invoke<T, E: From<SystemException>>(
        &self,
        op: &str,
        encode_args: impl EncodeArgs,
        decode_result: impl DecodeResult<T>,
        decode_user_exception: impl DecodeUserException<E>,
    ) -> Result<T, E> {
        client::invoke(self, op, encode_args, decode_result, decode_user_exception)
    }

    /// [`ObjectRef::invoke`] for an operation whose last `in` (or
    /// `inout`) argument is a sequence of primitives or plain structs:
    /// `encode_args` writes the arguments before it and `tail` is encoded
    /// last. A large tail in the sender's byte order is not copied into
    /// the request buffer: the request goes out in one vectored write of
    /// the buffer and the caller's memory (TAO chains large sequences the
    /// same way). The bytes on the wire are the same either way; a
    /// request above the fragment size, and every `SYNC_NONE` oneway,
    /// copy the tail as before.
    pub fn invoke_with_tail<T, E: From<SystemException>>(
        &self,
        op: &str,
        encode_args: impl EncodeArgs,
        tail: &dyn peregrine_cdr::TailSeq,
        decode_result: impl DecodeResult<T>,
        decode_user_exception: impl DecodeUserException<E>,
    ) -> Result<T, E> {
        client::invoke_with_tail(
            self,
            op,
            encode_args,
            Some(tail),
            decode_result,
            decode_user_exception,
        )
    }

    /// [`ObjectRef::invoke_oneway`] with a last argument sent as in
    /// [`ObjectRef::invoke_with_tail`].
    pub fn invoke_oneway_with_tail(
        &self,
        op: &str,
        encode_args: impl EncodeArgs,
        tail: &dyn peregrine_cdr::TailSeq,
    ) -> Result<(), SystemException> {
        client::invoke_oneway_with_tail(self, op, encode_args, Some(tail))
    }

    /// A oneway invocation. With the default [`SyncScope::Transport`]
    /// (`SYNC_WITH_TRANSPORT`) it returns once the request is written to
    /// the connection; with [`SyncScope::None`] (`SYNC_NONE`) once it is
    /// encoded and queued (see [`ObjectRef::with_sync_scope`]).
    pub fn invoke_oneway(
        &self,
        op: &str,
        encode_args: impl EncodeArgs,
    ) -> Result<(), SystemException> {
        client::invoke_oneway(self, op, encode_args)
    }

    /// A deferred synchronous invocation: sends the twoway request now and
    /// returns at once; the reply is collected later with
    /// [`DeferredCall::get_response`] (decoded with the same closures as
    /// [`ObjectRef::invoke`]) and [`DeferredCall::poll_response`] tells
    /// whether it has arrived. The call's deadline runs from now.
    pub fn send_deferred(
        &self,
        op: &str,
        encode_args: impl EncodeArgs,
    ) -> Result<DeferredCall, SystemException> {
        client::send_deferred(self, op, encode_args)
    }

    /// True if the object supports `repo_id`: answered locally when the
    /// IOR's type id is `repo_id` (or `IDL:omg.org/CORBA/Object:1.0`),
    /// otherwise by a remote `_is_a`. False for a nil reference.
    pub fn is_a(&self, repo_id: &str) -> Result<bool, SystemException> {
        if self.is_nil() {
            // A nil reference denotes no object (C++ `_narrow` of nil is nil).
            return Ok(false);
        }
        if repo_id == self.type_id() || repo_id == "IDL:omg.org/CORBA/Object:1.0" {
            return Ok(true);
        }
        self.invoke(
            "_is_a",
            |w| w.write_string(repo_id),
            |r| r.read_bool(),
            |_, _| None::<peregrine_cdr::Result<SystemException>>,
        )
    }

    /// True if the server says the object no longer exists (remote
    /// `_non_existent`; `OBJECT_NOT_EXIST` also counts as true).
    pub fn non_existent(&self) -> Result<bool, SystemException> {
        let r = self.invoke(
            "_non_existent",
            |_| Ok(()),
            |r| r.read_bool(),
            |_, _| None::<peregrine_cdr::Result<SystemException>>,
        );
        match r {
            Err(e) if e.kind == SystemExceptionKind::ObjectNotExist => Ok(true),
            r => r,
        }
    }

    /// Sends a GIOP LocateRequest: `Ok(true)` if the server has the
    /// object (`OBJECT_HERE`), `Ok(false)` for `UNKNOWN_OBJECT`.
    /// `OBJECT_FORWARD` replies are followed and re-target this reference,
    /// as `LOCATION_FORWARD` replies to calls do; `LOC_SYSTEM_EXCEPTION`
    /// is returned as the error.
    pub fn locate(&self) -> Result<bool, SystemException> {
        client::locate(self)
    }

    /// True for a nil reference (the nil IOR: no profiles), e.g. what
    /// [`Orb::string_to_object`] returns for a stringified nil. Calling an
    /// operation on it raises `INV_OBJREF` (`COMPLETED_NO`); `is_a` is
    /// false for every interface, so a generated `narrow` gives `None`.
    pub fn is_nil(&self) -> bool {
        self.inner.ior.is_nil()
    }

    /// `Some(self)` unless nil: the `Option` form generated code uses for
    /// interface-typed values (`None` is nil).
    pub fn non_nil(self) -> Option<ObjectRef> {
        (!self.is_nil()).then_some(self)
    }

    /// The repository id in the IOR (may be empty, e.g. for corbaloc).
    pub fn type_id(&self) -> &str {
        &self.inner.ior.type_id
    }

    /// The IOR this reference was made from (not the forwarded one).
    pub fn ior(&self) -> &Ior {
        &self.inner.ior
    }

    /// The ORB this reference talks through.
    pub fn orb(&self) -> &Orb {
        &self.inner.orb
    }

    /// The same object with another call deadline (per-reference policy,
    /// like `RELATIVE_RT_TIMEOUT`); shares the connection cache.
    pub fn with_timeout(&self, timeout: Duration) -> ObjectRef {
        ObjectRef {
            inner: Arc::new(RefInner::new(
                self.inner.orb.clone(),
                self.inner.ior.clone(),
                Some(timeout),
            )),
        }
    }

    /// The same object with another oneway synchronization scope
    /// (the Messaging `SyncScopePolicy` for this reference); shares the
    /// connection cache and keeps this reference's call deadline.
    pub fn with_sync_scope(&self, sync: SyncScope) -> ObjectRef {
        let mut inner = RefInner::new(
            self.inner.orb.clone(),
            self.inner.ior.clone(),
            self.inner.timeout,
        );
        inner.sync = sync;
        ObjectRef {
            inner: Arc::new(inner),
        }
    }

    /// The oneway synchronization scope of this reference.
    pub fn sync_scope(&self) -> SyncScope {
        self.inner.sync
    }

    /// True if both references denote the same object as far as the ORB
    /// can tell without a call: the same IOR profiles, read the same way
    /// whatever byte order each profile was encoded in (JacORB, for one,
    /// keeps its little-endian profiles inside big-endian messages).
    pub fn is_equivalent(&self, other: &ObjectRef) -> bool {
        let (a, b) = (&self.inner.ior, &other.inner.ior);
        Arc::ptr_eq(&self.inner, &other.inner) || a.profiles == b.profiles || a.is_equivalent(b)
    }

    /// `CORBA::Object::hash`: a value in `0..=maximum` that equal
    /// (equivalent) references share.
    pub fn hash(&self, maximum: u32) -> u32 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // Equivalent references hash alike (see `is_equivalent`); only an
        // IOR holding undecoded profiles pays for the canonical copy.
        let profiles = &self.inner.ior.profiles;
        if profiles
            .iter()
            .any(|p| matches!(p, peregrine_giop::TaggedProfile::Other { .. }))
        {
            self.inner.ior.canonical_profiles().hash(&mut h);
        } else {
            profiles.hash(&mut h);
        }
        let v = h.finish();
        if maximum == u32::MAX {
            v as u32
        } else {
            (v % (u64::from(maximum) + 1)) as u32
        }
    }

    /// Decodes an IOR and makes a reference through `orb`; `None` for a
    /// nil reference.
    pub fn decode(r: &mut Reader<'_>, orb: &Orb) -> peregrine_cdr::Result<Option<ObjectRef>> {
        let ior = <Ior as peregrine_cdr::Decode>::decode(r)?;
        Ok(orb.object_from_ior(ior))
    }

    /// Encodes a possibly nil reference (`None` is the nil IOR).
    pub fn encode_opt(obj: Option<&ObjectRef>, w: &mut Writer) -> peregrine_cdr::Result<()> {
        match obj {
            Some(o) => o.encode(w),
            None => Ior::nil().encode(w),
        }
    }
}

/// Writes the reference's IOR.
impl Encode for ObjectRef {
    fn encode(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.inner.ior.encode(w)
    }
}

impl fmt::Debug for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectRef")
            .field("type_id", &self.type_id())
            .field("endpoints", &self.inner.ior.endpoints().unwrap_or_default())
            .finish()
    }
}

/// The stringified IOR.
impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.inner.ior, f)
    }
}

/// How far a oneway request travels before the caller gets control back
/// (CORBA Messaging `SyncScope`; the GIOP `response_flags` are the same
/// for both, they differ only on the client).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncScope {
    /// `SYNC_NONE`: return once the request is encoded and queued; a
    /// background writer sends it. The fastest, and the caller never
    /// blocks on the network unless the queue is full.
    None,
    /// `SYNC_WITH_TRANSPORT`: return once the request is written to the
    /// connection (the default).
    #[default]
    Transport,
}

/// An object reference type: [`ObjectRef`] itself or a generated typed
/// reference `IRef` (one per IDL interface), which wraps an `ObjectRef`
/// and offers the interface's operations.
///
/// It lets the POA hand out typed references
/// ([`Poa::servant_to_reference`](crate::Poa::servant_to_reference),
/// [`Poa::create_reference_with_id`](crate::Poa::create_reference_with_id))
/// and generated code marshal any reference type.
///
/// ```
/// use peregrine_orb::{ObjectRef, Reference};
///
/// // The untyped reference stands for `CORBA::Object`.
/// assert_eq!(<ObjectRef as Reference>::REPOSITORY_ID, "IDL:omg.org/CORBA/Object:1.0");
/// ```
pub trait Reference: Sized {
    /// The repository id of the interface (`IDL:omg.org/CORBA/Object:1.0`
    /// for [`ObjectRef`]); the type id of the references the POA makes.
    const REPOSITORY_ID: &'static str;
    /// The untyped reference.
    fn object_ref(&self) -> &ObjectRef;
    /// Wraps a reference without checking its type (an unchecked narrow).
    fn from_object_ref(obj: ObjectRef) -> Self;
}

impl Reference for ObjectRef {
    const REPOSITORY_ID: &'static str = "IDL:omg.org/CORBA/Object:1.0";
    #[inline]
    fn object_ref(&self) -> &ObjectRef {
        self
    }
    #[inline]
    fn from_object_ref(obj: ObjectRef) -> Self {
        obj
    }
}

/// A servant type that knows the typed reference of its interface:
/// implemented by every generated `ISkeleton<S>` (with `Reference =
/// IRef`) and by [`DynamicServant`](crate::DynamicServant) (with
/// `Reference = ObjectRef`, the interface being known only at run time).
pub trait Skeleton: Servant {
    /// The reference type clients of this servant's objects use.
    type Reference: Reference;
}

/// Server side, implemented by generated skeletons.
pub trait Servant: Send + Sync + 'static {
    /// The most-derived interface's repository id.
    fn repository_id(&self) -> &'static str;
    /// True for this interface or any base (generated from the IDL).
    fn is_a(&self, repo_id: &str) -> bool;
    /// Decodes the arguments of `req.operation()`, calls the
    /// implementation and writes the reply; an unknown operation is
    /// `BAD_OPERATION` (minor 0, `COMPLETED_NO`). `_is_a`,
    /// `_non_existent`, `_interface` and `_repository_id` never reach
    /// here: the ORB answers them.
    fn dispatch(&self, req: &mut ServerRequest<'_>) -> Result<(), SystemException>;
}

/// What a reply holds so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplyState {
    /// Nothing written yet (the ORB writes an empty NO_EXCEPTION reply).
    Empty,
    /// A NO_EXCEPTION header is written; results follow.
    NoException,
    /// A USER_EXCEPTION header and repository id are written.
    UserException,
}

/// One incoming request as a skeleton sees it: the operation, its
/// arguments borrowed from the message buffer, and the reply being built
/// in the connection's reusable buffer.
pub struct ServerRequest<'a> {
    pub(crate) operation: &'a str,
    pub(crate) args: Reader<'a>,
    pub(crate) reply: &'a mut Writer,
    pub(crate) state: ReplyState,
    pub(crate) pending: Option<ReplyStart>,
    pub(crate) version: GiopVersion,
    pub(crate) request_id: u32,
    pub(crate) response_expected: bool,
    pub(crate) object_id: &'a [u8],
    pub(crate) orb: &'a Orb,
}

impl<'a> ServerRequest<'a> {
    /// The operation name (`_get_x`/`_set_x` for attributes).
    pub fn operation(&self) -> &str {
        self.operation
    }

    /// The `in`/`inout` arguments, decoded in place (borrowing from the
    /// message buffer, with the connection's negotiated code sets).
    pub fn args(&mut self) -> &mut Reader<'a> {
        &mut self.args
    }

    /// The NO_EXCEPTION reply body: the return value, then `inout`/`out`
    /// arguments in order. Calling it after [`ServerRequest::user_exception`]
    /// starts the reply over as NO_EXCEPTION.
    pub fn reply(&mut self) -> &mut Writer {
        if self.state != ReplyState::NoException {
            self.begin(peregrine_giop::ReplyStatus::NoException);
            self.state = ReplyState::NoException;
        }
        self.reply
    }

    /// Switches the reply to USER_EXCEPTION (discarding any results
    /// written) and writes `repo_id`; the exception's members follow.
    pub fn user_exception(&mut self, repo_id: &str) -> &mut Writer {
        self.begin(peregrine_giop::ReplyStatus::UserException);
        self.state = ReplyState::UserException;
        // Repository ids are ASCII: raw bytes keep them independent of
        // the negotiated char code set (as for system exceptions).
        let _ = self.reply.write_len(repo_id.len() + 1);
        self.reply.write_bytes(repo_id.as_bytes());
        self.reply.write_u8(0);
        self.reply
    }

    /// False for a oneway request (whatever is written is discarded).
    pub fn response_expected(&self) -> bool {
        self.response_expected
    }

    /// The object id of the target within its POA.
    pub fn object_id(&self) -> &[u8] {
        self.object_id
    }

    /// The ORB that received the request (to decode object references).
    pub fn orb(&self) -> &Orb {
        self.orb
    }

    fn begin(&mut self, status: peregrine_giop::ReplyStatus) {
        self.pending = reply_header(self.reply, self.version, self.request_id, status);
    }
}

/// A reply header written into the connection's writer; [`ReplyStart::finish`]
/// completes the message once the body is written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ReplyStart {
    /// Written by `encode_reply` (GIOP 1.0/1.1, other statuses).
    Encoded(peregrine_giop::Pending),
    /// The fixed 24-byte GIOP 1.2 header: no padding before the body, the
    /// size is everything after the 12-byte message header.
    Fixed,
}

impl ReplyStart {
    /// Patches the message size (as `Pending::finish` does).
    #[inline]
    pub(crate) fn finish(self, w: &mut Writer) -> Result<(), peregrine_giop::GiopError> {
        match self {
            ReplyStart::Encoded(p) => p.finish(w),
            ReplyStart::Fixed => {
                let body = w.len() - peregrine_giop::HEADER_LEN;
                let size =
                    u32::try_from(body).map_err(|_| peregrine_cdr::CdrError::TooLong(body))?;
                w.patch_u32(8, size);
                Ok(())
            }
        }
    }
}

/// Writes a Reply header with no service contexts into `w` (cleared
/// first), as `encode_reply` does; GIOP 1.2 (every Peregrine client)
/// writes its fixed 24 bytes in one append. `None` for a status the
/// version lacks (`begin` only uses NO_EXCEPTION and USER_EXCEPTION,
/// which every version has).
pub(crate) fn reply_header(
    w: &mut Writer,
    version: GiopVersion,
    request_id: u32,
    status: peregrine_giop::ReplyStatus,
) -> Option<ReplyStart> {
    use peregrine_giop::ReplyStatus as S;
    if version == GiopVersion::V1_2 && matches!(status, S::NoException | S::UserException) {
        // Header (size patched by `finish`), request id, status, an empty
        // context list: 24 bytes, so the body starts 8-aligned.
        let little = w.order() == peregrine_cdr::ByteOrder::Little;
        let (id, st) = if little {
            (request_id.to_le_bytes(), (status as u32).to_le_bytes())
        } else {
            (request_id.to_be_bytes(), (status as u32).to_be_bytes())
        };
        let [i0, i1, i2, i3] = id;
        let [s0, s1, s2, s3] = st;
        let reply = peregrine_giop::MsgType::Reply as u8;
        w.clear();
        w.set_version(version);
        w.write_bytes(&[
            b'G',
            b'I',
            b'O',
            b'P',
            1,
            2,
            u8::from(little),
            reply,
            0,
            0,
            0,
            0,
            i0,
            i1,
            i2,
            i3,
            s0,
            s1,
            s2,
            s3,
            0,
            0,
            0,
            0,
        ]);
        return Some(ReplyStart::Fixed);
    }
    let h = peregrine_giop::ReplyHeader {
        request_id,
        status,
        service_contexts: peregrine_giop::ServiceContexts::EMPTY,
    };
    peregrine_giop::encode_reply(w, version, &h)
        .ok()
        .map(ReplyStart::Encoded)
}

#[cfg(test)]
mod reply_header_tests {
    use super::*;
    use peregrine_cdr::ByteOrder;
    use peregrine_giop::ReplyStatus;

    /// The direct GIOP 1.2 header equals `encode_reply`'s, with and
    /// without a body, in both byte orders.
    #[test]
    fn reply_header_matches_encode_reply() {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            for version in [GiopVersion::V1_0, GiopVersion::V1_1, GiopVersion::V1_2] {
                for status in [ReplyStatus::NoException, ReplyStatus::UserException] {
                    for body in [&[][..], &[1u8, 2, 3][..]] {
                        let mut a = Writer::new(order);
                        a.write_bytes(b"stale");
                        let p = reply_header(&mut a, version, 0x0102_0304, status).unwrap();
                        a.write_bytes(body);
                        p.finish(&mut a).unwrap();
                        let mut b = Writer::new(order);
                        let h = peregrine_giop::ReplyHeader {
                            request_id: 0x0102_0304,
                            status,
                            service_contexts: peregrine_giop::ServiceContexts::EMPTY,
                        };
                        let p = peregrine_giop::encode_reply(&mut b, version, &h).unwrap();
                        b.write_bytes(body);
                        p.finish(&mut b).unwrap();
                        assert_eq!(a.as_slice(), b.as_slice());
                        assert_eq!(a.version(), b.version());
                    }
                }
            }
        }
    }
}
