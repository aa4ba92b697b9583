//! LocateRequest: does the server have the object, or where is it?
//!
//! A LocateRequest is a call without arguments that is answered by a
//! LocateReply: it goes through [`Call`] like any request (binding,
//! connecting, re-sending after a close, the reply wait, following
//! forwards), and only the answer is read here.

use peregrine_cdr::{ByteOrder, Writer};
use peregrine_giop::system_exception::minor;
use peregrine_giop::{decode_message, Endpoint, Ior, LocateStatus, Message};

use super::call::*;
use super::reply::*;
use crate::error::{raise, raise_cdr, raise_giop};
use crate::runtime::{Cause, Phase};
use crate::runtime::{CompletionStatus, ObjectRef, SystemException, SystemExceptionKind as K};

/// The "operation" a LocateRequest's exceptions and traces name.
const LOCATE: &str = "LocateRequest";

/// What a LocateReply says.
enum Answer {
    /// `OBJECT_HERE` (true) or `UNKNOWN_OBJECT` (false).
    Known(bool),
    /// `OBJECT_FORWARD[_PERM]`, to this IOR (or a malformed one).
    Forward(peregrine_cdr::Result<Ior>),
}

/// Sends a LocateRequest for `obj` and waits for the LocateReply:
/// `OBJECT_HERE` is `true`, `UNKNOWN_OBJECT` `false`; `OBJECT_FORWARD`
/// re-targets the reference (as `LOCATION_FORWARD` does) and asks again.
pub(crate) fn locate(obj: &ObjectRef) -> Result<bool, SystemException> {
    let mut call = Call::new(obj, LOCATE, true, false);
    call.st.locate = true;
    let mut w = Writer::new(ByteOrder::NATIVE);
    call.start(&mut w, |_| Ok(()))?;
    loop {
        call.send(&mut w)?;
        let pending = call.st.sent_pending;
        let conn = call.st.conn.clone().expect("sent");
        let got = conn.wait(call.st.request_id, call.st.deadline().instant(), None);
        let Some(arrived) = call.arrival(&mut w, &conn, got)? else {
            // Asked again (the connection closed): `w` holds the request.
            continue;
        };
        let held = Held::new(conn, arrived);
        let answer = held.with_bytes(|bytes| read_answer(bytes, &held.conn));
        let peer = held.conn.ep.clone();
        drop(held);
        match answer? {
            Answer::Known(here) => return Ok(here),
            Answer::Forward(ior) => call.follow_forward(&mut w, &peer, ior, pending)?,
        }
    }
}

/// The answer of the LocateReply `bytes`, or the exception it carries.
fn read_answer(bytes: &[u8], conn: &super::conn::ClientConn) -> Result<Answer, SystemException> {
    let peer = &conn.ep;
    let (status, body) = match decode_message(bytes, &conn.limits) {
        Ok((_, Message::LocateReply { header, body })) => (header.status, body),
        Ok((_, other)) => {
            return Err(raise(
                K::Marshal,
                minor::MARSHAL_INVALID_MESSAGE,
                CompletionStatus::No,
                || {
                    cause(Phase::Decode, peer).with_detail(format_args!(
                        "a {:?} message in answer to a LocateRequest",
                        other.msg_type()
                    ))
                },
            ))
        }
        Err(e) => {
            return Err(raise_giop(&e, CompletionStatus::No, || {
                cause(Phase::Decode, peer).with_detail(format_args!("malformed LocateReply: {e}"))
            }))
        }
    };
    let mut r = body.reader();
    match status {
        LocateStatus::UnknownObject => Ok(Answer::Known(false)),
        LocateStatus::ObjectHere => Ok(Answer::Known(true)),
        LocateStatus::ObjectForward | LocateStatus::ObjectForwardPerm => Ok(Answer::Forward(
            <Ior as peregrine_cdr::Decode>::decode(&mut r),
        )),
        LocateStatus::LocSystemException => {
            match <SystemException as peregrine_cdr::Decode>::decode(&mut r) {
                Ok(e) => Err(raised_by_peer(e, peer, LOCATE)),
                Err(e) => Err(raise_cdr(&e, CompletionStatus::No, || {
                    cause(Phase::Decode, peer)
                        .with_detail(format_args!("malformed LOC_SYSTEM_EXCEPTION: {e}"))
                })),
            }
        }
        LocateStatus::LocNeedsAddressingMode => Err(needs_addressing(peer, LOCATE)),
    }
}

/// A LocateRequest's cause in `phase`.
#[cold]
fn cause(phase: Phase, peer: &Endpoint) -> Cause {
    Cause::new(phase).with_peer(peer).with_operation(LOCATE)
}
