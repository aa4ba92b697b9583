//! LocateRequest: does the server have the object, or where is it?

use std::sync::Arc;
use std::time::Instant;

use peregrine_cdr::{ByteOrder, Writer};
use peregrine_giop::{decode_message, Endpoint, Ior, Message, TargetAddress};

use super::{conn::*, orb_shut_down, reply::*, route::*};
use super::{Deadline, MAX_FORWARDS, MAX_RESENDS};
use crate::error::raise;
use crate::runtime::{Cause, Phase};
use crate::runtime::{CompletionStatus, ObjectRef, SystemException, SystemExceptionKind as K};

/// Sends a LocateRequest for `obj` and waits for the LocateReply:
/// `OBJECT_HERE` is `true`, `UNKNOWN_OBJECT` `false`; `OBJECT_FORWARD`
/// re-targets the reference (as `LOCATION_FORWARD` does) and asks again.
pub(crate) fn locate(obj: &ObjectRef) -> Result<bool, SystemException> {
    /// A LocateRequest's cause: its "operation" is the message.
    #[cold]
    fn locate_cause(phase: Phase, peer: &Endpoint) -> Cause {
        Cause::new(phase)
            .with_peer(peer)
            .with_operation("LocateRequest")
    }
    let inner = &obj.inner;
    if inner.orb.is_shut_down() {
        return Err(orb_shut_down("LocateRequest"));
    }
    let timeout = inner
        .timeout
        .unwrap_or(inner.orb.inner().config.call_timeout);
    let deadline = Deadline {
        from: Instant::now(),
        after: timeout,
    }
    .instant();
    let mut forwards = 0;
    let mut resends = 0;
    loop {
        let target = inner.target()?;
        let conn = match target.conn(&inner.orb, Deadline::at(deadline)) {
            Ok(c) => c,
            Err(_) if target.forwarded && forwards <= MAX_FORWARDS => {
                inner.set_target(None);
                forwards += 1;
                continue;
            }
            Err(e) => return Err(e.with_operation("LocateRequest")),
        };
        let Ok(Begun { id, .. }) =
            conn.begin(&target, None, true, false, Now::Precise(Instant::now()))
        else {
            target.drop_conn(&conn);
            resends += 1;
            if resends > MAX_RESENDS {
                return Err(raise(K::Transient, 0, CompletionStatus::No, || {
                    locate_cause(Phase::Connect, &conn.ep).with_detail("connection closed")
                }));
            }
            continue;
        };
        let mut w = Writer::new(ByteOrder::NATIVE);
        let h = peregrine_giop::LocateRequestHeader {
            request_id: id,
            target: TargetAddress::Key(&target.key),
        };
        if let Err(e) = peregrine_giop::encode_locate_request(&mut w, target.version, &h) {
            conn.forget(id);
            return Err(raise(K::Marshal, 0, CompletionStatus::No, || {
                locate_cause(Phase::Encode, &conn.ep).with_detail(e)
            }));
        }
        if let Err(e) = conn.send(w.as_slice(), &[]) {
            conn.forget(id);
            resends += 1;
            if resends > MAX_RESENDS {
                return Err(raise(K::CommFailure, 0, CompletionStatus::No, || {
                    locate_cause(Phase::Send, &conn.ep).with_io(e)
                }));
            }
            continue;
        }
        let arrived = match conn.wait(id, deadline, None) {
            Ok(a) => a,
            Err(WaitError::TimedOut) => {
                return Err(raise(K::Timeout, 0, CompletionStatus::No, || {
                    locate_cause(Phase::Receive, &conn.ep)
                        .with_detail(format_args!("deadline of {timeout:?} expired"))
                }))
            }
            // A LocateRequest has no effect: asking again is always safe.
            Err(WaitError::Closed(c)) => {
                resends += 1;
                if resends > MAX_RESENDS {
                    return Err(raise(K::CommFailure, 0, CompletionStatus::No, || {
                        locate_cause(Phase::Receive, &conn.ep)
                            .with_detail(format_args!("connection closed: {c:?}"))
                    }));
                }
                continue;
            }
        };
        let held = Held::new(conn.clone(), arrived);
        let out = held.with_bytes(|bytes| {
            let (status, body) = match decode_message(bytes, &conn.limits) {
                Ok((_, Message::LocateReply { header, body })) => (header.status, body),
                _ => {
                    return Some(Err(raise(K::Marshal, 0, CompletionStatus::No, || {
                        locate_cause(Phase::Decode, &conn.ep).with_detail("not a LocateReply")
                    })))
                }
            };
            use peregrine_giop::LocateStatus as L;
            let mut r = body.reader();
            match status {
                L::UnknownObject => Some(Ok(false)),
                L::ObjectHere => Some(Ok(true)),
                L::ObjectForward | L::ObjectForwardPerm => {
                    match <Ior as peregrine_cdr::Decode>::decode(&mut r) {
                        Ok(ior) if forwards < MAX_FORWARDS => {
                            forwards += 1;
                            let max = inner.orb.inner().config.max_giop;
                            match Target::from_ior(&ior, true, max) {
                                Ok(t) => {
                                    inner.set_target(Some(Arc::new(t)));
                                    None
                                }
                                Err(e) => Some(Err(e)),
                            }
                        }
                        Ok(_) => Some(Err(raise(K::Transient, 0, CompletionStatus::No, || {
                            locate_cause(Phase::Forward, &conn.ep).with_detail(format_args!(
                                "more than {MAX_FORWARDS} OBJECT_FORWARDs"
                            ))
                        }))),
                        Err(e) => Some(Err(raise(K::Marshal, 0, CompletionStatus::No, || {
                            locate_cause(Phase::Decode, &conn.ep)
                                .with_detail(format_args!("malformed OBJECT_FORWARD: {e}"))
                        }))),
                    }
                }
                L::LocSystemException => Some(Err(
                    match <SystemException as peregrine_cdr::Decode>::decode(&mut r) {
                        Ok(e) => e.with_cause(locate_cause(Phase::Reply, &conn.ep)),
                        Err(e) => raise(K::Marshal, 0, CompletionStatus::No, || {
                            locate_cause(Phase::Decode, &conn.ep)
                                .with_detail(format_args!("malformed LOC_SYSTEM_EXCEPTION: {e}"))
                        }),
                    },
                )),
                L::LocNeedsAddressingMode => {
                    Some(Err(raise(K::NoImplement, 0, CompletionStatus::No, || {
                        locate_cause(Phase::Reply, &conn.ep)
                            .with_detail("needs an addressing mode other than KeyAddr")
                    })))
                }
            }
        });
        drop(held);
        if let Some(out) = out {
            return out;
        }
    }
}
