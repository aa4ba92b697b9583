//! CORBA system exceptions as they travel in a `SYSTEM_EXCEPTION` reply:
//! `string exception_id; unsigned long minor_code_value;
//! unsigned long completion_status;`.

use core::fmt;

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
/// `minorCode.h`). Named `KIND_REASON`.
pub mod minor {
    /// The OMG vendor minor codeset id, or-ed into every OMG minor code.
    pub const OMGVMCID: u32 = 0x4f4d_0000;

    /// `OMGVMCID | n`.
    pub const fn omg(n: u32) -> u32 {
        OMGVMCID | n
    }

    /// UNKNOWN 1: an unlisted user exception was raised by the servant.
    pub const UNKNOWN_USER_EXCEPTION: u32 = omg(1);
    /// UNKNOWN 2: a non-standard system exception was raised.
    pub const UNKNOWN_SYSTEM_EXCEPTION: u32 = omg(2);

    /// BAD_PARAM 7: bad scheme name in a URL.
    pub const BAD_PARAM_BAD_SCHEME_NAME: u32 = omg(7);
    /// BAD_PARAM 8: bad address in a URL.
    pub const BAD_PARAM_BAD_ADDRESS: u32 = omg(8);
    /// BAD_PARAM 9: bad scheme-specific part in a URL.
    pub const BAD_PARAM_BAD_SCHEME_SPECIFIC_PART: u32 = omg(9);
    /// BAD_PARAM 10: other problem with a URL.
    pub const BAD_PARAM_BAD_URI_OTHER: u32 = omg(10);
    /// BAD_PARAM 14: invalid object id.
    pub const BAD_PARAM_INVALID_OBJECT_ID: u32 = omg(14);
    /// BAD_PARAM 23: the wchar transmission code set is not known.
    pub const BAD_PARAM_WCHAR_TCS_NOT_KNOWN: u32 = omg(23);
    /// BAD_PARAM 24: service context id not in range.
    pub const BAD_PARAM_SERVICE_CONTEXT_NOT_IN_RANGE: u32 = omg(24);
    /// BAD_PARAM 25: enum value out of range.
    pub const BAD_PARAM_ENUM_VALUE_OUT_OF_RANGE: u32 = omg(25);
    /// BAD_PARAM 26: invalid service context id.
    pub const BAD_PARAM_INVALID_SERVICE_CONTEXT_ID: u32 = omg(26);
    /// BAD_PARAM 28: invalid component id.
    pub const BAD_PARAM_INVALID_COMPONENT_ID: u32 = omg(28);
    /// BAD_PARAM 29: invalid profile id.
    pub const BAD_PARAM_INVALID_PROFILE_ID: u32 = omg(29);

    /// IMP_LIMIT 1: no usable profile in the IOR.
    pub const IMP_LIMIT_NO_USABLE_PROFILE: u32 = omg(1);

    /// INV_OBJREF 1: wchar not supported by the target.
    pub const INV_OBJREF_WCHAR_NOT_SUPPORTED: u32 = omg(1);
    /// INV_OBJREF 2: the IOR lacks the code set component it needs.
    pub const INV_OBJREF_CODESET_COMPONENT_REQUIRED: u32 = omg(2);

    /// MARSHAL 1: no value factory for a value type.
    pub const MARSHAL_NO_VALUE_FACTORY: u32 = omg(1);
    /// MARSHAL 2: DSI ServerRequest called in the wrong order.
    pub const MARSHAL_SERVER_REQUEST_WRONG_ORDER: u32 = omg(2);
    /// MARSHAL 3: DSI NVList does not match the request.
    pub const MARSHAL_SERVER_REQUEST_NVLIST: u32 = omg(3);
    /// MARSHAL 4: attempt to marshal a local object.
    pub const MARSHAL_LOCAL_OBJECT: u32 = omg(4);
    /// MARSHAL 5: wchar/wstring sent by a GIOP 1.0 client (or with no
    /// negotiated code set).
    pub const MARSHAL_WCHAR_FROM_GIOP10_CLIENT: u32 = omg(5);
    /// MARSHAL 6: wchar/wstring returned to a GIOP 1.0 client.
    pub const MARSHAL_WCHAR_FROM_GIOP10_SERVER: u32 = omg(6);

    /// NO_IMPLEMENT 1: missing local value implementation.
    pub const NO_IMPLEMENT_NO_VALUE_IMPL: u32 = omg(1);
    /// NO_IMPLEMENT 2: incompatible value implementation version.
    pub const NO_IMPLEMENT_INCOMPATIBLE_VERSION: u32 = omg(2);
    /// NO_IMPLEMENT 3: no usable profile.
    pub const NO_IMPLEMENT_NO_USABLE_PROFILE: u32 = omg(3);
    /// NO_IMPLEMENT 4: DII on a local object.
    pub const NO_IMPLEMENT_DII_ON_LOCAL_OBJECT: u32 = omg(4);

    /// BAD_INV_ORDER 3: the operation would deadlock.
    pub const BAD_INV_ORDER_WOULD_DEADLOCK: u32 = omg(3);
    /// BAD_INV_ORDER 4: the ORB has shut down.
    pub const BAD_INV_ORDER_ORB_HAS_SHUTDOWN: u32 = omg(4);

    /// TRANSIENT 1: the POA has no resources to serve the request.
    pub const TRANSIENT_POA_NO_RESOURCE: u32 = omg(1);
    /// TRANSIENT 2: no usable profile (all endpoints failed).
    pub const TRANSIENT_NO_USABLE_PROFILE: u32 = omg(2);
    /// TRANSIENT 3: the request was cancelled.
    pub const TRANSIENT_REQUEST_CANCELLED: u32 = omg(3);
    /// TRANSIENT 4: the POA was destroyed.
    pub const TRANSIENT_POA_DESTROYED: u32 = omg(4);

    /// OBJ_ADAPTER 1: unknown adapter (no AdapterActivator found it).
    pub const OBJ_ADAPTER_POA_UNKNOWN_ADAPTER: u32 = omg(1);
    /// OBJ_ADAPTER 2: no servant for the request.
    pub const OBJ_ADAPTER_NO_SERVANT: u32 = omg(2);
    /// OBJ_ADAPTER 3: no default servant.
    pub const OBJ_ADAPTER_NO_DEFAULT_SERVANT: u32 = omg(3);
    /// OBJ_ADAPTER 4: no servant manager.
    pub const OBJ_ADAPTER_NO_SERVANT_MANAGER: u32 = omg(4);
    /// OBJ_ADAPTER 5: wrong policy for incarnate.
    pub const OBJ_ADAPTER_WRONG_INCARNATE_POLICY: u32 = omg(5);

    /// DATA_CONVERSION 1: a character cannot be mapped to/from the
    /// transmission code set.
    pub const DATA_CONVERSION_CANNOT_MAP_CHAR: u32 = omg(1);

    /// OBJECT_NOT_EXIST 1: no object adapter or object matches the key.
    pub const OBJECT_NOT_EXIST_NO_MATCH: u32 = omg(1);
    /// OBJECT_NOT_EXIST 2: the servant manager's incarnate failed.
    pub const OBJECT_NOT_EXIST_INCARNATE_FAILED: u32 = omg(2);

    /// INV_POLICY 1: cannot reconcile the IOR policy with an override.
    pub const INV_POLICY_CANNOT_RECONCILE: u32 = omg(1);
    /// INV_POLICY 2: invalid policy type.
    pub const INV_POLICY_INVALID_POLICY_TYPE: u32 = omg(2);
    /// INV_POLICY 3: no policy factory for the policy type.
    pub const INV_POLICY_NO_POLICY_FACTORY: u32 = omg(3);
}

/// A CORBA system exception: kind, minor code, completion status.
///
/// `Debug` prints what `Display` prints (`CORBA::TRANSIENT (minor
/// 0x4f4d0002, COMPLETED_NO)`), so the error a `main` returning
/// `Result<(), Box<dyn Error>>` reports reads as omniORB's would, with the
/// minor code in hex as the OMG's tables list it.
#[derive(Clone, PartialEq, Eq, Hash)]
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
}

impl SystemException {
    /// A standard exception.
    pub fn new(kind: SystemExceptionKind, minor: u32, completed: CompletionStatus) -> Self {
        Self {
            kind,
            minor,
            completed,
            foreign_id: None,
        }
    }

    /// The repository id to send.
    pub fn repository_id(&self) -> &str {
        self.foreign_id
            .as_deref()
            .unwrap_or_else(|| self.kind.repository_id())
    }

    /// The system exception that reports a CDR error: `DATA_CONVERSION`
    /// for text the code set cannot carry, `MARSHAL` minor 5 for wide
    /// characters without a negotiated code set or in GIOP 1.0,
    /// `BAD_PARAM` for a broken IDL bound or a `fixed` value that does not
    /// fit its type, `IMP_LIMIT` for a length past
    /// 2^32, `CODESET_INCOMPATIBLE` for a code set the ORB lacks, `MARSHAL`
    /// for malformed input.
    pub fn from_cdr(err: &CdrError, completed: CompletionStatus) -> Self {
        use SystemExceptionKind as K;
        let (kind, minor) = match err {
            CdrError::InvalidText | CdrError::UnpairedSurrogate | CdrError::Unrepresentable(_) => {
                (K::DataConversion, minor::DATA_CONVERSION_CANNOT_MAP_CHAR)
            }
            CdrError::WideCharNotAllowed => (K::Marshal, minor::MARSHAL_WCHAR_FROM_GIOP10_CLIENT),
            CdrError::BoundExceeded { .. } | CdrError::FixedOutOfRange { .. } => (K::BadParam, 0),
            CdrError::TooLong(_) => (K::ImpLimit, 0),
            CdrError::UnsupportedCodeSet(_) => (K::CodesetIncompatible, 0),
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
        write!(f, " (minor {:#010x}, {completed})", self.minor)
    }
}

impl fmt::Debug for SystemException {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for SystemException {}

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
            "CORBA::TRANSIENT (minor 0x4f4d0002, COMPLETED_NO)"
        );
        assert_eq!(format!("{e:?}"), e.to_string());
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
            (s.kind, s.minor)
        };
        use SystemExceptionKind as K;
        assert_eq!(m(CdrError::InvalidText), (K::DataConversion, minor::omg(1)));
        assert_eq!(m(CdrError::WideCharNotAllowed), (K::Marshal, minor::omg(5)));
        assert_eq!(
            m(CdrError::BoundExceeded { bound: 1, len: 2 }).0,
            K::BadParam
        );
        assert_eq!(m(CdrError::TooLong(1)).0, K::ImpLimit);
        assert_eq!(
            m(CdrError::FixedOutOfRange {
                digits: 5,
                scale: 2
            })
            .0,
            K::BadParam
        );
        assert_eq!(m(CdrError::InvalidFixed).0, K::Marshal);
        assert_eq!(m(CdrError::UnsupportedCodeSet(9)).0, K::CodesetIncompatible);
        assert_eq!(m(CdrError::BadStringTerminator).0, K::Marshal);
        let s: SystemException = CdrError::InvalidBoolean(2).into();
        assert_eq!(s.completed, CompletionStatus::No);
        assert_eq!(
            s.to_string(),
            "CORBA::MARSHAL (minor 0x00000000, COMPLETED_NO)"
        );
    }
}
