//! CORBA system exceptions as they travel in a `SYSTEM_EXCEPTION` reply:
//! `string exception_id; unsigned long minor_code_value;
//! unsigned long completion_status;`.

use core::fmt;
use core::hash::{Hash, Hasher};
use std::io;
use std::sync::Arc;

use peregrine_cdr::{CdrError, Decode, Encode, Reader, Writer};

/// `CORBA::CompletionStatus`: whether the operation ran before it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum CompletionStatus {
    /// `COMPLETED_YES` (0).
    Yes = 0,
    /// `COMPLETED_NO` (1).
    No = 1,
    /// `COMPLETED_MAYBE` (2).
    Maybe = 2,
}

impl CompletionStatus {
    /// The status for a wire value.
    pub fn from_u32(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::Yes),
            1 => Some(Self::No),
            2 => Some(Self::Maybe),
            _ => None,
        }
    }
}

macro_rules! kinds {
    ($($variant:ident $name:literal;)*) => {
        /// The standard CORBA system exceptions.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum SystemExceptionKind {
            $(
                #[doc = concat!("`CORBA::", $name, "`")]
                $variant,
            )*
        }

        impl SystemExceptionKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [SystemExceptionKind] = &[$(Self::$variant),*];

            /// The IDL name, e.g. `MARSHAL`.
            pub fn name(self) -> &'static str {
                match self { $(Self::$variant => $name,)* }
            }

            /// The repository id, e.g. `IDL:omg.org/CORBA/MARSHAL:1.0`.
            pub fn repository_id(self) -> &'static str {
                match self {
                    $(Self::$variant => concat!("IDL:omg.org/CORBA/", $name, ":1.0"),)*
                }
            }

            /// The kind for an IDL name.
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $($name => Some(Self::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

kinds! {
    Unknown "UNKNOWN";
    BadParam "BAD_PARAM";
    NoMemory "NO_MEMORY";
    ImpLimit "IMP_LIMIT";
    CommFailure "COMM_FAILURE";
    InvObjref "INV_OBJREF";
    NoPermission "NO_PERMISSION";
    Internal "INTERNAL";
    Marshal "MARSHAL";
    Initialize "INITIALIZE";
    NoImplement "NO_IMPLEMENT";
    BadTypecode "BAD_TYPECODE";
    BadOperation "BAD_OPERATION";
    NoResources "NO_RESOURCES";
    NoResponse "NO_RESPONSE";
    PersistStore "PERSIST_STORE";
    BadInvOrder "BAD_INV_ORDER";
    Transient "TRANSIENT";
    FreeMem "FREE_MEM";
    InvIdent "INV_IDENT";
    InvFlag "INV_FLAG";
    IntfRepos "INTF_REPOS";
    BadContext "BAD_CONTEXT";
    ObjAdapter "OBJ_ADAPTER";
    DataConversion "DATA_CONVERSION";
    ObjectNotExist "OBJECT_NOT_EXIST";
    TransactionRequired "TRANSACTION_REQUIRED";
    TransactionRolledback "TRANSACTION_ROLLEDBACK";
    InvalidTransaction "INVALID_TRANSACTION";
    InvPolicy "INV_POLICY";
    CodesetIncompatible "CODESET_INCOMPATIBLE";
    Rebind "REBIND";
    Timeout "TIMEOUT";
    TransactionUnavailable "TRANSACTION_UNAVAILABLE";
    TransactionMode "TRANSACTION_MODE";
    BadQos "BAD_QOS";
    InvalidActivity "INVALID_ACTIVITY";
    ActivityCompleted "ACTIVITY_COMPLETED";
    ActivityRequired "ACTIVITY_REQUIRED";
    ThreadCancelled "THREAD_CANCELLED";
}

impl SystemExceptionKind {
    /// The kind for a repository id: `IDL:omg.org/CORBA/NAME:1.0`, or the
    /// pre-2.2 form `IDL:CORBA/NAME:1.0` that some old ORBs still send.
    pub fn from_repository_id(id: &str) -> Option<Self> {
        let name = id
            .strip_prefix("IDL:omg.org/CORBA/")
            .or_else(|| id.strip_prefix("IDL:CORBA/"))?
            .strip_suffix(":1.0")?;
        Self::from_name(name)
    }
}

impl fmt::Display for SystemExceptionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// OMG-assigned minor codes (`OMGVMCID | n`), from the OMG's table of
/// standard minor exception codes (as also listed in omniORB's
/// `minorCode.h`), and Peregrine's own (`PEREGRINE_VMCID | n`) for
/// conditions that table has no code for. Named `KIND_REASON`; the names
/// are also the table [`lookup`](minor::lookup) reads, so `Display` names
/// every code declared here and no second list can drift from it.
pub mod minor {
    use core::fmt;

    use super::SystemExceptionKind;

    /// The OMG vendor minor codeset id, or-ed into every OMG minor code.
    pub const OMGVMCID: u32 = 0x4f4d_0000;

    /// `OMGVMCID | n`.
    pub const fn omg(n: u32) -> u32 {
        OMGVMCID | n
    }

    /// Peregrine's vendor minor codeset id (`PG` in the high bits), for
    /// conditions the OMG's table has no code for (omniORB and JacORB use
    /// codes of their own, or 0, for the same conditions). Not assigned
    /// by the OMG: chosen to stay apart from the OMG's id (`0x4f4d0000`)
    /// and omniORB's (`0x41540000`), whose codes peers send.
    pub const PEREGRINE_VMCID: u32 = 0x5047_0000;

    /// `PEREGRINE_VMCID | n`.
    pub const fn peregrine(n: u32) -> u32 {
        PEREGRINE_VMCID | n
    }

    /// Declares each code as `vmcid(n)` and lists it, with its name, in
    /// `table`.
    macro_rules! codes {
        ($vmcid:ident, $table:ident; $($(#[$attr:meta])* $name:ident = $n:literal;)*) => {
            $($(#[$attr])* pub const $name: u32 = $vmcid($n);)*

            /// Every code of this codeset declared here, by constant name.
            const $table: &[(&str, u32)] = &[$((stringify!($name), $name)),*];
        };
    }

    codes! {
        peregrine, PEREGRINE_TABLE;

        /// BAD_PARAM (Peregrine) 1: a value that does not match the type
        /// it is sent as (a DII argument, a DSI result, the contents of
        /// an Any, a value in a valuetype slot).
        BAD_PARAM_TYPE_MISMATCH = 1;
        /// BAD_PARAM (Peregrine) 2: a bounded sequence or string longer
        /// than its IDL bound.
        BAD_PARAM_BOUND_EXCEEDED = 2;
        /// BAD_PARAM (Peregrine) 3: a `fixed` value that does not fit its
        /// IDL type `fixed<digits, scale>`, or such a type with more than
        /// 31 digits or a scale over its digits.
        BAD_PARAM_FIXED_OUT_OF_RANGE = 3;
        /// BAD_PARAM (Peregrine) 4: an index past the end of a list (a
        /// DII request's arguments).
        BAD_PARAM_INDEX_OUT_OF_RANGE = 4;
        /// BAD_PARAM (Peregrine) 5: an `-ORB...` argument without its
        /// value or with a malformed one.
        BAD_PARAM_INVALID_ORB_OPTION = 5;

        /// IMP_LIMIT (Peregrine) 1: a length or offset that does not fit
        /// the CDR `unsigned long` that carries it (over 4 GiB).
        IMP_LIMIT_LENGTH_EXCEEDS_ULONG = 1;
        /// IMP_LIMIT (Peregrine) 2: a GIOP message larger than the
        /// configured maximum message size.
        IMP_LIMIT_MESSAGE_TOO_LARGE = 2;
        /// IMP_LIMIT (Peregrine) 3: more service contexts than the
        /// configured maximum.
        IMP_LIMIT_TOO_MANY_SERVICE_CONTEXTS = 3;
        /// IMP_LIMIT (Peregrine) 4: more fragmented messages, fragments or
        /// fragment bytes in reassembly than configured.
        IMP_LIMIT_FRAGMENT_LIMIT_EXCEEDED = 4;
        /// IMP_LIMIT (Peregrine) 5: a POA holds as many active objects as
        /// its system ids can number.
        IMP_LIMIT_OBJECT_TABLE_FULL = 5;

        /// COMM_FAILURE (Peregrine) 1: writing the request to the
        /// connection failed (and it was not re-sent).
        COMM_FAILURE_SEND_FAILED = 1;
        /// COMM_FAILURE (Peregrine) 2: the connection was lost while the
        /// call waited for its reply.
        COMM_FAILURE_WAITING_FOR_REPLY = 2;

        /// INV_OBJREF (Peregrine) 1: an IIOP profile in the reference
        /// that does not decode.
        INV_OBJREF_CORRUPTED_PROFILE = 1;
        /// INV_OBJREF (Peregrine) 2: a reference with no IIOP profile
        /// (nil, or only profiles of other protocols).
        INV_OBJREF_NO_IIOP_PROFILE = 2;

        /// TIMEOUT (Peregrine) 1: the call's deadline passed before its
        /// reply arrived.
        TIMEOUT_CALL_TIMED_OUT = 1;
        /// TIMEOUT (Peregrine) 2: the deadline passed while connecting
        /// (or waiting for another caller's connect to the same
        /// endpoint).
        TIMEOUT_CONNECT_TIMED_OUT = 2;

        /// INITIALIZE (Peregrine) 1: a listening endpoint could not be
        /// bound.
        INITIALIZE_TRANSPORT_ERROR = 1;
        /// INITIALIZE (Peregrine) 2: the signal handlers of
        /// `shutdown_on_signals` could not be installed.
        INITIALIZE_SIGNAL_HANDLERS = 2;

        /// MARSHAL (Peregrine) 1: a boolean octet other than 0 or 1, the
        /// discriminator of an abstract interface (reference or value)
        /// included.
        MARSHAL_INVALID_BOOLEAN = 1;
        /// MARSHAL (Peregrine) 2: a long where a value was expected that
        /// is neither null, an indirection nor a value tag.
        MARSHAL_INVALID_VALUE_TAG = 2;
        /// MARSHAL (Peregrine) 3: an indirection (to a value, repository
        /// id or codebase URL) that leads to nothing read before.
        MARSHAL_INVALID_INDIRECTION = 3;
        /// MARSHAL (Peregrine) 4: a chunked value that breaks the chunking
        /// rules.
        MARSHAL_INVALID_CHUNKED_ENCODING = 4;
        /// MARSHAL (Peregrine) 5: an end tag that closes no open value.
        MARSHAL_INVALID_END_TAG = 5;
        /// MARSHAL (Peregrine) 6: an indirection back to a value still
        /// being read, from a place that cannot be completed later.
        MARSHAL_UNSUPPORTED_VALUE_CYCLE = 6;
        /// MARSHAL (Peregrine) 7: the input ended before the value did
        /// (reading past the end of the message or encapsulation).
        MARSHAL_PASS_END_OF_MESSAGE = 7;
        /// MARSHAL (Peregrine) 8: a sequence, string or encapsulation
        /// length that announces more than the rest of the input holds.
        MARSHAL_LENGTH_EXCEEDS_INPUT = 8;
        /// MARSHAL (Peregrine) 9: a string without its terminating NUL,
        /// with a NUL inside, or with length 0 (which leaves no room for
        /// the NUL).
        MARSHAL_STRING_NOT_END_WITH_NULL = 9;
        /// MARSHAL (Peregrine) 10: an enum value outside its declared
        /// range.
        MARSHAL_INVALID_ENUM_VALUE = 10;
        /// MARSHAL (Peregrine) 11: a union discriminator that selects no
        /// branch when there is no default (or, on encode, a discriminator
        /// that selects another branch than the value's).
        MARSHAL_INVALID_UNION_DISCRIMINATOR = 11;
        /// MARSHAL (Peregrine) 12: a wide string octet length that is not
        /// a whole number of UTF-16 code units.
        MARSHAL_INVALID_WSTRING_LENGTH = 12;
        /// MARSHAL (Peregrine) 13: an encapsulation without a byte-order
        /// octet, or with a bad one.
        MARSHAL_INVALID_ENCAPSULATION = 13;
        /// MARSHAL (Peregrine) 14: types or values nested deeper than the
        /// decoder allows.
        MARSHAL_NESTING_TOO_DEEP = 14;
        /// MARSHAL (Peregrine) 15: a `fixed` value with a digit over 9, a
        /// bad sign or non-zero padding.
        MARSHAL_INVALID_FIXED_VALUE = 15;
        /// MARSHAL (Peregrine) 16: a GIOP header field out of range (reply
        /// or locate status, target addressing disposition, response
        /// flags, completion status).
        MARSHAL_INVALID_HEADER = 16;
        /// MARSHAL (Peregrine) 17: a GIOP message that is not what the
        /// protocol allows here: broken framing or fragments, or a
        /// message of the wrong type.
        MARSHAL_INVALID_MESSAGE = 17;
        /// MARSHAL (Peregrine) 18: a value of a kind this ORB cannot
        /// marshal from its TypeCode alone (a `native`, a `fixed` with a
        /// negative scale).
        MARSHAL_UNSUPPORTED_KIND = 18;
        /// MARSHAL (Peregrine) 19: a value whose state holds object
        /// references, read where no ORB was at hand to bind them to
        /// (through a `ValueBase` or abstract slot of a decoder that
        /// handles no references).
        MARSHAL_NO_VALUE_CONTEXT = 19;
        /// MARSHAL (Peregrine) 20: an operation context (the name/value
        /// strings after the arguments of an operation with a `context`
        /// clause) with an odd number of strings.
        MARSHAL_INVALID_CONTEXT = 20;

        /// NO_IMPLEMENT (Peregrine) 1: `_interface` asked of an object
        /// while this ORB has no interface repository.
        NO_IMPLEMENT_NO_INTERFACE_REPOSITORY = 1;
        /// NO_IMPLEMENT (Peregrine) 2: the server asked for a target
        /// addressing mode other than the object key (the only one this
        /// client sends).
        NO_IMPLEMENT_ADDRESSING_MODE = 2;

        /// OBJ_ADAPTER (Peregrine) 1: the POA's manager is inactive (it
        /// rejects requests).
        OBJ_ADAPTER_POA_MANAGER_INACTIVE = 1;
        /// OBJ_ADAPTER (Peregrine) 2: `ServantActivator::incarnate`
        /// invoked, from its own upcall, an object it is incarnating.
        OBJ_ADAPTER_RECURSIVE_INCARNATE = 2;

        /// OBJECT_NOT_EXIST (Peregrine) 1: an operation on a POA that was
        /// destroyed.
        OBJECT_NOT_EXIST_POA_DESTROYED = 1;

        /// UNKNOWN (Peregrine) 1: a servant, servant manager or adapter
        /// activator panicked.
        UNKNOWN_PANIC = 1;

        /// TRANSIENT (Peregrine) 1: the connection closed before the
        /// request could go out, on every try.
        TRANSIENT_CONNECTION_CLOSED = 1;
        /// TRANSIENT (Peregrine) 2: re-sending a request (after a forward
        /// or a closed connection) would need its arguments marshaled
        /// again (other code sets or GIOP version).
        TRANSIENT_CANNOT_RESEND = 2;
        /// TRANSIENT (Peregrine) 3: more location forwards than a call
        /// follows.
        TRANSIENT_TOO_MANY_FORWARDS = 3;
        /// TRANSIENT (Peregrine) 4: the thread that writes `SYNC_NONE`
        /// oneways is gone.
        TRANSIENT_ONEWAY_WRITER_GONE = 4;
    }

    codes! {
        omg, TABLE;

        /// UNKNOWN 1: an unlisted user exception was raised by the servant.
        UNKNOWN_USER_EXCEPTION = 1;
        /// UNKNOWN 2: a non-standard system exception was raised.
        UNKNOWN_SYSTEM_EXCEPTION = 2;

        /// BAD_PARAM 6: what is marshaled as an abstract interface is
        /// neither an object reference nor a value.
        BAD_PARAM_INCORRECT_ABSTRACT_INTF_TYPE = 6;
        /// BAD_PARAM 7: bad scheme name in a URL.
        BAD_PARAM_BAD_SCHEME_NAME = 7;
        /// BAD_PARAM 8: bad address in a URL.
        BAD_PARAM_BAD_ADDRESS = 8;
        /// BAD_PARAM 9: bad scheme-specific part in a URL.
        BAD_PARAM_BAD_SCHEME_SPECIFIC_PART = 9;
        /// BAD_PARAM 10: other problem with a URL.
        BAD_PARAM_BAD_URI_OTHER = 10;
        /// BAD_PARAM 14: invalid object id.
        BAD_PARAM_INVALID_OBJECT_ID = 14;
        /// BAD_PARAM 23: the wchar transmission code set is not known.
        BAD_PARAM_WCHAR_TCS_NOT_KNOWN = 23;
        /// BAD_PARAM 24: service context id not in range.
        BAD_PARAM_SERVICE_CONTEXT_NOT_IN_RANGE = 24;
        /// BAD_PARAM 25: enum value out of range.
        BAD_PARAM_ENUM_VALUE_OUT_OF_RANGE = 25;
        /// BAD_PARAM 26: invalid service context id.
        BAD_PARAM_INVALID_SERVICE_CONTEXT_ID = 26;
        /// BAD_PARAM 28: invalid component id.
        BAD_PARAM_INVALID_COMPONENT_ID = 28;
        /// BAD_PARAM 29: invalid profile id.
        BAD_PARAM_INVALID_PROFILE_ID = 29;

        /// IMP_LIMIT 1: no usable profile in the IOR.
        IMP_LIMIT_NO_USABLE_PROFILE = 1;

        /// INV_OBJREF 1: wchar not supported by the target.
        INV_OBJREF_WCHAR_NOT_SUPPORTED = 1;
        /// INV_OBJREF 2: the IOR lacks the code set component it needs.
        INV_OBJREF_CODESET_COMPONENT_REQUIRED = 2;

        /// MARSHAL 1: no value factory for a value type.
        MARSHAL_NO_VALUE_FACTORY = 1;
        /// MARSHAL 2: DSI ServerRequest called in the wrong order.
        MARSHAL_SERVER_REQUEST_WRONG_ORDER = 2;
        /// MARSHAL 3: DSI NVList does not match the request.
        MARSHAL_SERVER_REQUEST_NVLIST = 3;
        /// MARSHAL 4: attempt to marshal a local object.
        MARSHAL_LOCAL_OBJECT = 4;
        /// MARSHAL 5: wchar/wstring sent by a GIOP 1.0 client (or with no
        /// negotiated code set).
        MARSHAL_WCHAR_FROM_GIOP10_CLIENT = 5;
        /// MARSHAL 6: wchar/wstring returned to a GIOP 1.0 client.
        MARSHAL_WCHAR_FROM_GIOP10_SERVER = 6;

        /// NO_IMPLEMENT 1: missing local value implementation.
        NO_IMPLEMENT_NO_VALUE_IMPL = 1;
        /// NO_IMPLEMENT 2: incompatible value implementation version.
        NO_IMPLEMENT_INCOMPATIBLE_VERSION = 2;
        /// NO_IMPLEMENT 3: no usable profile.
        NO_IMPLEMENT_NO_USABLE_PROFILE = 3;
        /// NO_IMPLEMENT 4: DII on a local object.
        NO_IMPLEMENT_DII_ON_LOCAL_OBJECT = 4;

        /// BAD_INV_ORDER 3: the operation would deadlock.
        BAD_INV_ORDER_WOULD_DEADLOCK = 3;
        /// BAD_INV_ORDER 4: the ORB has shut down.
        BAD_INV_ORDER_ORB_HAS_SHUTDOWN = 4;

        /// TRANSIENT 1: the POA has no resources to serve the request.
        TRANSIENT_POA_NO_RESOURCE = 1;
        /// TRANSIENT 2: no usable profile (all endpoints failed).
        TRANSIENT_NO_USABLE_PROFILE = 2;
        /// TRANSIENT 3: the request was cancelled.
        TRANSIENT_REQUEST_CANCELLED = 3;
        /// TRANSIENT 4: the POA was destroyed.
        TRANSIENT_POA_DESTROYED = 4;

        /// OBJ_ADAPTER 1: unknown adapter (no AdapterActivator found it).
        OBJ_ADAPTER_POA_UNKNOWN_ADAPTER = 1;
        /// OBJ_ADAPTER 2: no servant for the request.
        OBJ_ADAPTER_NO_SERVANT = 2;
        /// OBJ_ADAPTER 3: no default servant.
        OBJ_ADAPTER_NO_DEFAULT_SERVANT = 3;
        /// OBJ_ADAPTER 4: no servant manager.
        OBJ_ADAPTER_NO_SERVANT_MANAGER = 4;
        /// OBJ_ADAPTER 5: wrong policy for incarnate.
        OBJ_ADAPTER_WRONG_INCARNATE_POLICY = 5;

        /// CODESET_INCOMPATIBLE 2: the code set the peer chose (in its
        /// CodeSets service context) is not one this ORB supports as a
        /// transmission code set.
        CODESET_INCOMPATIBLE_CODESET_NOT_SUPPORTED = 2;

        /// DATA_CONVERSION 1: a character cannot be mapped to/from the
        /// transmission code set.
        DATA_CONVERSION_CANNOT_MAP_CHAR = 1;

        /// BAD_OPERATION 2: the target object has no operation or
        /// attribute of the requested name.
        BAD_OPERATION_UNKNOWN_OPERATION = 2;

        /// OBJECT_NOT_EXIST 1: no object adapter or object matches the key.
        OBJECT_NOT_EXIST_NO_MATCH = 1;
        /// OBJECT_NOT_EXIST 2: the servant manager's incarnate failed.
        OBJECT_NOT_EXIST_INCARNATE_FAILED = 2;

        /// INV_POLICY 1: cannot reconcile the IOR policy with an override.
        INV_POLICY_CANNOT_RECONCILE = 1;
        /// INV_POLICY 2: invalid policy type.
        INV_POLICY_INVALID_POLICY_TYPE = 2;
        /// INV_POLICY 3: no policy factory for the policy type.
        INV_POLICY_NO_POLICY_FACTORY = 3;

        /// BAD_INV_ORDER 6: the POA already has a servant manager.
        BAD_INV_ORDER_SERVANT_MANAGER_ALREADY_SET = 6;
        /// BAD_INV_ORDER 7: `ServerRequest::arguments` called more than once
        /// or after `set_exception`.
        BAD_INV_ORDER_ARGUMENTS_CALLED_OUT_OF_ORDER = 7;
        /// BAD_INV_ORDER 8: `ServerRequest::ctx` called before `arguments`,
        /// more than once, or after the result or exception was set.
        BAD_INV_ORDER_CTX_CALLED_OUT_OF_ORDER = 8;
        /// BAD_INV_ORDER 9: `ServerRequest::set_result` called more than once,
        /// before `arguments` or after `set_exception`.
        BAD_INV_ORDER_SET_RESULT_CALLED_OUT_OF_ORDER = 9;
        /// BAD_INV_ORDER 10: a DII request sent while its deferred call is
        /// outstanding.
        BAD_INV_ORDER_REQUEST_ALREADY_SENT = 10;
        /// BAD_INV_ORDER 11: a DII request polled, or its response asked for,
        /// before it was sent deferred.
        BAD_INV_ORDER_REQUEST_NOT_SENT_YET = 11;
        /// BAD_INV_ORDER 12: a DII request polled, or its response asked for,
        /// after the response was collected.
        BAD_INV_ORDER_RESULT_ALREADY_RECEIVED = 12;
        /// BAD_INV_ORDER 13: a synchronous (or oneway) DII request polled or
        /// asked for a deferred response.
        BAD_INV_ORDER_REQUEST_IS_SYNCHRONOUS = 13;

        /// BAD_PARAM 18: a union has a duplicate label.
    BAD_PARAM_DUPLICATE_LABEL = 18;
    /// BAD_PARAM 19: label type incompatible with the discriminator.
        BAD_PARAM_LABEL_TYPE = 19;
        /// BAD_PARAM 20: illegitimate discriminator type.
        BAD_PARAM_DISCRIMINATOR_TYPE = 20;
        /// BAD_PARAM 21: a TypeCode or Any that should describe an exception
        /// does not.
        BAD_PARAM_NOT_AN_EXCEPTION = 21;
        /// BAD_PARAM 22: a user exception not listed for the operation.
        BAD_PARAM_UNLISTED_USER_EXCEPTION = 22;

        /// BAD_TYPECODE 1: attempt to marshal an incomplete TypeCode (an
        /// unresolved recursive placeholder).
        BAD_TYPECODE_INCOMPLETE = 1;
        /// BAD_TYPECODE 2: a member TypeCode illegal where it appears.
        BAD_TYPECODE_ILLEGAL_MEMBER = 2;
        /// BAD_TYPECODE 3: an illegal parameter in a TypeCode.
        BAD_TYPECODE_ILLEGAL_PARAM = 3;
    }

    /// The OMG name of minor code `code` of exception `kind`, when this
    /// module declares it: e.g. `TRANSIENT_NoUsableProfile` for
    /// (`TRANSIENT`, `omg(2)`).
    pub fn lookup(kind: SystemExceptionKind, code: u32) -> Option<MinorName> {
        let k = kind.name();
        TABLE.iter().chain(PEREGRINE_TABLE).find_map(|&(name, c)| {
            let reason = name.strip_prefix(k)?.strip_prefix('_')?;
            (c == code).then_some(MinorName { name, reason })
        })
    }

    /// A named minor code. `Display` writes it as omniORB does: the
    /// exception's name, `_`, then the reason in CamelCase
    /// (`OBJECT_NOT_EXIST_NoMatch`), keeping acronyms (`POA`, `URI`...)
    /// in capitals.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct MinorName {
        name: &'static str,
        reason: &'static str,
    }

    impl MinorName {
        /// The constant's name in this module, e.g.
        /// `OBJECT_NOT_EXIST_NO_MATCH`.
        pub fn constant(self) -> &'static str {
            self.name
        }
    }

    /// Words written in capitals in CamelCase names, as omniORB does.
    const ACRONYMS: &[&str] = &[
        "POA", "ORB", "URI", "DII", "DSI", "IOR", "IIOP", "NVLIST", "GIOP10",
    ];

    impl fmt::Display for MinorName {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(&self.name[..self.name.len() - self.reason.len()])?;
            for word in self.reason.split('_') {
                if ACRONYMS.contains(&word) {
                    f.write_str(if word == "NVLIST" { "NVList" } else { word })?;
                    continue;
                }
                let mut chars = word.chars();
                if let Some(c) = chars.next() {
                    write!(f, "{c}")?;
                }
                for c in chars {
                    write!(f, "{}", c.to_ascii_lowercase())?;
                }
            }
            Ok(())
        }
    }
}

/// A CORBA system exception: kind, minor code, completion status, and,
/// when the ORB raised it, its [`Cause`].
///
/// `Debug` prints what `Display` prints (`CORBA::TRANSIENT (minor
/// 0x4f4d0002 TRANSIENT_NoUsableProfile, COMPLETED_NO): connect to
/// 127.0.0.1:9 for 'greet': Connection refused (os error 111)`), so the
/// error a `main` returning `Result<(), Box<dyn Error>>` reports reads as
/// omniORB's would, with the minor code in hex as the OMG's tables list
/// it, and says what failed where.
///
/// The cause is not part of the exception's identity: equality and
/// hashing ignore it, and it never goes on the wire (a peer's exception
/// arrives without one; the client adds the peer and the operation).
/// It is shared (`Arc`), so the value stays cheap to clone, `Send` and
/// `Sync`, and costs one null word until an error is raised.
#[derive(Clone)]
pub struct SystemException {
    /// Which exception.
    pub kind: SystemExceptionKind,
    /// The minor code (vendor id in the high 20 bits, see [`minor`]).
    pub minor: u32,
    /// Whether the operation ran.
    pub completed: CompletionStatus,
    /// The repository id as received when it was not the canonical one
    /// for `kind` (an unknown id decodes as `UNKNOWN` and is kept here),
    /// so forwarding the exception sends it unchanged.
    pub foreign_id: Option<String>,
    /// Why, where and for which call; `None` for an exception made by
    /// [`new`](Self::new) or decoded from a reply.
    cause: Option<Arc<Cause>>,
}

impl SystemException {
    /// A standard exception.
    pub fn new(kind: SystemExceptionKind, minor: u32, completed: CompletionStatus) -> Self {
        Self {
            kind,
            minor,
            completed,
            foreign_id: None,
            cause: None,
        }
    }

    /// What the ORB knows of why it was raised, if anything.
    pub fn cause(&self) -> Option<&Cause> {
        self.cause.as_deref()
    }

    /// The exception with `cause` (replacing any earlier one).
    #[must_use]
    pub fn with_cause(mut self, cause: Cause) -> Self {
        self.cause = Some(Arc::new(cause));
        self
    }

    /// The exception with its cause naming `operation`, unless it already
    /// names one (an error raised below the call, e.g. while connecting,
    /// learns the call's operation on its way up).
    ///
    /// Cold: it only runs on the way out of a failed call, and so keeps
    /// its code out of the call path (docs/PERFORMANCE.md, step 37).
    #[must_use]
    #[cold]
    pub fn with_operation(mut self, operation: &str) -> Self {
        let cause = Arc::make_mut(self.cause.get_or_insert_with(Default::default));
        if cause.operation.is_none() {
            cause.operation = Some(operation.into());
        }
        self
    }

    /// The repository id to send.
    pub fn repository_id(&self) -> &str {
        self.foreign_id
            .as_deref()
            .unwrap_or_else(|| self.kind.repository_id())
    }

    /// The system exception that reports a CDR error, each with its own
    /// minor code: `DATA_CONVERSION` minor 1 for text the code set cannot
    /// carry, `MARSHAL` minor 5 for wide characters without a negotiated
    /// code set or in GIOP 1.0, `MARSHAL` minor 1 for a value without a
    /// factory, `CODESET_INCOMPATIBLE` minor 2 for a code set the ORB
    /// lacks (the OMG's codes); `BAD_PARAM` for a broken IDL bound or a
    /// `fixed` value that does not fit its type, `IMP_LIMIT` for a length
    /// past 2^32 and `MARSHAL` for every kind of malformed input (bad
    /// lengths, reading past the end, strings without NUL, bad enums and
    /// discriminators, broken value encodings...), with Peregrine's codes
    /// (see [`minor`]).
    pub fn from_cdr(err: &CdrError, completed: CompletionStatus) -> Self {
        use SystemExceptionKind as K;
        let (kind, minor) = match err {
            CdrError::InvalidText | CdrError::UnpairedSurrogate | CdrError::Unrepresentable(_) => {
                (K::DataConversion, minor::DATA_CONVERSION_CANNOT_MAP_CHAR)
            }
            CdrError::WideCharNotAllowed => (K::Marshal, minor::MARSHAL_WCHAR_FROM_GIOP10_CLIENT),
            CdrError::BoundExceeded { .. } => (K::BadParam, minor::BAD_PARAM_BOUND_EXCEEDED),
            CdrError::FixedOutOfRange { .. } => (K::BadParam, minor::BAD_PARAM_FIXED_OUT_OF_RANGE),
            CdrError::TooLong(_) => (K::ImpLimit, minor::IMP_LIMIT_LENGTH_EXCEEDS_ULONG),
            CdrError::UnsupportedCodeSet(_) => (
                K::CodesetIncompatible,
                minor::CODESET_INCOMPATIBLE_CODESET_NOT_SUPPORTED,
            ),
            CdrError::NoValueFactory => (K::Marshal, minor::MARSHAL_NO_VALUE_FACTORY),
            CdrError::Truncated { .. } => (K::Marshal, minor::MARSHAL_PASS_END_OF_MESSAGE),
            CdrError::LengthExceedsInput { .. } => {
                (K::Marshal, minor::MARSHAL_LENGTH_EXCEEDS_INPUT)
            }
            CdrError::BadStringTerminator | CdrError::ZeroStringLength => {
                (K::Marshal, minor::MARSHAL_STRING_NOT_END_WITH_NULL)
            }
            CdrError::InvalidEnum(_) => (K::Marshal, minor::MARSHAL_INVALID_ENUM_VALUE),
            CdrError::InvalidDiscriminator => {
                (K::Marshal, minor::MARSHAL_INVALID_UNION_DISCRIMINATOR)
            }
            CdrError::OddWstringLength => (K::Marshal, minor::MARSHAL_INVALID_WSTRING_LENGTH),
            CdrError::BadEncapsulation => (K::Marshal, minor::MARSHAL_INVALID_ENCAPSULATION),
            CdrError::TooDeep => (K::Marshal, minor::MARSHAL_NESTING_TOO_DEEP),
            CdrError::InvalidFixed => (K::Marshal, minor::MARSHAL_INVALID_FIXED_VALUE),
            CdrError::InvalidBoolean(_) => (K::Marshal, minor::MARSHAL_INVALID_BOOLEAN),
            CdrError::BadValueTag(_) => (K::Marshal, minor::MARSHAL_INVALID_VALUE_TAG),
            CdrError::BadIndirection(_) => (K::Marshal, minor::MARSHAL_INVALID_INDIRECTION),
            CdrError::BadChunk => (K::Marshal, minor::MARSHAL_INVALID_CHUNKED_ENCODING),
            CdrError::BadEndTag(_) => (K::Marshal, minor::MARSHAL_INVALID_END_TAG),
            CdrError::UnsupportedCycle => (K::Marshal, minor::MARSHAL_UNSUPPORTED_VALUE_CYCLE),
            CdrError::NoValueContext => (K::Marshal, minor::MARSHAL_NO_VALUE_CONTEXT),
            // `CdrError` is non-exhaustive: a variant added later is
            // malformed input until it gets a code of its own.
            _ => (K::Marshal, 0),
        };
        Self::new(kind, minor, completed)
    }
}

/// Completion `No`: a CDR error almost always means the request could not
/// even be decoded; use [`SystemException::from_cdr`] to say otherwise.
impl From<CdrError> for SystemException {
    fn from(e: CdrError) -> Self {
        Self::from_cdr(&e, CompletionStatus::No)
    }
}

/// The exception's identity: what a peer would see. The cause is left
/// out, so an exception compares equal to the one it was raised as.
impl PartialEq for SystemException {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.minor == other.minor
            && self.completed == other.completed
            && self.foreign_id == other.foreign_id
    }
}

impl Eq for SystemException {}

impl Hash for SystemException {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.kind.hash(state);
        self.minor.hash(state);
        self.completed.hash(state);
        self.foreign_id.hash(state);
    }
}

impl fmt::Display for SystemException {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.foreign_id {
            Some(id) if self.kind == SystemExceptionKind::Unknown => write!(f, "{id}")?,
            _ => write!(f, "CORBA::{}", self.kind)?,
        }
        let completed = match self.completed {
            CompletionStatus::Yes => "COMPLETED_YES",
            CompletionStatus::No => "COMPLETED_NO",
            CompletionStatus::Maybe => "COMPLETED_MAYBE",
        };
        write!(f, " (minor {:#010x}", self.minor)?;
        if let Some(name) = minor::lookup(self.kind, self.minor) {
            write!(f, " {name}")?;
        }
        write!(f, ", {completed})")?;
        match &self.cause {
            Some(cause) if !cause.is_empty() => write!(f, ": {cause}"),
            _ => Ok(()),
        }
    }
}

impl fmt::Debug for SystemException {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `source()` is the I/O error behind the exception, if any. (`Display`
/// shows its message too, since most users print only the top error.)
impl std::error::Error for SystemException {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let io: &io::Error = self.cause.as_ref()?.io.as_deref()?;
        Some(io)
    }
}

/// The step of a call, or of the ORB's life, in which an exception arose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// Setting the ORB up (arguments, configuration, signal handling).
    Init,
    /// Binding or starting a listening endpoint.
    Listen,
    /// Turning a string or IOR into a usable reference.
    Resolve,
    /// Opening a connection to the peer.
    Connect,
    /// Encoding the request.
    Encode,
    /// Writing the request to the peer.
    Send,
    /// Waiting for and reading the reply (deadlines, lost connections).
    Receive,
    /// Decoding the reply.
    Decode,
    /// The peer answered with this exception.
    Reply,
    /// Following a LOCATION_FORWARD or re-sending elsewhere.
    Forward,
    /// Serving a request: finding the object, the upcall, the reply.
    Dispatch,
    /// A local operation of the POA, the DII or the DSI.
    Local,
}

impl Phase {
    /// The verb, and the preposition that introduces a peer after it.
    fn words(self) -> (&'static str, &'static str) {
        match self {
            Self::Init => ("init", "on"),
            Self::Listen => ("listen", "on"),
            Self::Resolve => ("resolve", "at"),
            Self::Connect => ("connect", "to"),
            Self::Encode => ("encode", "for"),
            Self::Send => ("send", "to"),
            Self::Receive => ("receive", "from"),
            Self::Decode => ("decode reply", "from"),
            Self::Reply => ("reply", "from"),
            Self::Forward => ("forward", "from"),
            Self::Dispatch => ("dispatch", "from"),
            Self::Local => ("local", "on"),
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.words().0)
    }
}

/// Why an ORB raised a [`SystemException`]: the phase, the peer, the
/// operation, a sentence, and the I/O error underneath. Every part is
/// optional. Built only when an exception is raised, so calls that
/// succeed never allocate one.
///
/// `Display`: `connect to 127.0.0.1:9 for 'greet': Connection refused
/// (os error 111)`.
#[derive(Clone, Default)]
pub struct Cause {
    phase: Option<Phase>,
    peer: Option<String>,
    operation: Option<String>,
    detail: Option<String>,
    // In an `Arc` so that the cause can be cloned (`io::Error` cannot)
    // and one connect failure can be reported to every caller it fails.
    io: Option<Arc<io::Error>>,
}

impl Cause {
    /// A cause in `phase`.
    pub fn new(phase: Phase) -> Self {
        Self {
            phase: Some(phase),
            ..Self::default()
        }
    }

    /// With the peer (`host:port`).
    #[must_use]
    pub fn with_peer(mut self, peer: impl fmt::Display) -> Self {
        self.peer = Some(peer.to_string());
        self
    }

    /// With the operation.
    ///
    /// Cold: it only runs on the way out of a failed call, and so keeps
    /// its code out of the call path (docs/PERFORMANCE.md, step 37).
    #[must_use]
    #[cold]
    pub fn with_operation(mut self, operation: &str) -> Self {
        self.operation = Some(operation.into());
        self
    }

    /// With a sentence saying what went wrong (`format_args!` is
    /// accepted: it is formatted here, only when an error happens).
    #[must_use]
    pub fn with_detail(mut self, detail: impl fmt::Display) -> Self {
        self.detail = Some(detail.to_string());
        self
    }

    /// With the I/O error underneath (the exception's `source()`).
    #[must_use]
    pub fn with_io(self, io: io::Error) -> Self {
        self.with_shared_io(Arc::new(io))
    }

    /// With an I/O error shared with other causes.
    #[must_use]
    pub fn with_shared_io(mut self, io: Arc<io::Error>) -> Self {
        self.io = Some(io);
        self
    }

    /// The phase.
    pub fn phase(&self) -> Option<Phase> {
        self.phase
    }

    /// The peer, `host:port`.
    pub fn peer(&self) -> Option<&str> {
        self.peer.as_deref()
    }

    /// The operation.
    pub fn operation(&self) -> Option<&str> {
        self.operation.as_deref()
    }

    /// The sentence.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// The I/O error underneath.
    pub fn io(&self) -> Option<&io::Error> {
        self.io.as_deref()
    }

    fn is_empty(&self) -> bool {
        self.phase.is_none()
            && self.peer.is_none()
            && self.operation.is_none()
            && self.detail.is_none()
            && self.io.is_none()
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Each part is separated from what is already written.
        let mut sep = "";
        if let Some(phase) = self.phase {
            let (verb, prep) = phase.words();
            f.write_str(verb)?;
            if let Some(peer) = &self.peer {
                write!(f, " {prep} {peer}")?;
            }
            sep = " ";
        } else if let Some(peer) = &self.peer {
            f.write_str(peer)?;
            sep = " ";
        }
        if let Some(op) = &self.operation {
            write!(f, "{sep}for '{op}'")?;
            sep = ": ";
        } else if !sep.is_empty() {
            sep = ": ";
        }
        if let Some(detail) = &self.detail {
            write!(f, "{sep}{detail}")?;
            sep = ": ";
        }
        if let Some(io) = &self.io {
            write!(f, "{sep}{io}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Encode for SystemException {
    fn encode(&self, w: &mut Writer) -> Result<(), CdrError> {
        // Repository ids are ASCII; writing the raw bytes keeps them
        // independent of the negotiated char code set.
        let id = self.repository_id();
        w.write_len(id.len() + 1)?;
        w.write_bytes(id.as_bytes());
        w.write_u8(0);
        w.write_u32(self.minor);
        w.write_u32(self.completed as u32);
        Ok(())
    }
}

impl<'de> Decode<'de> for SystemException {
    fn decode(r: &mut Reader<'de>) -> Result<Self, CdrError> {
        let raw = r.read_string_bytes()?;
        let id = core::str::from_utf8(raw).map_err(|_| CdrError::InvalidText)?;
        let minor = r.read_u32()?;
        let status = r.read_u32()?;
        let completed = CompletionStatus::from_u32(status).ok_or(CdrError::InvalidEnum(status))?;
        let kind = SystemExceptionKind::from_repository_id(id);
        let foreign_id = match kind {
            Some(k) if k.repository_id() == id => None,
            _ => Some(id.to_owned()),
        };
        Ok(Self {
            kind: kind.unwrap_or(SystemExceptionKind::Unknown),
            minor,
            completed,
            foreign_id,
            cause: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_cdr::ByteOrder;

    #[test]
    fn every_kind_round_trips_by_id_and_wire() {
        assert_eq!(SystemExceptionKind::ALL.len(), 40);
        for &kind in SystemExceptionKind::ALL {
            assert_eq!(
                SystemExceptionKind::from_repository_id(kind.repository_id()),
                Some(kind)
            );
            for order in [ByteOrder::Big, ByteOrder::Little] {
                let e = SystemException::new(kind, minor::omg(3), CompletionStatus::Maybe);
                let mut w = Writer::new(order);
                e.encode(&mut w).unwrap();
                let bytes = w.into_vec();
                let mut r = Reader::new(&bytes, order);
                assert_eq!(SystemException::decode(&mut r).unwrap(), e);
                assert!(r.is_empty());
            }
        }
    }

    #[test]
    fn debug_reads_as_display() {
        let e = SystemException::new(
            SystemExceptionKind::Transient,
            minor::omg(2),
            CompletionStatus::No,
        );
        assert_eq!(
            format!("{e:?}"),
            "CORBA::TRANSIENT (minor 0x4f4d0002 TRANSIENT_NoUsableProfile, COMPLETED_NO)"
        );
        assert_eq!(format!("{e:?}"), e.to_string());
    }

    #[test]
    fn minor_names_come_from_the_constants() {
        use SystemExceptionKind as K;
        let name = |k, m| minor::lookup(k, m).map(|n| n.to_string());
        assert_eq!(
            name(K::ObjectNotExist, minor::OBJECT_NOT_EXIST_NO_MATCH).as_deref(),
            Some("OBJECT_NOT_EXIST_NoMatch")
        );
        assert_eq!(
            name(K::Transient, minor::TRANSIENT_POA_NO_RESOURCE).as_deref(),
            Some("TRANSIENT_POANoResource")
        );
        assert_eq!(
            name(K::BadParam, minor::BAD_PARAM_BAD_SCHEME_NAME).as_deref(),
            Some("BAD_PARAM_BadSchemeName")
        );
        // The same number means something else for another kind.
        assert_eq!(
            name(K::Marshal, minor::omg(3)).as_deref(),
            Some("MARSHAL_ServerRequestNVList")
        );
        assert_eq!(name(K::Marshal, 0), None);
        // Peregrine's codes are named too, and apart from the OMG's with
        // the same number.
        assert_eq!(
            name(K::Marshal, minor::MARSHAL_INVALID_CHUNKED_ENCODING).as_deref(),
            Some("MARSHAL_InvalidChunkedEncoding")
        );
        assert_eq!(minor::MARSHAL_INVALID_BOOLEAN, 0x5047_0001);
        assert_eq!(name(K::Marshal, minor::peregrine(0xfff)), None);
        // The names of the codes for malformed input read as omniORB's do.
        for (k, code, want) in [
            (
                K::Marshal,
                minor::MARSHAL_PASS_END_OF_MESSAGE,
                "MARSHAL_PassEndOfMessage",
            ),
            (
                K::Marshal,
                minor::MARSHAL_STRING_NOT_END_WITH_NULL,
                "MARSHAL_StringNotEndWithNull",
            ),
            (
                K::Marshal,
                minor::MARSHAL_INVALID_ENUM_VALUE,
                "MARSHAL_InvalidEnumValue",
            ),
            (
                K::Marshal,
                minor::MARSHAL_LENGTH_EXCEEDS_INPUT,
                "MARSHAL_LengthExceedsInput",
            ),
            (
                K::BadParam,
                minor::BAD_PARAM_BOUND_EXCEEDED,
                "BAD_PARAM_BoundExceeded",
            ),
            (
                K::BadParam,
                minor::BAD_PARAM_INVALID_ORB_OPTION,
                "BAD_PARAM_InvalidORBOption",
            ),
            (
                K::ImpLimit,
                minor::IMP_LIMIT_LENGTH_EXCEEDS_ULONG,
                "IMP_LIMIT_LengthExceedsUlong",
            ),
            (
                K::CodesetIncompatible,
                minor::CODESET_INCOMPATIBLE_CODESET_NOT_SUPPORTED,
                "CODESET_INCOMPATIBLE_CodesetNotSupported",
            ),
            (
                K::ObjAdapter,
                minor::OBJ_ADAPTER_POA_MANAGER_INACTIVE,
                "OBJ_ADAPTER_POAManagerInactive",
            ),
            (K::Unknown, minor::UNKNOWN_PANIC, "UNKNOWN_Panic"),
        ] {
            assert_eq!(name(k, code).as_deref(), Some(want));
        }
        // Numbered per exception, as the OMG's codes are.
        assert_eq!(
            name(K::BadParam, minor::peregrine(1)).as_deref(),
            Some("BAD_PARAM_TypeMismatch")
        );
        assert_eq!(
            name(K::BadParam, minor::BAD_PARAM_INCORRECT_ABSTRACT_INTF_TYPE).as_deref(),
            Some("BAD_PARAM_IncorrectAbstractIntfType")
        );
        assert_eq!(name(K::Timeout, minor::omg(1)), None);
        assert_eq!(
            minor::lookup(K::Unknown, minor::omg(1)).unwrap().constant(),
            "UNKNOWN_USER_EXCEPTION"
        );
        // No kind is a prefix of another kind plus `_`, so every constant
        // is found under exactly one kind.
        for &k in SystemExceptionKind::ALL {
            for &other in SystemExceptionKind::ALL {
                if k != other {
                    assert!(!other.name().starts_with(&format!("{}_", k.name())));
                }
            }
        }
    }

    /// The table of codes in docs/orb.md names each code as `Display`
    /// does, so the documentation cannot drift from the constants.
    #[test]
    fn the_documented_table_matches_the_constants() {
        let doc = include_str!("../../../docs/orb.md");
        let quoted = |cell: &str| -> Vec<String> {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect()
        };
        let mut rows = 0;
        for line in doc.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split('|').collect();
            let Some(kind) = SystemExceptionKind::from_name(cells[1].trim().trim_matches('`'))
            else {
                continue;
            };
            let codes = quoted(cells[2]);
            let names = quoted(cells[3]);
            assert_eq!(codes.len(), names.len(), "{line}");
            for (code, name) in codes.iter().zip(&names) {
                let code = u32::from_str_radix(code.trim_start_matches("0x"), 16).unwrap();
                assert_eq!(
                    minor::lookup(kind, code).map(|n| n.to_string()).as_deref(),
                    Some(name.as_str()),
                    "{line}"
                );
            }
            rows += 1;
        }
        assert!(rows >= 30, "only {rows} rows of codes found");
    }

    fn connect_refused() -> SystemException {
        SystemException::new(
            SystemExceptionKind::Transient,
            minor::TRANSIENT_NO_USABLE_PROFILE,
            CompletionStatus::No,
        )
        .with_cause(
            Cause::new(Phase::Connect)
                .with_peer("127.0.0.1:9")
                .with_io(io::ErrorKind::ConnectionRefused.into()),
        )
        .with_operation("greet")
    }

    #[test]
    fn the_cause_is_displayed_and_is_the_source() {
        let e = connect_refused();
        assert_eq!(
            e.to_string(),
            "CORBA::TRANSIENT (minor 0x4f4d0002 TRANSIENT_NoUsableProfile, COMPLETED_NO): \
             connect to 127.0.0.1:9 for 'greet': connection refused"
        );
        let cause = e.cause().unwrap();
        assert_eq!(cause.phase(), Some(Phase::Connect));
        assert_eq!(cause.peer(), Some("127.0.0.1:9"));
        assert_eq!(cause.operation(), Some("greet"));
        let source = std::error::Error::source(&e).unwrap();
        let io = source.downcast_ref::<io::Error>().unwrap();
        assert_eq!(io.kind(), io::ErrorKind::ConnectionRefused);
        // An operation already named is kept.
        let again = e.clone().with_operation("other");
        assert_eq!(again.cause().unwrap().operation(), Some("greet"));
        // A detail without phase or peer.
        let d = SystemException::new(SystemExceptionKind::Marshal, 0, CompletionStatus::No)
            .with_cause(Cause::default().with_detail(format_args!("bad {}", 1)));
        assert_eq!(
            d.to_string(),
            "CORBA::MARSHAL (minor 0x00000000, COMPLETED_NO): bad 1"
        );
        let r = SystemException::new(SystemExceptionKind::Marshal, 0, CompletionStatus::Maybe)
            .with_cause(
                Cause::new(Phase::Decode)
                    .with_peer("h:1")
                    .with_operation("echo")
                    .with_detail("truncated"),
            );
        assert!(r
            .to_string()
            .ends_with(": decode reply from h:1 for 'echo': truncated"));
    }

    #[test]
    fn the_cause_is_not_identity_and_not_sent() {
        fn shared<T: Send + Sync + Clone + 'static>() {}
        shared::<SystemException>();
        let plain = SystemException::new(
            SystemExceptionKind::Transient,
            minor::TRANSIENT_NO_USABLE_PROFILE,
            CompletionStatus::No,
        );
        let e = connect_refused();
        assert_eq!(e, plain);
        let hash = |x: &SystemException| {
            use std::collections::hash_map::DefaultHasher;
            let mut h = DefaultHasher::new();
            x.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&e), hash(&plain));
        let mut w = Writer::new(ByteOrder::Big);
        e.encode(&mut w).unwrap();
        let mut w2 = Writer::new(ByteOrder::Big);
        plain.encode(&mut w2).unwrap();
        assert_eq!(w.as_slice(), w2.as_slice());
        let back = SystemException::decode(&mut Reader::new(w.as_slice(), ByteOrder::Big)).unwrap();
        assert!(back.cause().is_none());
        // Crosses threads with its cause.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(e).unwrap())
            .join()
            .unwrap();
        let got = rx.recv().unwrap();
        assert!(std::error::Error::source(&got).is_some());
    }

    #[test]
    fn exact_bytes() {
        let e = SystemException::new(
            SystemExceptionKind::ObjectNotExist,
            minor::OBJECT_NOT_EXIST_NO_MATCH,
            CompletionStatus::No,
        );
        let mut w = Writer::new(ByteOrder::Big);
        e.encode(&mut w).unwrap();
        let mut expect = vec![0, 0, 0, 39];
        expect.extend_from_slice(b"IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0\0");
        // 4 + 39 = 43 -> 1 byte of padding before the minor code.
        expect.extend_from_slice(&[0, 0x4f, 0x4d, 0, 1, 0, 0, 0, 1]);
        assert_eq!(w.as_slice(), &expect[..]);
    }

    #[test]
    fn unknown_and_legacy_ids_are_kept() {
        for id in ["IDL:acme.com/Weird:1.0", "IDL:CORBA/TRANSIENT:1.0"] {
            let mut w = Writer::new(ByteOrder::Little);
            w.write_string(id).unwrap();
            w.write_u32(7);
            w.write_u32(1);
            let bytes = w.into_vec();
            let e = SystemException::decode(&mut Reader::new(&bytes, ByteOrder::Little)).unwrap();
            assert_eq!(e.repository_id(), id);
            let mut w2 = Writer::new(ByteOrder::Little);
            e.encode(&mut w2).unwrap();
            assert_eq!(w2.as_slice(), &bytes[..]);
        }
        let legacy = SystemExceptionKind::from_repository_id("IDL:CORBA/TRANSIENT:1.0");
        assert_eq!(legacy, Some(SystemExceptionKind::Transient));
    }

    #[test]
    fn bad_completion_and_truncation() {
        let mut w = Writer::new(ByteOrder::Big);
        w.write_string("IDL:omg.org/CORBA/MARSHAL:1.0").unwrap();
        w.write_u32(0);
        w.write_u32(3);
        let bytes = w.into_vec();
        assert_eq!(
            SystemException::decode(&mut Reader::new(&bytes, ByteOrder::Big)),
            Err(CdrError::InvalidEnum(3))
        );
        for n in 0..bytes.len() {
            assert!(
                SystemException::decode(&mut Reader::new(&bytes[..n], ByteOrder::Big)).is_err()
            );
        }
    }

    #[test]
    fn cdr_mapping() {
        let c = CompletionStatus::Maybe;
        let m = |e: CdrError| {
            let s = SystemException::from_cdr(&e, c);
            assert_eq!(s.completed, c);
            (s.kind, s.minor)
        };
        use SystemExceptionKind as K;
        // Every variant, with the code it must keep: peers and users
        // match on these numbers.
        let table = [
            (CdrError::InvalidText, K::DataConversion, minor::omg(1)),
            (
                CdrError::UnpairedSurrogate,
                K::DataConversion,
                minor::omg(1),
            ),
            (
                CdrError::Unrepresentable('é'),
                K::DataConversion,
                minor::omg(1),
            ),
            (CdrError::WideCharNotAllowed, K::Marshal, minor::omg(5)),
            (CdrError::NoValueFactory, K::Marshal, minor::omg(1)),
            (
                CdrError::UnsupportedCodeSet(9),
                K::CodesetIncompatible,
                minor::omg(2),
            ),
            (CdrError::InvalidBoolean(2), K::Marshal, minor::peregrine(1)),
            (CdrError::BadValueTag(7), K::Marshal, minor::peregrine(2)),
            (
                CdrError::BadIndirection(-4),
                K::Marshal,
                minor::peregrine(3),
            ),
            (CdrError::BadChunk, K::Marshal, minor::peregrine(4)),
            (CdrError::BadEndTag(-1), K::Marshal, minor::peregrine(5)),
            (CdrError::UnsupportedCycle, K::Marshal, minor::peregrine(6)),
            (CdrError::NoValueContext, K::Marshal, minor::peregrine(19)),
            (
                CdrError::Truncated {
                    needed: 4,
                    remaining: 1,
                },
                K::Marshal,
                minor::peregrine(7),
            ),
            (
                CdrError::LengthExceedsInput {
                    len: 9,
                    remaining: 3,
                },
                K::Marshal,
                minor::peregrine(8),
            ),
            (
                CdrError::BadStringTerminator,
                K::Marshal,
                minor::peregrine(9),
            ),
            (CdrError::ZeroStringLength, K::Marshal, minor::peregrine(9)),
            (CdrError::InvalidEnum(9), K::Marshal, minor::peregrine(10)),
            (
                CdrError::InvalidDiscriminator,
                K::Marshal,
                minor::peregrine(11),
            ),
            (CdrError::OddWstringLength, K::Marshal, minor::peregrine(12)),
            (CdrError::BadEncapsulation, K::Marshal, minor::peregrine(13)),
            (CdrError::TooDeep, K::Marshal, minor::peregrine(14)),
            (CdrError::InvalidFixed, K::Marshal, minor::peregrine(15)),
            (
                CdrError::BoundExceeded { bound: 1, len: 2 },
                K::BadParam,
                minor::peregrine(2),
            ),
            (
                CdrError::FixedOutOfRange {
                    digits: 5,
                    scale: 2,
                },
                K::BadParam,
                minor::peregrine(3),
            ),
            (CdrError::TooLong(1 << 33), K::ImpLimit, minor::peregrine(1)),
        ];
        for (e, kind, code) in table {
            assert_eq!(m(e.clone()), (kind, code), "{e:?}");
            // Every code has a name, so Display never prints a bare number.
            assert!(minor::lookup(kind, code).is_some(), "{e:?} has no name");
        }
        let s: SystemException = CdrError::InvalidBoolean(2).into();
        assert_eq!(s.completed, CompletionStatus::No);
        assert_eq!(
            s.to_string(),
            "CORBA::MARSHAL (minor 0x50470001 MARSHAL_InvalidBoolean, COMPLETED_NO)"
        );
        let t: SystemException = CdrError::Truncated {
            needed: 4,
            remaining: 0,
        }
        .into();
        assert_eq!(
            t.to_string(),
            "CORBA::MARSHAL (minor 0x50470007 MARSHAL_PassEndOfMessage, COMPLETED_NO)"
        );
    }
}
