//! # peregrine-giop
//!
//! The General Inter-ORB Protocol, sans I/O: GIOP 1.0-1.2 message headers
//! and bodies, service contexts, fragments and their reassembly, system
//! exceptions on the wire, interoperable object references (IORs) with
//! IIOP profiles and tagged components, and `corbaloc:`/`corbaname:` URLs;
//! and, on top of those, the two ends of a GIOP connection as state
//! machines ([`conn`]).
//!
//! Bytes go in, values come out (and the reverse); nothing here touches a
//! socket or a clock, so every decoder can be fuzzed and every state
//! machine tested deterministically.

pub mod component;
pub mod conn;
pub mod corbaloc;
pub mod error;
pub mod fast;
pub mod fragment;
pub mod header;
pub mod iiop;
pub mod ior;
pub mod limits;
pub mod message;
pub mod service_context;
pub mod system_exception;
pub mod target;

pub use component::{CodeSetComponent, CodeSetComponentInfo, TaggedComponent};
pub use corbaloc::{
    Corbaloc, CorbalocError, CorbalocErrorKind, Corbaname, ObjectUrl, ObjectUrlError,
};
pub use error::GiopError;
pub use fragment::{fragment, Assembled, Fragments, Piece, Reassembler};
pub use header::{MessageHeader, MsgType, HEADER_LEN};
pub use iiop::{Endpoint, IiopProfile, IiopVersion};
pub use ior::{Ior, IorBuilder, IorError, TaggedProfile};
pub use limits::Limits;
pub use message::{
    begin_message, decode_body, decode_message, encode_cancel_request, encode_close_connection,
    encode_locate_reply, encode_locate_request, encode_message_error, encode_reply, encode_request,
    encode_system_exception_reply, Body, LocateReplyHeader, LocateRequestHeader, LocateStatus,
    Message, Pending, ReplyHeader, ReplyStatus, RequestHeader, ResponseFlags,
};
pub use service_context::{
    BiDirIiopContext, CodeSetContext, KnownContext, ListenPoint, OwnedServiceContext,
    ServiceContext, ServiceContexts,
};
pub use system_exception::{Cause, CompletionStatus, Phase, SystemException, SystemExceptionKind};
pub use target::{AddressingDisposition, IorAddressingInfo, TargetAddress};
