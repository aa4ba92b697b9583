//! IOR, IIOP profile, tagged component and corbaloc tests: hand-written
//! vectors, hostile input, and property-based round trips.

use peregrine_cdr::{ByteOrder, CdrError, CodeSetId, Decode, Encode, Reader, Writer};
use peregrine_giop::component::{
    code_set_name, orb_type_name, TAG_ALTERNATE_IIOP_ADDRESS, TAG_CODE_SETS, TAG_ORB_TYPE,
    TAG_POLICIES,
};
use peregrine_giop::corbaloc::{escape_key, IiopAddr, ObjAddr, DEFAULT_CORBALOC_PORT};
use peregrine_giop::ior::{TAG_INTERNET_IOP, TAG_MULTIPLE_COMPONENTS};
use peregrine_giop::{
    CodeSetComponent, CodeSetComponentInfo, Corbaloc, CorbalocErrorKind, Corbaname, Endpoint,
    IiopProfile, IiopVersion, Ior, IorBuilder, IorError, ObjectUrl, ObjectUrlError,
    TaggedComponent, TaggedProfile,
};
use proptest::prelude::*;

const ORDERS: [ByteOrder; 2] = [ByteOrder::Big, ByteOrder::Little];

fn utf8_utf16() -> CodeSetComponentInfo {
    CodeSetComponentInfo {
        for_char_data: CodeSetComponent {
            native_code_set: CodeSetId::UTF_8,
            conversion_code_sets: vec![CodeSetId::ISO_8859_1],
        },
        for_wchar_data: CodeSetComponent::native(CodeSetId::UTF_16),
    }
}

fn sample() -> Ior {
    IorBuilder::new("IDL:Echo:1.0")
        .endpoint("host.example", 2809)
        .endpoint("10.0.0.2", 2810)
        .endpoint("::1", 2811)
        .object_key(b"\xffkey\x00\x01".to_vec())
        .orb_type(0x4154_5400)
        .code_sets(utf8_utf16())
        .build()
}

/// Hex helper for building vectors by hand.
fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

// ---------------------------------------------------------------- vectors

#[test]
fn jacorb_nil_ior_string() {
    // JacORB's constant for a nil reference: big-endian, empty type id,
    // no profiles.
    let s = "IOR:00000000000000010000000000000000";
    let ior: Ior = s.parse().unwrap();
    assert_eq!(ior, Ior::nil());
    assert!(ior.is_nil());
    assert_eq!(ior.to_stringified(ByteOrder::Big).unwrap(), s);
    assert_eq!(
        Ior::nil().to_stringified(ByteOrder::Little).unwrap(),
        "IOR:01000000010000000000000000000000"
    );
}

#[test]
fn hand_built_iiop_1_0_big_endian() {
    // type_id "IDL:A:1.0", one TAG_INTERNET_IOP profile, IIOP 1.0,
    // host "h", port 0x0b19 (2841), key "K".
    let bytes = hex("00 000000  0000000a 49444c3a413a312e3000 0000
         00000001
         00000000 00000011
            00 01 00 00  00000002 6800 0b19  00000001 4b");
    let ior = Ior::from_encapsulation(&bytes).unwrap();
    assert_eq!(ior.type_id, "IDL:A:1.0");
    let TaggedProfile::Iiop(p) = &ior.profiles[0] else {
        panic!("not typed: {:?}", ior.profiles[0]);
    };
    assert_eq!(p.version, IiopVersion::V1_0);
    assert_eq!((p.host.as_str(), p.port), ("h", 2841));
    assert_eq!(p.object_key, b"K");
    assert!(p.components.is_empty());
    assert_eq!(ior.to_encapsulation(ByteOrder::Big).unwrap(), bytes);
}

#[test]
fn hand_built_iiop_1_2_little_endian_with_components() {
    // IIOP 1.2 profile with ORB_TYPE (omniORB), CODE_SETS (UTF-8 +
    // ISO-8859-1 conversion, UTF-16) and one alternate address.
    let body = hex("01 01 02 00  02000000 6100 3412  01000000 4b 000000
         03000000
         00000000 08000000 01000000 00545441
         01000000 18000000 01000000 01000105 01000000 01000100 09010100 00000000
         03000000 0c000000 01000000 02000000 6200 3500");
    let mut w = Writer::new(ByteOrder::Little);
    w.write_u8(1);
    w.write_string("").unwrap();
    w.write_u32(1);
    w.write_u32(TAG_INTERNET_IOP);
    w.write_octet_seq(&body).unwrap();
    let bytes = w.into_vec();
    let ior = Ior::from_encapsulation(&bytes).unwrap();
    let p = &ior.iiop_profiles().unwrap()[0];
    assert!(matches!(ior.profiles[0], TaggedProfile::Iiop(_)));
    assert_eq!(p.version, IiopVersion::V1_2);
    assert_eq!(
        p.endpoints(),
        vec![Endpoint::new("a", 0x1234), Endpoint::new("b", 0x35)]
    );
    assert_eq!(p.orb_type(), Some(0x4154_5400));
    assert_eq!(ior.code_sets(), Some(utf8_utf16()));
    assert_eq!(
        p.components,
        vec![
            TaggedComponent::OrbType(0x4154_5400),
            TaggedComponent::CodeSets(utf8_utf16()),
            TaggedComponent::AlternateIiopAddress {
                host: "b".into(),
                port: 0x35
            },
        ]
    );
    assert_eq!(ior.to_encapsulation(ByteOrder::Little).unwrap(), bytes);
}

#[test]
fn builder_and_accessors() {
    let ior = sample();
    assert_eq!(ior.type_id, "IDL:Echo:1.0");
    assert_eq!(
        ior.endpoints().unwrap(),
        vec![
            Endpoint::new("host.example", 2809),
            Endpoint::new("10.0.0.2", 2810),
            Endpoint::new("::1", 2811),
        ]
    );
    assert_eq!(ior.orb_type(), Some(0x4154_5400));
    assert_eq!(ior.code_sets(), Some(utf8_utf16()));
    assert_eq!(Endpoint::new("::1", 1).to_string(), "[::1]:1");
    for order in ORDERS {
        let s = ior.to_stringified(order).unwrap();
        assert!(s.starts_with("IOR:0"));
        assert_eq!(s[4..], s[4..].to_lowercase());
        assert_eq!(Ior::from_stringified(&s).unwrap(), ior);
        // Uppercase hex and prefix are accepted too.
        assert_eq!(Ior::from_stringified(&s.to_uppercase()).unwrap(), ior);
    }
    // IIOP 1.0 has no components: the builder drops them.
    let old = IorBuilder::new("")
        .version(IiopVersion::V1_0)
        .endpoint("a", 1)
        .endpoint("b", 2)
        .orb_type(1)
        .build();
    assert_eq!(old.iiop_profiles().unwrap()[0].components, vec![]);
    assert!(IorBuilder::new("IDL:X:1.0").build().is_nil());
}

#[test]
fn ior_inside_a_stream_is_not_encapsulated() {
    // Inside a GIOP body (TargetAddress::Reference, object reference
    // arguments) an IOR is a plain struct at the stream's alignment.
    let ior = sample();
    for order in ORDERS {
        let mut w = Writer::new(order);
        w.write_u8(7);
        ior.encode(&mut w).unwrap();
        let bytes = w.into_vec();
        let mut r = Reader::new(&bytes, order);
        assert_eq!(r.read_u8().unwrap(), 7);
        assert_eq!(Ior::decode(&mut r).unwrap(), ior);
        assert!(r.is_empty());
    }
}

#[test]
fn multiple_profiles_kept_in_order() {
    let mut ior = sample();
    ior.profiles.insert(
        0,
        TaggedProfile::Other {
            tag: 0x4f4f_4300,
            data: vec![9, 8, 7],
        },
    );
    ior.profiles.push(TaggedProfile::MultipleComponents(vec![
        TaggedComponent::OrbType(0x5441_4f00),
        TaggedComponent::Other {
            tag: TAG_POLICIES,
            data: vec![0, 0, 0, 0, 0, 0, 0, 0],
        },
    ]));
    for order in ORDERS {
        let bytes = ior.to_encapsulation(order).unwrap();
        let back = Ior::from_encapsulation(&bytes).unwrap();
        assert_eq!(back, ior);
        assert_eq!(back.profiles[2].tag(), TAG_MULTIPLE_COMPONENTS);
        assert_eq!(back.to_encapsulation(order).unwrap(), bytes);
    }
}

#[test]
fn non_canonical_profile_is_kept_byte_exact_and_still_decodes() {
    // A little-endian profile body inside a big-endian IOR, with two
    // octets appended (as a later IIOP minor version might).
    let p = IiopProfile {
        version: IiopVersion::new(1, 3),
        host: "x".into(),
        port: 7,
        object_key: vec![1, 2, 3],
        components: vec![TaggedComponent::OrbType(5)],
    };
    let mut body = p.to_body(ByteOrder::Little).unwrap();
    body.extend_from_slice(&[0xAA, 0xBB]);
    let ior = Ior {
        type_id: "IDL:T:1.0".into(),
        profiles: vec![TaggedProfile::Other {
            tag: TAG_INTERNET_IOP,
            data: body.clone(),
        }],
    };
    let bytes = ior.to_encapsulation(ByteOrder::Big).unwrap();
    let back = Ior::from_encapsulation(&bytes).unwrap();
    assert_eq!(back, ior, "kept raw");
    assert_eq!(back.to_encapsulation(ByteOrder::Big).unwrap(), bytes);
    assert_eq!(back.iiop_profiles().unwrap(), vec![p.clone()]);
    assert_eq!(IiopProfile::from_body(&body).unwrap(), p);
}

#[test]
fn non_canonical_component_is_kept_byte_exact() {
    // ORB_TYPE encapsulated little-endian inside a big-endian profile,
    // and a CODE_SETS component whose body is truncated.
    let orb = vec![1, 0, 0, 0, 0x00, 0x54, 0x54, 0x41];
    let broken = vec![0, 0, 0, 0, 0, 0, 1];
    let p = IiopProfile {
        version: IiopVersion::V1_2,
        host: "h".into(),
        port: 1,
        object_key: vec![],
        components: vec![
            TaggedComponent::Other {
                tag: TAG_ORB_TYPE,
                data: orb,
            },
            TaggedComponent::Other {
                tag: TAG_CODE_SETS,
                data: broken,
            },
        ],
    };
    let ior = Ior {
        type_id: String::new(),
        profiles: vec![TaggedProfile::Iiop(p)],
    };
    let bytes = ior.to_encapsulation(ByteOrder::Big).unwrap();
    let back = Ior::from_encapsulation(&bytes).unwrap();
    assert_eq!(back, ior);
    assert_eq!(back.orb_type(), Some(0x4154_5400));
    assert_eq!(back.code_sets(), None);
    let TaggedProfile::Iiop(bp) = &back.profiles[0] else {
        panic!()
    };
    assert!(bp.components[1].to_typed().is_err());
}

#[test]
fn unknown_iiop_major_is_kept_and_skipped() {
    let body = vec![0, 2, 0, 0xde, 0xad];
    let ior = Ior {
        type_id: String::new(),
        profiles: vec![TaggedProfile::Other {
            tag: TAG_INTERNET_IOP,
            data: body.clone(),
        }],
    };
    let bytes = ior.to_encapsulation(ByteOrder::Big).unwrap();
    let back = Ior::from_encapsulation(&bytes).unwrap();
    assert_eq!(back, ior);
    assert_eq!(back.iiop_profiles().unwrap(), vec![]);
    assert_eq!(
        IiopProfile::from_body(&body),
        Err(IorError::UnsupportedIiopVersion { major: 2, minor: 0 })
    );
}

#[test]
fn names() {
    assert_eq!(orb_type_name(0x4154_5400), Some("omniORB"));
    assert_eq!(orb_type_name(0x4154_5405), Some("omniORB"));
    assert_eq!(orb_type_name(0x5441_4f00), Some("TAO"));
    assert_eq!(orb_type_name(0x4a41_4300), Some("JacORB"));
    assert_eq!(orb_type_name(0x1234_5678), None);
    assert_eq!(code_set_name(0x0501_0001), Some("UTF-8"));
    assert_eq!(code_set_name(0x0001_0109), Some("UTF-16"));
    assert_eq!(code_set_name(0x0001_0001), Some("ISO-8859-1"));
}

// ---------------------------------------------------------------- hostile

#[test]
fn stringified_errors() {
    assert_eq!(
        Ior::from_stringified("IOP:00"),
        Err(IorError::MissingPrefix)
    );
    assert_eq!(Ior::from_stringified(""), Err(IorError::MissingPrefix));
    assert_eq!(
        Ior::from_stringified("IOR:000"),
        Err(IorError::OddHexLength { len: 3 })
    );
    assert_eq!(
        Ior::from_stringified("IOR:00zz"),
        Err(IorError::InvalidHexDigit { pos: 6 })
    );
    assert_eq!(
        Ior::from_stringified("  IOR:0é"),
        Err(IorError::InvalidHexDigit { pos: 7 })
    );
    assert!(matches!(
        Ior::from_stringified("IOR:"),
        Err(IorError::Cdr(CdrError::BadEncapsulation))
    ));
    assert!(matches!(
        Ior::from_stringified("IOR:02"),
        Err(IorError::Cdr(CdrError::BadEncapsulation))
    ));
    // Whitespace around (a file's final newline) is fine.
    assert!(Ior::from_stringified(" IOR:00000000000000010000000000000000\n").is_ok());
}

#[test]
fn every_truncation_is_an_error() {
    for order in ORDERS {
        let bytes = sample().to_encapsulation(order).unwrap();
        for n in 0..bytes.len() {
            assert!(
                Ior::from_encapsulation(&bytes[..n]).is_err(),
                "prefix of {n} bytes decoded"
            );
        }
    }
}

#[test]
fn absurd_counts_fail_before_allocating() {
    // 0xffffffff profiles in 12 bytes.
    let bytes = hex("00 000000 00000001 00 000000 ffffffff");
    assert!(matches!(
        Ior::from_encapsulation(&bytes),
        Err(IorError::Cdr(CdrError::LengthExceedsInput { .. }))
    ));
    // A type id claiming 4 GiB.
    let bytes = hex("00 000000 fffffff0 41");
    assert!(matches!(
        Ior::from_encapsulation(&bytes),
        Err(IorError::Cdr(CdrError::LengthExceedsInput { .. }))
    ));
    // A component count of 0x7fffffff in an IIOP 1.2 body.
    let body = hex("00 01 02 00 00000002 6800 0001 00000000 7fffffff");
    assert!(IiopProfile::from_body(&body).is_err());
    // A profile length larger than the input.
    let bytes = hex("00 000000 00000001 00 000000 00000001 00000000 00001000 00");
    assert!(Ior::from_encapsulation(&bytes).is_err());
}

#[test]
fn nested_encapsulation_errors() {
    // IIOP profile whose body has byte-order octet 7.
    let bytes = hex("00 000000 00000001 00 000000 00000001 00000000 00000004 07000000");
    assert_eq!(
        Ior::from_encapsulation(&bytes),
        Err(IorError::Cdr(CdrError::BadEncapsulation))
    );
    // Empty IIOP profile body.
    let bytes = hex("00 000000 00000001 00 000000 00000001 00000000 00000000");
    assert_eq!(
        Ior::from_encapsulation(&bytes),
        Err(IorError::Cdr(CdrError::BadEncapsulation))
    );
    // Multiple-components profile with a truncated component.
    let bytes = hex("00 000000 00000001 00 000000 00000001 00000001 00000008 00000000 00000001");
    assert!(Ior::from_encapsulation(&bytes).is_err());
    // IIOP host string without its NUL.
    let body = hex("00 01 00 00 00000002 6868 0001 00000000");
    assert_eq!(
        IiopProfile::from_body(&body),
        Err(IorError::Cdr(CdrError::BadStringTerminator))
    );
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Ior::from_encapsulation(&bytes);
        let _ = IiopProfile::from_body(&bytes);
        for tag in [0u32, 1, 3] {
            let _ = TaggedComponent::decode_data(tag, &bytes);
        }
    }

    #[test]
    fn random_strings_never_panic(s in "\\PC{0,60}") {
        let _ = ObjectUrl::parse(&s);
        let _ = ObjectUrl::parse(&format!("corbaloc:{s}"));
        let _ = ObjectUrl::parse(&format!("corbaname:{s}"));
        let _ = ObjectUrl::parse(&format!("IOR:{s}"));
    }

    #[test]
    fn url_ish_strings_never_panic(s in "[:/@.,#%\\[\\]a-f0-9rirop]{0,40}") {
        let _ = ObjectUrl::parse(&format!("corbaloc:{s}"));
        let _ = ObjectUrl::parse(&format!("corbaname:{s}"));
    }

    #[test]
    fn mutated_iors_never_panic(i in 0usize..400, v in any::<u8>(), little in any::<bool>()) {
        let mut bytes = sample().to_encapsulation(ByteOrder::from_flag(little)).unwrap();
        let i = i % bytes.len();
        bytes[i] = v;
        if let Ok(ior) = Ior::from_encapsulation(&bytes) {
            let _ = ior.endpoints();
            let _ = ior.code_sets();
        }
    }
}

// ------------------------------------------------------------- round trips

fn arb_string() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9:./_-]{0,12}"
}

fn arb_codeset_component() -> impl Strategy<Value = CodeSetComponent> {
    (any::<u32>(), proptest::collection::vec(any::<u32>(), 0..4)).prop_map(|(n, c)| {
        CodeSetComponent {
            native_code_set: CodeSetId(n),
            conversion_code_sets: c.into_iter().map(CodeSetId).collect(),
        }
    })
}

fn arb_component() -> impl Strategy<Value = TaggedComponent> {
    prop_oneof![
        any::<u32>().prop_map(TaggedComponent::OrbType),
        (arb_codeset_component(), arb_codeset_component()).prop_map(|(c, w)| {
            TaggedComponent::CodeSets(CodeSetComponentInfo {
                for_char_data: c,
                for_wchar_data: w,
            })
        }),
        (arb_string(), any::<u16>())
            .prop_map(|(host, port)| TaggedComponent::AlternateIiopAddress { host, port }),
        (
            any::<u32>().prop_filter("typed tag", |t| ![0, 1, 3].contains(t)),
            proptest::collection::vec(any::<u8>(), 0..20)
        )
            .prop_map(|(tag, data)| TaggedComponent::Other { tag, data }),
    ]
}

fn arb_profile() -> impl Strategy<Value = TaggedProfile> {
    prop_oneof![
        (
            0u8..4,
            arb_string(),
            any::<u16>(),
            proptest::collection::vec(any::<u8>(), 0..24),
            proptest::collection::vec(arb_component(), 0..5),
        )
            .prop_map(|(minor, host, port, object_key, components)| {
                let version = IiopVersion::new(1, minor);
                let components = if version.has_components() {
                    components
                } else {
                    vec![]
                };
                TaggedProfile::Iiop(IiopProfile {
                    version,
                    host,
                    port,
                    object_key,
                    components,
                })
            }),
        proptest::collection::vec(arb_component(), 0..4)
            .prop_map(TaggedProfile::MultipleComponents),
        (2u32.., proptest::collection::vec(any::<u8>(), 0..24))
            .prop_map(|(tag, data)| TaggedProfile::Other { tag, data }),
    ]
}

fn arb_ior() -> impl Strategy<Value = Ior> {
    (arb_string(), proptest::collection::vec(arb_profile(), 0..4))
        .prop_map(|(type_id, profiles)| Ior { type_id, profiles })
}

proptest! {
    #[test]
    fn ior_round_trips_in_both_orders(ior in arb_ior(), little in any::<bool>()) {
        let order = ByteOrder::from_flag(little);
        let bytes = ior.to_encapsulation(order).unwrap();
        let back = Ior::from_encapsulation(&bytes).unwrap();
        prop_assert_eq!(&back, &ior);
        prop_assert_eq!(back.to_encapsulation(order).unwrap(), bytes);
        let s = ior.to_stringified(order).unwrap();
        prop_assert_eq!(Ior::from_stringified(&s).unwrap(), ior);
    }

    /// Re-encoding in the other byte order changes typed parts only:
    /// decoding that gives the same value again.
    #[test]
    fn ior_survives_byte_order_change(ior in arb_ior()) {
        let big = ior.to_encapsulation(ByteOrder::Big).unwrap();
        let a = Ior::from_encapsulation(&big).unwrap();
        let little = a.to_encapsulation(ByteOrder::Little).unwrap();
        prop_assert_eq!(Ior::from_encapsulation(&little).unwrap(), ior);
    }

    #[test]
    fn unknown_profiles_are_byte_exact(
        tag in 2u32..,
        data in proptest::collection::vec(any::<u8>(), 0..64),
        little in any::<bool>(),
    ) {
        let order = ByteOrder::from_flag(little);
        let mut w = Writer::new(order);
        w.write_u8(order.is_little() as u8);
        w.write_string("IDL:x:1.0").unwrap();
        w.write_u32(1);
        w.write_u32(tag);
        w.write_octet_seq(&data).unwrap();
        let bytes = w.into_vec();
        let ior = Ior::from_encapsulation(&bytes).unwrap();
        prop_assert_eq!(ior.to_encapsulation(order).unwrap(), bytes);
    }

    #[test]
    fn corbaloc_display_parses_back(
        addrs in proptest::collection::vec(
            (proptest::option::of((0u8..3, 0u8..10)), "[a-z][a-z0-9.-]{0,10}|[0-9a-f:]{0,6}::[0-9a-f]{0,4}", any::<u16>()),
            1..4),
        key in proptest::collection::vec(any::<u8>(), 0..20),
    ) {
        let loc = Corbaloc {
            addrs: addrs.into_iter().map(|(v, host, port)| ObjAddr::Iiop(IiopAddr {
                explicit_version: v.map(|(a, b)| IiopVersion::new(a, b)),
                host,
                port,
            })).collect(),
            key,
        };
        let text = loc.to_string();
        prop_assert_eq!(Corbaloc::parse(&text).unwrap(), loc.clone());
        prop_assert_eq!(ObjectUrl::parse(&text).unwrap(), ObjectUrl::Corbaloc(loc));
    }

    #[test]
    fn key_escaping_round_trips(key in proptest::collection::vec(any::<u8>(), 0..40)) {
        let text = format!("corbaloc::h/{}", escape_key(&key));
        prop_assert_eq!(Corbaloc::parse(&text).unwrap().key, key);
    }
}

// ---------------------------------------------------------------- corbaloc

fn iiop(v: Option<(u8, u8)>, host: &str, port: u16) -> ObjAddr {
    ObjAddr::Iiop(IiopAddr {
        explicit_version: v.map(|(a, b)| IiopVersion::new(a, b)),
        host: host.into(),
        port,
    })
}

#[test]
fn corbaloc_spec_examples() {
    // The examples of CORBA 3 Part 2 7.6.10 / the INS specification.
    let c = Corbaloc::parse("corbaloc::555xyz.com/Prod/TradingService").unwrap();
    assert_eq!(
        c.addrs,
        vec![iiop(None, "555xyz.com", DEFAULT_CORBALOC_PORT)]
    );
    assert_eq!(c.key, b"Prod/TradingService");

    let c = Corbaloc::parse("corbaloc:iiop:1.1@555xyz.com/Prod/TradingService").unwrap();
    assert_eq!(c.addrs, vec![iiop(Some((1, 1)), "555xyz.com", 2809)]);

    let c = Corbaloc::parse("corbaloc:iiop:1.2@xyz_host.net/NameService").unwrap();
    assert_eq!(c.addrs, vec![iiop(Some((1, 2)), "xyz_host.net", 2809)]);
    assert_eq!(c.key, b"NameService");

    let c = Corbaloc::parse("corbaloc:rir:/NameService").unwrap();
    assert!(c.is_rir());
    assert_eq!(c.key, b"NameService");
    assert_eq!(c.to_ior(), None);

    let c =
        Corbaloc::parse("corbaloc::primary.com:110,:1.2@backup.com:120/Dev/NameService").unwrap();
    assert_eq!(
        c.addrs,
        vec![
            iiop(None, "primary.com", 110),
            iiop(Some((1, 2)), "backup.com", 120)
        ]
    );
    assert_eq!(c.key, b"Dev/NameService");
    let ior = c.to_ior().unwrap();
    let ps = ior.iiop_profiles().unwrap();
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[0].version, IiopVersion::V1_0);
    assert_eq!(ps[1].version, IiopVersion::V1_2);
    assert_eq!(ps[1].object_key, b"Dev/NameService");

    let c = Corbaloc::parse("corbaloc:iiop:1.1@[::1]:2809/key").unwrap();
    assert_eq!(c.addrs, vec![iiop(Some((1, 1)), "::1", 2809)]);

    let c = Corbaloc::parse("corbaloc:iiop:[fe80::1%25eth0]:1/key").unwrap_err();
    assert_eq!(c.kind, CorbalocErrorKind::BadIpv6Literal);

    let c = Corbaloc::parse("corbaloc::[2001:db8::7]/a%20b%ff").unwrap();
    assert_eq!(c.addrs, vec![iiop(None, "2001:db8::7", 2809)]);
    assert_eq!(c.key, b"a b\xff");

    // An empty address is the local host (INS, omniORB).
    let c = Corbaloc::parse("corbaloc::/k").unwrap();
    assert_eq!(c.addrs, vec![iiop(None, "localhost", 2809)]);
    // Empty key is allowed; schemes are case-insensitive.
    let c = Corbaloc::parse("CORBALOC:IIOP:h:1/").unwrap();
    assert_eq!(c.key, b"");
    assert_eq!(c.addrs, vec![iiop(None, "h", 1)]);
}

#[test]
fn corbaloc_display() {
    let c = Corbaloc::parse("corbaloc::h,:1.2@[::1]:5/a b".replace(' ', "%20").as_str()).unwrap();
    assert_eq!(c.to_string(), "corbaloc:iiop:h:2809,iiop:1.2@[::1]:5/a%20b");
    assert_eq!(
        escape_key(b"Prod/Trading Service#1"),
        "Prod/Trading%20Service%231"
    );
}

#[test]
fn corbaloc_errors_have_positions() {
    let cases: &[(&str, CorbalocErrorKind, usize)] = &[
        ("corbaloc:", CorbalocErrorKind::UnknownProtocol, 9),
        ("corbaloc:http://x/y", CorbalocErrorKind::UnknownProtocol, 9),
        ("corbaloc::host", CorbalocErrorKind::MissingKey, 14),
        ("corbaloc::host:99999/k", CorbalocErrorKind::BadPort, 15),
        ("corbaloc::host:12x/k", CorbalocErrorKind::BadPort, 15),
        ("corbaloc::1.x@host/k", CorbalocErrorKind::BadVersion, 10),
        ("corbaloc::1.256@host/k", CorbalocErrorKind::BadVersion, 10),
        ("corbaloc::[::1/k", CorbalocErrorKind::BadIpv6Literal, 10),
        ("corbaloc::[]:1/k", CorbalocErrorKind::BadIpv6Literal, 10),
        ("corbaloc::1.2@:5/k", CorbalocErrorKind::EmptyHost, 14),
        ("corbaloc:rir:,:h/k", CorbalocErrorKind::RirNotAlone, 14),
        ("corbaloc::h,rir:/k", CorbalocErrorKind::RirNotAlone, 12),
        ("corbaloc::h/a%2", CorbalocErrorKind::BadEscape, 13),
        ("corbaloc::h/a%g0", CorbalocErrorKind::BadEscape, 13),
        ("corbaloc::h/a b", CorbalocErrorKind::IllegalChar, 13),
        ("corbaloc::h/k#frag", CorbalocErrorKind::TrailingGarbage, 13),
        ("corbaloc::h^/k", CorbalocErrorKind::IllegalChar, 11),
        ("corbaname::h#a#b", CorbalocErrorKind::IllegalChar, 14),
        ("corbaname::h#%ff", CorbalocErrorKind::NameNotUtf8, 13),
        ("corbaname::h?", CorbalocErrorKind::IllegalChar, 12),
    ];
    for &(s, kind, pos) in cases {
        match ObjectUrl::parse(s) {
            Err(ObjectUrlError::Url(e)) => {
                assert_eq!((e.kind, e.pos), (kind, pos), "{s}: {e}");
                assert!(!e.to_string().is_empty());
            }
            other => panic!("{s}: {other:?}"),
        }
    }
    match ObjectUrl::parse("  file:///tmp/x.ior") {
        Err(ObjectUrlError::Url(e)) => {
            assert_eq!((e.kind, e.pos), (CorbalocErrorKind::UnknownScheme, 2))
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        ObjectUrl::parse("IOR:0"),
        Err(ObjectUrlError::Ior(IorError::OddHexLength { len: 1 }))
    ));
}

#[test]
fn corbaname_cases() {
    let n = Corbaname::parse("corbaname::555objs.com#a/string/path/to/obj").unwrap();
    assert_eq!(n.loc.addrs, vec![iiop(None, "555objs.com", 2809)]);
    assert_eq!(n.loc.key, b"NameService");
    assert_eq!(n.name.as_deref(), Some("a/string/path/to/obj"));

    let n = Corbaname::parse("corbaname:rir:#a.kind/b%20c").unwrap();
    assert!(n.loc.is_rir());
    assert_eq!(n.name.as_deref(), Some("a.kind/b c"));

    let n = Corbaname::parse("corbaname::h:9/Other").unwrap();
    assert_eq!(n.loc.key, b"Other");
    assert_eq!(n.name, None);

    let n = Corbaname::parse("corbaname:iiop:1.2@h,:g:3/NC#x/y").unwrap();
    assert_eq!(n.loc.addrs.len(), 2);
    let back = Corbaname::parse(&n.to_string()).unwrap();
    assert_eq!(back, n);

    match ObjectUrl::parse("corbaname:rir:").unwrap() {
        ObjectUrl::Corbaname(n) => {
            assert_eq!(n.loc.key, b"NameService");
            assert_eq!(n.to_string(), "corbaname:rir:/NameService");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn object_url_dispatch() {
    let s = sample().to_stringified(ByteOrder::Little).unwrap();
    assert_eq!(ObjectUrl::parse(&s).unwrap(), ObjectUrl::Ior(sample()));
    assert!(matches!(
        ObjectUrl::parse("corbaloc:rir:/X").unwrap(),
        ObjectUrl::Corbaloc(_)
    ));
    assert!(matches!(
        ObjectUrl::parse("ior:01000000010000000000000000000000").unwrap(),
        ObjectUrl::Ior(i) if i.is_nil()
    ));
}

#[test]
fn alternate_addresses_are_tag_3() {
    let c = TaggedComponent::AlternateIiopAddress {
        host: "a".into(),
        port: 1,
    };
    assert_eq!(c.tag(), TAG_ALTERNATE_IIOP_ADDRESS);
    assert_eq!(
        c.data(ByteOrder::Big).unwrap(),
        vec![0, 0, 0, 0, 0, 0, 0, 2, b'a', 0, 0, 1]
    );
}

/// A JacORB 3.9 IOR as JacORB stringifies it (little-endian throughout:
/// IIOP 1.2 profile with ORB_TYPE "JAC\0" and CODE_SETS).
const JACORB_IOR: &str = "IOR:010000001500000049444c3a496e7465726f702f4563686f3a312e3000000000010000000000000078000000010102000a0000003132372e302e302e310001a41f000000363130373833343935332f00023c0e2a474b0f3d100630463814141b484c1b00020000000000000008000000010000000043414a0100000024000000010000000100010502000000010001000f00010009010100020000000100010500010100";

#[test]
fn same_reference_in_another_stream_order_is_equivalent() {
    // JacORB returns its reference inside a big-endian reply with the
    // profile octets unchanged (a little-endian encapsulation).
    let from_string = Ior::from_stringified(JACORB_IOR).unwrap();
    assert!(matches!(from_string.profiles[0], TaggedProfile::Iiop(_)));
    let le_body = from_string.profiles[0].data(ByteOrder::Little).unwrap();
    let mut w = Writer::new(ByteOrder::Big);
    w.write_string(&from_string.type_id).unwrap();
    w.write_u32(1);
    w.write_u32(TAG_INTERNET_IOP);
    w.write_octet_seq(&le_body).unwrap();
    let bytes = w.into_vec();
    let from_reply = Ior::decode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap();
    // Kept raw, so that re-encoding reproduces the octets ...
    assert!(matches!(
        from_reply.profiles[0],
        TaggedProfile::Other {
            tag: TAG_INTERNET_IOP,
            ..
        }
    ));
    let mut again = Writer::new(ByteOrder::Big);
    from_reply.encode(&mut again).unwrap();
    assert_eq!(again.into_vec(), bytes);
    // ... hence unequal as stored, but the same object.
    assert_ne!(from_reply.profiles, from_string.profiles);
    assert_eq!(
        from_reply.canonical_profiles(),
        from_string.canonical_profiles()
    );
    assert!(from_reply.is_equivalent(&from_string));
    assert_eq!(from_reply.iiop_profiles(), from_string.iiop_profiles());
    // Another object key is another object.
    let mut other = from_string.clone();
    if let TaggedProfile::Iiop(p) = &mut other.profiles[0] {
        p.object_key.push(0);
    }
    assert!(!from_reply.is_equivalent(&other));
}

#[test]
fn canonical_profiles_keep_what_does_not_decode() {
    let ior = Ior {
        type_id: String::new(),
        profiles: vec![
            TaggedProfile::Other {
                tag: TAG_INTERNET_IOP,
                data: vec![7],
            },
            TaggedProfile::Other {
                tag: TAG_MULTIPLE_COMPONENTS,
                data: vec![9, 9],
            },
            TaggedProfile::Other {
                tag: 0x4f4f_4300,
                data: vec![1, 2, 3],
            },
        ],
    };
    assert_eq!(ior.canonical_profiles(), ior.profiles);
    assert!(ior.is_equivalent(&ior.clone()));
}
