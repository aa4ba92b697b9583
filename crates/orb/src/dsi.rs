//! The Dynamic Skeleton Interface: servants that learn an operation's
//! signature at run time.
//!
//! A [`DynamicImplementation`] receives every request as a
//! [`DynServerRequest`]: it looks at [`DynServerRequest::operation`],
//! hands [`DynServerRequest::arguments`] an [`NVList`] describing the
//! parameters (TypeCodes and [`ArgFlags`]; the interpretive engine decodes
//! the `in`/`inout` values into it), computes, updates the `out`/`inout`
//! entries of the list, and calls [`DynServerRequest::set_result`] or
//! [`DynServerRequest::set_exception`] (user exceptions; a system
//! exception is the upcall's `Err`). After the upcall the adapter writes
//! the reply: the result, then the `out`/`inout` values from the list.
//!
//! [`DynamicServant`] wraps an implementation as a [`Servant`], so a
//! dynamic servant is activated in a POA, used as a default servant or
//! returned by a servant manager like any generated skeleton, and clients
//! cannot tell the difference.
//!
//! ```no_run
//! use std::sync::Arc;
//! use peregrine_dynamic::{Any, DynValue, TypeCode};
//! use peregrine_orb::dii::NVList;
//! use peregrine_orb::dsi::{DynServerRequest, DynamicImplementation, DynamicServant};
//! use peregrine_orb::{Servant, SystemException};
//!
//! struct Echo;
//! impl DynamicImplementation for Echo {
//!     fn invoke(&self, req: &mut DynServerRequest<'_>) -> Result<(), SystemException> {
//!         let mut nv = NVList::new();
//!         nv.add_in("s", Any::new(TypeCode::string_tc(0), DynValue::Null));
//!         let s = req.arguments(nv)?[0].value.clone();
//!         req.set_result(s)
//!     }
//!     fn primary_interface(&self, _oid: &[u8]) -> String {
//!         "IDL:Test/Echo:1.0".into()
//!     }
//! }
//! let servant: Arc<dyn Servant> = Arc::new(DynamicServant::new(Echo));
//! ```
//!
//! Ordering errors use the specification's minor codes: `BAD_INV_ORDER` 7
//! (`arguments` twice or after `set_exception`), 8 (`ctx` before
//! `arguments` or twice), 9 (`set_result` before `arguments`, twice, or
//! after `set_exception`); `BAD_PARAM` 21 for an exception Any that is not
//! a user exception. Arguments that do not decode as the NVList says are
//! `MARSHAL`/`BAD_TYPECODE` (`COMPLETED_NO`); results that do not match
//! their TypeCode are `BAD_PARAM` (`COMPLETED_YES`).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use peregrine_cdr::Reader;
use peregrine_dynamic::{encode_value, Any, DynError, TcKind};

use crate::context::Context;
use crate::dii::{minor, ArgFlags, NVList};
use crate::error::raise;
use crate::orb::Orb;
use crate::runtime::{Cause, Phase};
use crate::runtime::{
    CompletionStatus, ObjectRef, Servant, ServerRequest, SystemException, SystemExceptionKind as K,
};

/// A servant implemented dynamically (`PortableServer::DynamicImplementation`).
pub trait DynamicImplementation: Send + Sync + 'static {
    /// Handles one request: decode the arguments with
    /// [`DynServerRequest::arguments`], then set the result or a user
    /// exception. Returning `Err` sends that system exception (an unknown
    /// operation should be `BAD_OPERATION`). `_is_a`, `_non_existent`,
    /// `_interface` and `_repository_id` are answered by the ORB.
    fn invoke(&self, req: &mut DynServerRequest<'_>) -> Result<(), SystemException>;

    /// The repository id of the most derived interface the servant
    /// implements for `object_id`. [`DynamicServant::new`] asks once with
    /// an empty id, for the references the POA creates and for
    /// `_repository_id`.
    fn primary_interface(&self, object_id: &[u8]) -> String;

    /// True if the servant implements `repo_id` (answers `_is_a`); by
    /// default only its primary interface (`IDL:omg.org/CORBA/Object:1.0`
    /// is answered by the ORB).
    fn is_a(&self, repo_id: &str) -> bool {
        repo_id == self.primary_interface(&[])
    }
}

/// A [`DynamicImplementation`] as a [`Servant`].
pub struct DynamicServant<T> {
    imp: T,
    repo_id: &'static str,
}

impl<T: DynamicImplementation> DynamicServant<T> {
    /// Wraps `imp`; its primary interface is read once, here.
    pub fn new(imp: T) -> Self {
        let repo_id = intern(imp.primary_interface(&[]));
        DynamicServant { imp, repo_id }
    }

    /// The implementation.
    pub fn implementation(&self) -> &T {
        &self.imp
    }
}

/// `Servant::repository_id` returns `&'static str`; dynamic ids are
/// interned so each distinct id is allocated once per process.
fn intern(id: String) -> &'static str {
    static IDS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut ids = IDS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(s) = ids.get(id.as_str()) {
        return s;
    }
    let s: &'static str = Box::leak(id.into_boxed_str());
    ids.insert(s);
    s
}

/// The interface is known only at run time: references are untyped
/// (their IOR type id is still `primary_interface`).
impl<T: DynamicImplementation> crate::runtime::Skeleton for DynamicServant<T> {
    type Reference = ObjectRef;
}

impl<T: DynamicImplementation> Servant for DynamicServant<T> {
    fn repository_id(&self) -> &'static str {
        self.repo_id
    }

    fn is_a(&self, repo_id: &str) -> bool {
        repo_id == self.repo_id || self.imp.is_a(repo_id)
    }

    fn dispatch(&self, req: &mut ServerRequest<'_>) -> Result<(), SystemException> {
        let args = req.args().clone();
        let outcome = {
            let mut d = DynServerRequest {
                operation: req.operation(),
                object_id: req.object_id(),
                orb: req.orb(),
                response_expected: req.response_expected(),
                args,
                params: None,
                result: None,
                exception: None,
                ctx_read: false,
            };
            self.imp.invoke(&mut d)?;
            (d.params, d.result, d.exception)
        };
        if !req.response_expected() {
            return Ok(());
        }
        write_reply(req, outcome)
    }
}

/// Writes the reply the upcall left: a user exception, or the result and
/// the `out`/`inout` values.
fn write_reply(
    req: &mut ServerRequest<'_>,
    (params, result, exception): (Option<NVList>, Option<Any>, Option<Any>),
) -> Result<(), SystemException> {
    let res = if let Some(ex) = exception {
        // set_exception checked the kind, so the id exists.
        let id = ex.tc.id().unwrap_or_default().to_owned();
        let w = req.user_exception(&id);
        encode_value(&ex.tc, &ex.value, w)
    } else {
        let w = req.reply();
        let mut res = Ok(());
        if let Some(r) = &result {
            res = encode_value(&r.tc, &r.value, w);
        }
        match (res, &params) {
            (Ok(()), Some(p)) => p.encode(ArgFlags::is_received, w),
            (res, _) => res,
        }
    };
    res.map_err(|e| {
        e.system_exception(CompletionStatus::Yes).with_cause(
            Cause::new(Phase::Dispatch)
                .with_operation(req.operation())
                .with_detail(format_args!(
                    "encoding the reply: {e} (a result, out value or exception \
                     that does not match its TypeCode)"
                )),
        )
    })
}

/// One request as a dynamic servant sees it (`CORBA::ServerRequest`).
pub struct DynServerRequest<'r> {
    operation: &'r str,
    object_id: &'r [u8],
    orb: &'r Orb,
    response_expected: bool,
    args: Reader<'r>,
    params: Option<NVList>,
    result: Option<Any>,
    exception: Option<Any>,
    ctx_read: bool,
}

impl<'r> DynServerRequest<'r> {
    /// The operation name (`_get_x`/`_set_x` for attributes).
    pub fn operation(&self) -> &str {
        self.operation
    }

    /// The target's object id within its POA.
    pub fn object_id(&self) -> &[u8] {
        self.object_id
    }

    /// The ORB that received the request (to decode object references).
    pub fn orb(&self) -> &Orb {
        self.orb
    }

    /// False for a oneway request (results are discarded).
    pub fn response_expected(&self) -> bool {
        self.response_expected
    }

    /// Decodes the `in` and `inout` arguments into `params` (whose
    /// entries give each parameter's TypeCode and direction, in signature
    /// order; `out` entries are left as given) and keeps the list: change
    /// its `out`/`inout` values through the returned reference (or
    /// [`DynServerRequest::params_mut`]); they are sent after the upcall.
    ///
    /// `BAD_INV_ORDER` minor 7 if called twice or after
    /// [`DynServerRequest::set_exception`]; arguments that do not decode as
    /// `params` describes are `MARSHAL` (or `BAD_TYPECODE`), `COMPLETED_NO`.
    pub fn arguments(&mut self, mut params: NVList) -> Result<&mut NVList, SystemException> {
        if self.params.is_some() || self.exception.is_some() {
            return Err(self.out_of_order(
                minor::BAD_INV_ORDER_ARGUMENTS_CALLED_OUT_OF_ORDER,
                "arguments called twice or after set_exception",
            ));
        }
        if let Err(e) = params.decode(ArgFlags::is_sent, &mut self.args) {
            return Err(self.dyn_error(&e, "arguments"));
        }
        Ok(self.params.insert(params))
    }

    /// The argument list given to [`DynServerRequest::arguments`].
    pub fn params(&self) -> Option<&NVList> {
        self.params.as_ref()
    }

    /// The argument list, to set `out`/`inout` values.
    pub fn params_mut(&mut self) -> Option<&mut NVList> {
        self.params.as_mut()
    }

    /// Reads the IDL context clause that follows the arguments (for an
    /// operation declared with `context(...)`): the properties the caller
    /// sent (`CORBA::ServerRequest::ctx`).
    /// `BAD_INV_ORDER` minor 8 before [`DynServerRequest::arguments`],
    /// when called twice, or after the result or exception was set;
    /// `MARSHAL` for a malformed sequence, with minor
    /// `MARSHAL_INVALID_CONTEXT` for an odd number of strings.
    pub fn ctx(&mut self) -> Result<Context, SystemException> {
        if self.params.is_none()
            || self.ctx_read
            || self.result.is_some()
            || self.exception.is_some()
        {
            return Err(self.out_of_order(
                minor::BAD_INV_ORDER_CTX_CALLED_OUT_OF_ORDER,
                "ctx called before arguments, twice, or after the result was set",
            ));
        }
        self.ctx_read = true;
        Context::decode(&mut self.args).map_err(|e| {
            e.with_cause(
                Cause::new(Phase::Dispatch)
                    .with_operation(self.operation)
                    .with_detail("decoding the context clause"),
            )
        })
    }

    /// Sets the return value (`CORBA::ServerRequest::set_result`).
    /// `BAD_INV_ORDER` minor 9 before [`DynServerRequest::arguments`], when
    /// called twice, or after [`DynServerRequest::set_exception`]. Whether
    /// the value matches its TypeCode is checked when the reply is
    /// written (`BAD_PARAM`, `COMPLETED_YES`).
    pub fn set_result(&mut self, value: Any) -> Result<(), SystemException> {
        if self.params.is_none() || self.result.is_some() || self.exception.is_some() {
            return Err(self.out_of_order(
                minor::BAD_INV_ORDER_SET_RESULT_CALLED_OUT_OF_ORDER,
                "set_result called before arguments, twice, or after set_exception",
            ));
        }
        self.result = Some(value);
        Ok(())
    }

    /// Raises a user exception: `value` is an Any of an exception
    /// TypeCode (`tk_except`) whose repository id goes on the wire, and a
    /// [`peregrine_dynamic::DynValue::Struct`] of its members. It replaces
    /// any result set. `BAD_PARAM` minor 21 for an Any that is not a user
    /// exception (system exceptions are the upcall's `Err`).
    pub fn set_exception(&mut self, value: Any) -> Result<(), SystemException> {
        if value.tc.kind() != TcKind::Except {
            return Err(raise(
                K::BadParam,
                minor::BAD_PARAM_NOT_AN_EXCEPTION,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Dispatch)
                        .with_operation(self.operation)
                        .with_detail(format_args!("set_exception with a {} Any", value.tc.kind()))
                },
            ));
        }
        self.result = None;
        self.exception = Some(value);
        Ok(())
    }

    /// The result set so far.
    pub fn result(&self) -> Option<&Any> {
        self.result.as_ref()
    }

    /// The user exception set so far.
    pub fn exception(&self) -> Option<&Any> {
        self.exception.as_ref()
    }

    #[cold]
    fn out_of_order(&self, minor: u32, what: &str) -> SystemException {
        raise(K::BadInvOrder, minor, CompletionStatus::No, || {
            Cause::new(Phase::Dispatch)
                .with_operation(self.operation)
                .with_detail(what)
        })
    }

    #[cold]
    fn dyn_error(&self, e: &DynError, what: &str) -> SystemException {
        e.system_exception(CompletionStatus::No).with_cause(
            Cause::new(Phase::Dispatch)
                .with_operation(self.operation)
                .with_detail(format_args!("decoding the {what}: {e}")),
        )
    }
}
