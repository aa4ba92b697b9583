//! `is_equivalent` and `hash` see through how a peer encoded a profile.

use peregrine_cdr::{ByteOrder, Reader, Writer};
use peregrine_giop::ior::TAG_INTERNET_IOP;
use peregrine_giop::{IiopProfile, IiopVersion, Ior, TaggedProfile};
use peregrine_orb::Orb;

/// An IOR whose one IIOP profile is a little-endian encapsulation, read
/// back from a big-endian stream (as JacORB sends its references): the
/// profile is kept as raw octets there, decoded everywhere else.
fn both_forms(key: &[u8]) -> (Ior, Ior) {
    let profile = IiopProfile {
        version: IiopVersion::V1_2,
        host: "127.0.0.1".into(),
        port: 2809,
        object_key: key.to_vec(),
        components: vec![],
    };
    let decoded = Ior {
        type_id: "IDL:Interop/Echo:1.0".into(),
        profiles: vec![TaggedProfile::Iiop(profile.clone())],
    };
    let mut w = Writer::new(ByteOrder::Big);
    w.write_string(&decoded.type_id).unwrap();
    w.write_u32(1);
    w.write_u32(TAG_INTERNET_IOP);
    w.write_octet_seq(&profile.to_body(ByteOrder::Little).unwrap())
        .unwrap();
    let bytes = w.into_vec();
    let raw =
        <Ior as peregrine_cdr::Decode>::decode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap();
    (decoded, raw)
}

#[test]
fn a_profile_in_another_byte_order_is_the_same_object() {
    let orb = Orb::builder().build().unwrap();
    let (decoded, raw) = both_forms(b"key-1");
    assert_ne!(decoded.profiles, raw.profiles, "kept as two forms");
    let a = orb.object_from_ior(decoded).unwrap();
    let b = orb.object_from_ior(raw).unwrap();
    assert!(a.is_equivalent(&b) && b.is_equivalent(&a));
    assert_eq!(a.hash(u32::MAX), b.hash(u32::MAX));
    assert_eq!(a.hash(1000), b.hash(1000));

    let (other, _) = both_forms(b"key-2");
    let c = orb.object_from_ior(other).unwrap();
    assert!(!a.is_equivalent(&c) && !b.is_equivalent(&c));
}
