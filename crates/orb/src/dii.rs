//! The Dynamic Invocation Interface: requests built at run time.
//!
//! A [`Request`] names an operation on an [`ObjectRef`] and carries an
//! [`NVList`] of named, typed arguments ([`Any`] values with
//! [`ArgFlags`]), a result TypeCode, the user exceptions the operation
//! may raise (as TypeCodes) and an optional IDL context clause. The
//! arguments are marshaled by the interpretive engine
//! ([`peregrine_dynamic::encode_value`]) straight into the ORB's request
//! buffer, and the reply is decoded by TypeCode back into the request:
//! [`Request::return_value`], the `out`/`inout` entries of
//! [`Request::arguments`], or [`Request::exception`].
//!
//! A request is **reusable** (seed 001: Orbix built a new request per DII
//! call and paid 2.6 times its static latency for it, VisiBroker recycled
//! requests and matched its static stubs): change argument values through
//! [`Request::arguments_mut`] or [`Request::set_arg`] and invoke again;
//! nothing is rebuilt and the TypeCodes' precomputed layouts are reused.
//!
//! ```no_run
//! # use peregrine_orb::{ObjectRef, dii::Request};
//! # use peregrine_dynamic::{Any, TypeCode};
//! # fn f(obj: &ObjectRef) -> Result<(), peregrine_orb::dii::RequestError> {
//! let mut req = obj.request("echo_string");
//! req.add_in_arg("s", Any::from("hello"))
//!     .set_return_type(TypeCode::string_tc(0));
//! req.invoke()?;
//! assert_eq!(req.return_value().get::<String>().as_deref(), Some("hello"));
//! # Ok(()) }
//! ```
//!
//! Errors follow the CORBA specification's minor codes: `BAD_INV_ORDER`
//! 10 (sent again while a deferred call is outstanding), 11 (polled before
//! being sent deferred), 12 (response already collected), 13 (polled after
//! a synchronous call); `BAD_PARAM` 21 (an exception list entry that is
//! not an exception TypeCode) and Peregrine's `BAD_PARAM_IndexOutOfRange`
//! (`set_arg` past the last argument); values that do not match their TypeCode are
//! `BAD_PARAM` (`COMPLETED_NO`); replies that do not match the expected
//! TypeCodes are `MARSHAL` or `BAD_TYPECODE` (`COMPLETED_YES`); a user
//! exception whose repository id is not in [`Request::exceptions`] is
//! `UNKNOWN` minor 1.

use std::cell::Cell;
use std::fmt;
use std::ops::{Index, IndexMut};

use peregrine_cdr::{CdrError, Reader, Writer};
use peregrine_dynamic::{decode_value, encode_value, Any, DynError, DynValue, TcKind, TypeCode};

use crate::context::Context;
use crate::error::raise;
use crate::runtime::{Cause, Phase};
use crate::runtime::{
    CompletionStatus, DeferredCall, ObjectRef, SystemException, SystemExceptionKind as K,
};

/// Minor codes of the dynamic interfaces: the OMG's, and Peregrine's
/// `BAD_PARAM_INDEX_OUT_OF_RANGE` (declared, with their names, in
/// `peregrine_giop`'s one table).
pub mod minor {
    pub use peregrine_giop::system_exception::minor::{
        BAD_INV_ORDER_ARGUMENTS_CALLED_OUT_OF_ORDER, BAD_INV_ORDER_CTX_CALLED_OUT_OF_ORDER,
        BAD_INV_ORDER_REQUEST_ALREADY_SENT, BAD_INV_ORDER_REQUEST_IS_SYNCHRONOUS,
        BAD_INV_ORDER_REQUEST_NOT_SENT_YET, BAD_INV_ORDER_RESULT_ALREADY_RECEIVED,
        BAD_INV_ORDER_SET_RESULT_CALLED_OUT_OF_ORDER, BAD_PARAM_INDEX_OUT_OF_RANGE,
        BAD_PARAM_NOT_AN_EXCEPTION, BAD_PARAM_UNLISTED_USER_EXCEPTION,
        MARSHAL_SERVER_REQUEST_NVLIST, UNKNOWN_USER_EXCEPTION,
    };
}

/// The direction of an argument (`CORBA::ARG_IN`, `ARG_OUT`,
/// `ARG_INOUT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgFlags {
    /// Sent with the request.
    In,
    /// Received with the reply.
    Out,
    /// Sent with the request and received (updated) with the reply.
    InOut,
}

impl ArgFlags {
    /// The flag's value in the C++ mapping (`ARG_IN` 1, `ARG_OUT` 2,
    /// `ARG_INOUT` 3).
    pub fn bits(self) -> u32 {
        match self {
            ArgFlags::In => 1,
            ArgFlags::Out => 2,
            ArgFlags::InOut => 3,
        }
    }

    /// True for `in` and `inout`: the value travels in the request.
    #[inline]
    pub fn is_sent(self) -> bool {
        self != ArgFlags::Out
    }

    /// True for `out` and `inout`: the value travels in the reply.
    #[inline]
    pub fn is_received(self) -> bool {
        self != ArgFlags::In
    }
}

/// One named, typed argument (`CORBA::NamedValue`).
#[derive(Debug, Clone, PartialEq)]
pub struct NamedValue {
    /// The parameter's name (informational: arguments travel by position).
    pub name: String,
    /// The TypeCode and value. For an `out` argument the value is
    /// [`DynValue::Null`] until a reply fills it in.
    pub value: Any,
    /// Direction.
    pub flags: ArgFlags,
}

/// An ordered list of [`NamedValue`]s (`CORBA::NVList`): the parameters of
/// an operation, in the order of its IDL signature.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NVList {
    items: Vec<NamedValue>,
}

impl NVList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an argument and returns it.
    pub fn add(&mut self, name: impl Into<String>, value: Any, flags: ArgFlags) -> &mut NamedValue {
        self.items.push(NamedValue {
            name: name.into(),
            value,
            flags,
        });
        let last = self.items.len() - 1;
        &mut self.items[last]
    }

    /// Appends an `in` argument.
    pub fn add_in(&mut self, name: impl Into<String>, value: Any) -> &mut Self {
        self.add(name, value, ArgFlags::In);
        self
    }

    /// Appends an `inout` argument.
    pub fn add_inout(&mut self, name: impl Into<String>, value: Any) -> &mut Self {
        self.add(name, value, ArgFlags::InOut);
        self
    }

    /// Appends an `out` argument of type `tc` (no value yet).
    pub fn add_out(&mut self, name: impl Into<String>, tc: TypeCode) -> &mut Self {
        self.add(name, Any::new(tc, DynValue::Null), ArgFlags::Out);
        self
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True if there are no arguments.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The argument at `i`.
    pub fn get(&self, i: usize) -> Option<&NamedValue> {
        self.items.get(i)
    }

    /// The argument at `i`, mutably.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut NamedValue> {
        self.items.get_mut(i)
    }

    /// The first argument called `name`.
    pub fn by_name(&self, name: &str) -> Option<&NamedValue> {
        self.items.iter().find(|n| n.name == name)
    }

    /// The first argument called `name`, mutably.
    pub fn by_name_mut(&mut self, name: &str) -> Option<&mut NamedValue> {
        self.items.iter_mut().find(|n| n.name == name)
    }

    /// The arguments in order.
    pub fn iter(&self) -> std::slice::Iter<'_, NamedValue> {
        self.items.iter()
    }

    /// The arguments in order, mutably.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, NamedValue> {
        self.items.iter_mut()
    }

    /// Removes every argument.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Encodes the values of the arguments whose flags satisfy `pick`, in
    /// order, through the interpretive engine.
    pub(crate) fn encode(
        &self,
        pick: impl Fn(ArgFlags) -> bool,
        w: &mut Writer,
    ) -> Result<(), DynError> {
        for nv in self.items.iter().filter(|nv| pick(nv.flags)) {
            encode_value(&nv.value.tc, &nv.value.value, w)?;
        }
        Ok(())
    }

    /// Decodes the values of the arguments whose flags satisfy `pick`, in
    /// order, replacing each one's value.
    pub(crate) fn decode(
        &mut self,
        pick: impl Fn(ArgFlags) -> bool,
        r: &mut Reader<'_>,
    ) -> Result<(), DynError> {
        for nv in self.items.iter_mut().filter(|nv| pick(nv.flags)) {
            nv.value.value = decode_value(&nv.value.tc, r)?;
        }
        Ok(())
    }
}

impl Index<usize> for NVList {
    type Output = NamedValue;
    fn index(&self, i: usize) -> &NamedValue {
        &self.items[i]
    }
}

impl IndexMut<usize> for NVList {
    fn index_mut(&mut self, i: usize) -> &mut NamedValue {
        &mut self.items[i]
    }
}

impl<'a> IntoIterator for &'a NVList {
    type Item = &'a NamedValue;
    type IntoIter = std::slice::Iter<'a, NamedValue>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl FromIterator<NamedValue> for NVList {
    fn from_iter<I: IntoIterator<Item = NamedValue>>(iter: I) -> Self {
        NVList {
            items: iter.into_iter().collect(),
        }
    }
}

/// What a dynamic invocation raised.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestError {
    /// A system exception (from the server, or raised locally).
    System(SystemException),
    /// A user exception listed in [`Request::exceptions`], decoded by its
    /// TypeCode: the Any's value is a [`DynValue::Struct`] of its members.
    User(Any),
}

impl RequestError {
    /// The exception's repository id.
    pub fn repository_id(&self) -> &str {
        match self {
            RequestError::System(e) => e.repository_id(),
            RequestError::User(a) => a.tc.id().unwrap_or(""),
        }
    }

    /// The system exception, if this is one.
    pub fn system(&self) -> Option<&SystemException> {
        match self {
            RequestError::System(e) => Some(e),
            RequestError::User(_) => None,
        }
    }

    /// The user exception, if this is one.
    pub fn user(&self) -> Option<&Any> {
        match self {
            RequestError::System(_) => None,
            RequestError::User(a) => Some(a),
        }
    }
}

impl From<SystemException> for RequestError {
    fn from(e: SystemException) -> Self {
        RequestError::System(e)
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::System(e) => write!(f, "{e}"),
            RequestError::User(a) => write!(f, "user exception {}", a.tc.id().unwrap_or("?")),
        }
    }
}

impl std::error::Error for RequestError {}

/// Where a request is in its life.
#[derive(Debug, Default)]
enum State {
    /// Built (or reset), never sent.
    #[default]
    Fresh,
    /// Sent deferred; the reply is collected by `get_response`.
    Deferred(Box<DeferredCall>),
    /// The deferred response was collected.
    Received,
    /// Last used synchronously (`invoke` or `send_oneway`).
    Synchronous,
}

/// A dynamic invocation (`CORBA::Request`): target, operation, arguments,
/// result type, exception list and context clause, all set at run time.
/// See the [module documentation](self).
#[derive(Debug)]
pub struct Request {
    target: ObjectRef,
    operation: String,
    args: NVList,
    result: Any,
    exceptions: Vec<TypeCode>,
    /// `Some` when the operation has an IDL context clause: the
    /// properties sent as one `sequence<string>` after the arguments.
    contexts: Option<Context>,
    exception: Option<RequestError>,
    state: State,
    /// Reply values decoded before being moved into place (the return
    /// value first, then `out`/`inout` values in order); kept to reuse
    /// its allocation across invocations.
    scratch: Vec<DynValue>,
}

impl ObjectRef {
    /// A new dynamic request for `operation` on this object
    /// (`CORBA::Object::_request`): no arguments, a `void` result, no
    /// exceptions.
    pub fn request(&self, operation: &str) -> Request {
        Request::new(self, operation)
    }
}

/// A placeholder error handed to the ORB when the interpreter failed; the
/// real error is kept aside and reported instead.
const DYN_FAILED: CdrError = CdrError::BadEncapsulation;

impl Request {
    /// A new request for `operation` on `target` (see
    /// [`ObjectRef::request`]).
    pub fn new(target: &ObjectRef, operation: &str) -> Request {
        Request {
            target: target.clone(),
            operation: operation.to_owned(),
            args: NVList::new(),
            result: Any::new(TypeCode::void(), DynValue::Null),
            exceptions: Vec::new(),
            contexts: None,
            exception: None,
            state: State::Fresh,
            scratch: Vec::new(),
        }
    }

    /// The target object.
    pub fn target(&self) -> &ObjectRef {
        &self.target
    }

    /// The operation name.
    pub fn operation(&self) -> &str {
        &self.operation
    }

    /// Appends an `in` argument.
    pub fn add_in_arg(&mut self, name: impl Into<String>, value: Any) -> &mut Self {
        self.args.add(name, value, ArgFlags::In);
        self
    }

    /// Appends an `inout` argument (its value is replaced by the reply's).
    pub fn add_inout_arg(&mut self, name: impl Into<String>, value: Any) -> &mut Self {
        self.args.add(name, value, ArgFlags::InOut);
        self
    }

    /// Appends an `out` argument of type `tc` (filled in by the reply).
    pub fn add_out_arg(&mut self, name: impl Into<String>, tc: TypeCode) -> &mut Self {
        self.args.add_out(name, tc);
        self
    }

    /// Replaces the whole argument list.
    pub fn set_arguments(&mut self, args: NVList) -> &mut Self {
        self.args = args;
        self
    }

    /// Replaces the value of argument `i` (same TypeCode or a new one)
    /// before the request is sent again; `BAD_PARAM` if there is no such
    /// argument.
    pub fn set_arg(&mut self, i: usize, value: Any) -> Result<(), SystemException> {
        match self.args.get_mut(i) {
            Some(nv) => {
                nv.value = value;
                Ok(())
            }
            None => Err(raise(
                K::BadParam,
                minor::BAD_PARAM_INDEX_OUT_OF_RANGE,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Local).with_detail(format_args!(
                        "request {:?} has {} arguments, not {}",
                        self.operation,
                        self.args.len(),
                        i + 1
                    ))
                },
            )),
        }
    }

    /// The arguments; after a reply, `out` and `inout` entries hold the
    /// values it carried.
    pub fn arguments(&self) -> &NVList {
        &self.args
    }

    /// The arguments, to change values between invocations.
    pub fn arguments_mut(&mut self) -> &mut NVList {
        &mut self.args
    }

    /// The result type (`void` by default).
    pub fn set_return_type(&mut self, tc: TypeCode) -> &mut Self {
        self.result = Any::new(tc, DynValue::Null);
        self
    }

    /// The user exceptions the operation may raise (exception TypeCodes):
    /// one whose repository id matches a reply's is decoded into
    /// [`RequestError::User`]; any other is `UNKNOWN` minor 1. An entry
    /// that is not a `tk_except` TypeCode makes the next send fail with
    /// `BAD_PARAM` minor 21.
    pub fn exceptions(&mut self, list: Vec<TypeCode>) -> &mut Self {
        self.exceptions = list;
        self
    }

    /// The exception list.
    pub fn exception_list(&self) -> &[TypeCode] {
        &self.exceptions
    }

    /// Gives the request an IDL context clause with these name/value
    /// pairs: they are sent after the arguments as one `sequence<string>`
    /// (`name1, value1, name2, value2, ...`), as CORBA 3 §15.4.2 (GIOP
    /// request body) says. An operation declared with a `context` clause
    /// always carries the sequence, so an empty iterator still sends an
    /// empty one. A name given twice is sent once, with its last value.
    pub fn contexts<N: Into<String>, V: Into<String>>(
        &mut self,
        pairs: impl IntoIterator<Item = (N, V)>,
    ) -> &mut Self {
        let mut ctx = Context::new();
        for (n, v) in pairs {
            ctx.set(n, v);
        }
        self.contexts = Some(ctx);
        self
    }

    /// Gives the request the properties of `ctx` that the operation's
    /// `context` clause selects (`clause`: its strings, each a property
    /// name or, ending in `*`, a prefix), as a generated stub sends them
    /// (`CORBA::Request::ctx` with the operation's context list).
    ///
    /// ```
    /// # use peregrine_orb::{Context, Orb};
    /// # let orb = Orb::builder().build()?;
    /// # let obj = orb.string_to_object("corbaloc::127.0.0.1:1/x")?;
    /// let ctx = Context::new().with("LANG", "en").with("X_A", "1").with("Y", "2");
    /// let mut req = obj.request("greet");
    /// req.context(&ctx, &["LANG", "X_*"]);
    /// let sent: Vec<_> = req.context_values().unwrap().iter().collect();
    /// assert_eq!(sent, [("LANG", "en"), ("X_A", "1")]);
    /// # Ok::<(), peregrine_orb::SystemException>(())
    /// ```
    pub fn context(&mut self, ctx: &Context, clause: &[&str]) -> &mut Self {
        self.contexts = Some(ctx.matching(clause).collect());
        self
    }

    /// Removes the context clause (nothing is sent after the arguments).
    pub fn clear_contexts(&mut self) -> &mut Self {
        self.contexts = None;
        self
    }

    /// The properties the request's context clause sends, if it has one.
    pub fn context_values(&self) -> Option<&Context> {
        self.contexts.as_ref()
    }

    /// The value returned by the last completed twoway invocation
    /// ([`DynValue::Null`] before one, or for `void`).
    pub fn return_value(&self) -> &Any {
        &self.result
    }

    /// What the last invocation raised (`None` after a success).
    pub fn exception(&self) -> Option<&RequestError> {
        self.exception.as_ref()
    }

    /// Sends the request and waits for the reply (`CORBA::Request::invoke`).
    /// On success the return value and `out`/`inout` arguments are in the
    /// request; on failure [`Request::exception`] holds what is returned.
    /// The request may be invoked again afterwards.
    pub fn invoke(&mut self) -> Result<(), RequestError> {
        self.start()?;
        self.state = State::Synchronous;
        let enc_err = Cell::new(None);
        let dec_err = Cell::new(None);
        let Request {
            target,
            operation,
            args,
            result,
            exceptions,
            contexts,
            scratch,
            ..
        } = self;
        let res = target.invoke(
            operation,
            |w| encode_request(args, contexts.as_ref(), w, &enc_err),
            |r| decode_reply(&result.tc, args, scratch, r, &dec_err),
            |id, r| decode_user_exception(exceptions, id, r, &dec_err),
        );
        self.finish(res, enc_err.into_inner(), dec_err.into_inner())
    }

    /// Sends the request as a oneway (`CORBA::Request::send_oneway`):
    /// returns once it is written to the connection; nothing comes back.
    pub fn send_oneway(&mut self) -> Result<(), RequestError> {
        self.start()?;
        self.state = State::Synchronous;
        let enc_err = Cell::new(None);
        let res = self.target.invoke_oneway(&self.operation, |w| {
            encode_request(&self.args, self.contexts.as_ref(), w, &enc_err)
        });
        let res = res.map_err(RequestError::System);
        self.finish(res, enc_err.into_inner(), None)
    }

    /// Sends the request without waiting for the reply
    /// (`CORBA::Request::send_deferred`); collect it with
    /// [`Request::get_response`], check for it with
    /// [`Request::poll_response`].
    pub fn send_deferred(&mut self) -> Result<(), RequestError> {
        self.start()?;
        let enc_err = Cell::new(None);
        let res = self.target.send_deferred(&self.operation, |w| {
            encode_request(&self.args, self.contexts.as_ref(), w, &enc_err)
        });
        match res {
            Ok(call) => {
                self.state = State::Deferred(Box::new(call));
                Ok(())
            }
            Err(e) => {
                self.state = State::Synchronous;
                self.finish(Err(RequestError::System(e)), enc_err.into_inner(), None)
            }
        }
    }

    /// True when [`Request::get_response`] would not block
    /// (`CORBA::Request::poll_response`). `BAD_INV_ORDER` minor 11 if the
    /// request was not sent deferred, 12 if its response was collected,
    /// 13 if it was last invoked synchronously.
    pub fn poll_response(&self) -> Result<bool, SystemException> {
        match &self.state {
            State::Deferred(call) => Ok(call.poll_response()),
            other => Err(self.not_deferred(other)),
        }
    }

    /// Waits for the deferred reply and stores its results in the request
    /// (`CORBA::Request::get_response`). Errors as for
    /// [`Request::poll_response`], then as for [`Request::invoke`].
    pub fn get_response(&mut self) -> Result<(), RequestError> {
        let call = match std::mem::take(&mut self.state) {
            State::Deferred(call) => call,
            other => {
                let e = self.not_deferred(&other);
                self.state = other;
                return Err(RequestError::System(e));
            }
        };
        self.state = State::Received;
        let dec_err = Cell::new(None);
        let Request {
            args,
            result,
            exceptions,
            scratch,
            ..
        } = self;
        let res = call.get_response(
            |r| decode_reply(&result.tc, args, scratch, r, &dec_err),
            |id, r| decode_user_exception(exceptions, id, r, &dec_err),
        );
        self.finish(res, None, dec_err.into_inner())
    }

    #[cold]
    fn not_deferred(&self, state: &State) -> SystemException {
        let (minor, why) = match state {
            State::Fresh | State::Deferred(_) => (
                minor::BAD_INV_ORDER_REQUEST_NOT_SENT_YET,
                "was not sent deferred",
            ),
            State::Received => (
                minor::BAD_INV_ORDER_RESULT_ALREADY_RECEIVED,
                "had its response collected already",
            ),
            State::Synchronous => (
                minor::BAD_INV_ORDER_REQUEST_IS_SYNCHRONOUS,
                "was invoked synchronously",
            ),
        };
        raise(K::BadInvOrder, minor, CompletionStatus::No, || {
            Cause::new(Phase::Local)
                .with_operation(&self.operation)
                .with_detail(why)
        })
    }

    /// Checks the request before a send: no deferred call outstanding,
    /// a well-formed exception list.
    fn start(&mut self) -> Result<(), RequestError> {
        if let State::Deferred(_) = self.state {
            let e = raise(
                K::BadInvOrder,
                minor::BAD_INV_ORDER_REQUEST_ALREADY_SENT,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Local).with_detail(format_args!(
                        "request {:?} sent again before its deferred response was collected",
                        self.operation
                    ))
                },
            );
            return Err(RequestError::System(e));
        }
        if let Some(bad) = self
            .exceptions
            .iter()
            .find(|tc| tc.kind() != TcKind::Except)
        {
            let e = raise(
                K::BadParam,
                minor::BAD_PARAM_NOT_AN_EXCEPTION,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Local).with_detail(format_args!(
                        "request {:?}: the exception list holds a {} TypeCode",
                        self.operation,
                        bad.kind()
                    ))
                },
            );
            self.exception = Some(RequestError::System(e.clone()));
            return Err(RequestError::System(e));
        }
        self.exception = None;
        Ok(())
    }

    /// Stores the outcome of an invocation: on success moves the decoded
    /// return and `out`/`inout` values into place; on failure replaces an
    /// ORB-level exception by the interpreter's precise error if it had
    /// one.
    fn finish(
        &mut self,
        res: Result<(), RequestError>,
        enc_err: Option<DynError>,
        dec_err: Option<DynError>,
    ) -> Result<(), RequestError> {
        match res {
            Ok(()) => {
                let mut vals = self.scratch.drain(..);
                if let Some(v) = vals.next() {
                    self.result.value = v;
                }
                for nv in self.args.iter_mut().filter(|nv| nv.flags.is_received()) {
                    if let Some(v) = vals.next() {
                        nv.value.value = v;
                    }
                }
                self.exception = None;
                Ok(())
            }
            Err(e) => {
                self.scratch.clear();
                let e = match (e, enc_err, dec_err) {
                    (RequestError::System(_), Some(d), _) => RequestError::System(
                        self.dyn_failure(&d, CompletionStatus::No, Phase::Encode),
                    ),
                    (RequestError::System(_), None, Some(d)) => RequestError::System(
                        self.dyn_failure(&d, CompletionStatus::Yes, Phase::Decode),
                    ),
                    (e, _, _) => e,
                };
                self.exception = Some(e.clone());
                Err(e)
            }
        }
    }

    #[cold]
    fn dyn_failure(
        &self,
        d: &DynError,
        completed: CompletionStatus,
        phase: Phase,
    ) -> SystemException {
        // The interpreter's precise exception, with its error as detail.
        d.system_exception(completed).with_cause(
            Cause::new(phase)
                .with_operation(&self.operation)
                .with_detail(d),
        )
    }
}

/// The request body: `in`/`inout` values, then the context clause.
fn encode_request(
    args: &NVList,
    contexts: Option<&Context>,
    w: &mut Writer,
    err: &Cell<Option<DynError>>,
) -> peregrine_cdr::Result<()> {
    let res = args
        .encode(ArgFlags::is_sent, w)
        .and_then(|()| match contexts {
            Some(ctx) => ctx.encode(w).map_err(DynError::Cdr),
            None => Ok(()),
        });
    res.map_err(|e| keep(err, e))
}

/// The NO_EXCEPTION reply body: the return value then `out`/`inout`
/// values, decoded into `scratch` (moved into place by `finish`).
fn decode_reply(
    ret: &TypeCode,
    args: &NVList,
    scratch: &mut Vec<DynValue>,
    r: &mut Reader<'_>,
    err: &Cell<Option<DynError>>,
) -> peregrine_cdr::Result<()> {
    scratch.clear();
    let res = (|| {
        scratch.push(decode_value(ret, r)?);
        for nv in args.iter().filter(|nv| nv.flags.is_received()) {
            scratch.push(decode_value(&nv.value.tc, r)?);
        }
        Ok(())
    })();
    res.map_err(|e| keep(err, e))
}

/// A USER_EXCEPTION reply: decoded by the listed TypeCode with the same
/// repository id, `None` (UNKNOWN) for an unlisted one.
fn decode_user_exception(
    exceptions: &[TypeCode],
    id: &str,
    r: &mut Reader<'_>,
    err: &Cell<Option<DynError>>,
) -> Option<peregrine_cdr::Result<RequestError>> {
    let tc = exceptions.iter().find(|tc| tc.id() == Ok(id))?;
    Some(match decode_value(tc, r) {
        Ok(v) => Ok(RequestError::User(Any::new(tc.clone(), v))),
        Err(e) => Err(keep(err, e)),
    })
}

/// Keeps the interpreter's error aside and gives the ORB a CDR error.
#[cold]
fn keep(slot: &Cell<Option<DynError>>, e: DynError) -> CdrError {
    let cdr = match &e {
        DynError::Cdr(c) => c.clone(),
        _ => DYN_FAILED,
    };
    slot.set(Some(e));
    cdr
}
