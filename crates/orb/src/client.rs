//! Client side: references, connection cache, invocations.

use std::time::Duration;

use peregrine_cdr::{Reader, Writer};
use peregrine_giop::Ior;

use crate::orb::Orb;
use crate::runtime::{CompletionStatus, ObjectRef, SystemException, SystemExceptionKind};

/// The state behind an [`ObjectRef`].
pub(crate) struct RefInner {
    pub(crate) orb: Orb,
    pub(crate) ior: Ior,
    pub(crate) timeout: Option<Duration>,
}

impl RefInner {
    pub(crate) fn new(orb: Orb, ior: Ior, timeout: Option<Duration>) -> Self {
        Self { orb, ior, timeout }
    }
}

pub(crate) fn invoke<T, E: From<SystemException>>(
    _obj: &ObjectRef,
    _op: &str,
    _encode_args: impl FnOnce(&mut Writer) -> peregrine_cdr::Result<()>,
    _decode_result: impl for<'a> FnOnce(&mut Reader<'a>) -> peregrine_cdr::Result<T>,
    _decode_user_exception: impl for<'a> FnOnce(
        &str,
        &mut Reader<'a>,
    ) -> Option<peregrine_cdr::Result<E>>,
) -> Result<T, E> {
    Err(SystemException::new(SystemExceptionKind::NoImplement, 0, CompletionStatus::No).into())
}

pub(crate) fn invoke_oneway(
    _obj: &ObjectRef,
    _op: &str,
    _encode_args: impl FnOnce(&mut Writer) -> peregrine_cdr::Result<()>,
) -> Result<(), SystemException> {
    Err(SystemException::new(
        SystemExceptionKind::NoImplement,
        0,
        CompletionStatus::No,
    ))
}
