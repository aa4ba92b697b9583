//! Oneway calls, and the writer thread for SYNC_NONE.

use std::sync::Arc;

use peregrine_cdr::Writer;

use super::{call::*, conn::*, fast::*};
use super::{put_writer, take_writer};
use crate::error::raise;
use crate::runtime::{Cause, Phase};
use crate::runtime::{
    CompletionStatus, EncodeArgs, ObjectRef, SyncScope, SystemException, SystemExceptionKind as K,
};

/// [`invoke_oneway`] with a last `in` argument as in
/// [`invoke_with_tail`]. `SYNC_NONE` copies it (the caller returns before
/// the message is written).
#[inline(always)]
pub(crate) fn invoke_oneway_with_tail(
    obj: &ObjectRef,
    op: &str,
    encode_args: impl EncodeArgs,
    tail: Option<&dyn peregrine_cdr::TailSeq>,
) -> Result<(), SystemException> {
    let mut w = take_writer();
    let res = match obj.inner.sync {
        SyncScope::Transport => send_request(obj, op, false, &mut w, encode_args, tail).map(|_| ()),
        SyncScope::None => queue_oneway(obj, op, &mut w, |w| {
            encode_args(w)?;
            tail.map_or(Ok(()), |t| t.encode_all(w))
        }),
    };
    put_writer(w);
    res
}

pub(crate) fn invoke_oneway(
    obj: &ObjectRef,
    op: &str,
    encode_args: impl EncodeArgs,
) -> Result<(), SystemException> {
    invoke_oneway_with_tail(obj, op, encode_args, None)
}

/// A `SYNC_NONE` oneway: encoded by the caller (so its arguments need not
/// outlive the call), then written by the process's oneway writer thread
/// while the caller goes on. Oneways queued by one thread to one
/// connection keep their order; the queue is bounded, so a caller that
/// outruns the network waits rather than growing memory. A message whose
/// connection fails before it is written is lost, which `SYNC_NONE`
/// allows (use `SyncScope::Transport` to learn of write failures).
fn queue_oneway(
    obj: &ObjectRef,
    op: &str,
    w: &mut Writer,
    encode_args: impl EncodeArgs,
) -> Result<(), SystemException> {
    let mut call = Call::new(obj, op, false, false);
    call.start(w, encode_args)?;
    call.finish_message(w)?;
    let conn = call.st.conn.clone().expect("prepared");
    let msg = Outgoing {
        conn,
        bytes: w.as_slice().to_vec(),
    };
    oneway_writer().send(msg).map_err(|_| {
        raise(
            K::Transient,
            peregrine_giop::system_exception::minor::TRANSIENT_ONEWAY_WRITER_GONE,
            CompletionStatus::No,
            || {
                Cause::new(Phase::Send)
                    .with_operation(op)
                    .with_detail("the oneway writer thread is gone")
            },
        )
    })
}

/// A message for the oneway writer thread.
struct Outgoing {
    pub(super) conn: Arc<ClientConn>,
    pub(super) bytes: Vec<u8>,
}

/// Messages the oneway writer may hold before `SYNC_NONE` callers wait.
const ONEWAY_QUEUE: usize = 1024;

/// The queue of the process's oneway writer thread, started on first use.
fn oneway_writer() -> &'static std::sync::mpsc::SyncSender<Outgoing> {
    static WRITER: std::sync::OnceLock<std::sync::mpsc::SyncSender<Outgoing>> =
        std::sync::OnceLock::new();
    WRITER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Outgoing>(ONEWAY_QUEUE);
        std::thread::Builder::new()
            .name("peregrine-oneway".into())
            .spawn(move || {
                for m in rx {
                    // A failed write marks the connection failed; nobody
                    // waits for a SYNC_NONE oneway, so there is no one to
                    // tell.
                    let _ = m.conn.send(&m.bytes, &[]);
                }
            })
            .expect("spawn the oneway writer thread");
        tx
    })
}
