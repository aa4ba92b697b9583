//! Deferred synchronous calls: send now, collect the reply later.

use std::time::Instant;

use peregrine_cdr::{ByteOrder, Writer};

use super::call::*;
use crate::runtime::{DecodeResult, DecodeUserException, EncodeArgs, ObjectRef, SystemException};

/// A twoway request sent without waiting for its reply (CORBA's
/// deferred synchronous invocation, `send_deferred`).
///
/// The request is on the wire when [`ObjectRef::send_deferred`] returns;
/// [`DeferredCall::poll_response`] tells whether the reply can be had
/// without blocking and [`DeferredCall::get_response`] collects it (waiting
/// until the call's deadline if need be). A reply that arrives while
/// another thread reads the connection is kept for this call. Dropping a
/// `DeferredCall` abandons its reply.
pub struct DeferredCall {
    pub(super) obj: ObjectRef,
    pub(super) op: String,
    /// The encoded request, kept to re-send after a forward or an
    /// orderly close.
    pub(super) w: Writer,
    pub(super) st: Option<CallState>,
}

impl std::fmt::Debug for DeferredCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredCall")
            .field("op", &self.op)
            .field("request_id", &self.st.as_ref().map(|s| s.request_id))
            .finish()
    }
}

impl DeferredCall {
    /// The operation name.
    pub fn operation(&self) -> &str {
        &self.op
    }

    /// True when [`DeferredCall::get_response`] would not block: the reply
    /// has arrived or the call has failed (connection gone, deadline
    /// passed).
    pub fn poll_response(&self) -> bool {
        let Some(st) = &self.st else { return true };
        if Instant::now() >= st.deadline().instant() {
            return true;
        }
        st.conn.as_ref().map_or(true, |c| c.poll(st.request_id))
    }

    /// Waits for the reply (until the call's deadline) and decodes it as
    /// [`ObjectRef::invoke`] would. Forwards and orderly closes re-send
    /// the request as for a synchronous call.
    pub fn get_response<T, E: From<SystemException>>(
        mut self,
        decode_result: impl DecodeResult<T>,
        decode_user_exception: impl DecodeUserException<E>,
    ) -> Result<T, E> {
        let st = self.st.take().expect("a DeferredCall is consumed once");
        let mut w = std::mem::take(&mut self.w);
        let mut call = Call {
            obj: &self.obj,
            op: &self.op,
            st,
            tail: &[],
        };
        let reply = loop {
            match call.await_reply(&mut w)? {
                Some(reply) => break reply,
                None => call.send(&mut w)?,
            }
        };
        decode_reply(reply, &self.op, decode_result, decode_user_exception)
    }
}

impl Drop for DeferredCall {
    fn drop(&mut self) {
        if let Some(st) = &self.st {
            if let Some(c) = &st.conn {
                c.forget(st.request_id);
            }
        }
    }
}

pub(crate) fn send_deferred(
    obj: &ObjectRef,
    op: &str,
    encode_args: impl EncodeArgs,
) -> Result<DeferredCall, SystemException> {
    // The writer travels with the call (a re-send needs the arguments), so
    // it is not the thread's reusable one.
    let mut w = Writer::new(ByteOrder::NATIVE);
    let mut call = Call::new(obj, op, true, false);
    call.start(&mut w, encode_args)?;
    call.send(&mut w)?;
    let st = call.st;
    Ok(DeferredCall {
        obj: obj.clone(),
        op: op.to_owned(),
        w,
        st: Some(st),
    })
}
