//! Kinds with no wire form of their own (local interfaces, natives) are
//! refused by the interpreter with a system exception and its minor code.

use peregrine_cdr::{ByteOrder, Reader, Writer};
use peregrine_dynamic::error::minor;
use peregrine_dynamic::{decode_value, encode_value, DynError, DynValue, TypeCode};
use peregrine_giop::SystemExceptionKind;

/// Kinds with no wire form of their own are refused with a minor code:
/// a local interface with the OMG's (MARSHAL 4, "attempt to marshal a
/// local object"), a native with Peregrine's.
#[test]
fn kinds_without_a_wire_form_have_minor_codes() {
    use peregrine_giop::CompletionStatus;
    let sys = |e: DynError| {
        let s = e.system_exception(CompletionStatus::No);
        (s.kind, s.minor)
    };
    let local = TypeCode::local_interface_tc("IDL:Local:1.0", "Local");
    let native = TypeCode::native_tc("IDL:Native:1.0", "Native");
    let mut w = Writer::new(ByteOrder::Big);
    let e = encode_value(&local, &DynValue::Long(0), &mut w).unwrap_err();
    assert_eq!(
        sys(e),
        (SystemExceptionKind::Marshal, minor::MARSHAL_LOCAL_OBJECT)
    );
    let e = encode_value(&native, &DynValue::Long(0), &mut w).unwrap_err();
    assert_eq!(
        sys(e),
        (
            SystemExceptionKind::Marshal,
            minor::MARSHAL_UNSUPPORTED_KIND
        )
    );
    for tc in [&local, &native] {
        let e = decode_value(tc, &mut Reader::new(&[0; 8], ByteOrder::Big)).unwrap_err();
        assert_eq!(
            sys(e),
            (
                SystemExceptionKind::Marshal,
                minor::MARSHAL_UNSUPPORTED_KIND
            )
        );
    }
}
