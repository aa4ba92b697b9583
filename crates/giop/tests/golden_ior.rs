//! Golden IORs produced by omniORB 4.2.5 (fixtures/omniorb, see its
//! README.md): every IOR fixture must decode to what MANIFEST.json says, and
//! decode -> encode -> stringify must give back the omniORB string exactly.
//! The CDR encapsulation fixtures (profile body, components) and the IORs
//! inside LOCATION_FORWARD replies are checked the same way.

mod common;

use common::{fixtures_dir, hex, manifest, unhex, Json};

use peregrine_cdr::{ByteOrder, Decode, Reader};
use peregrine_giop::component::{code_set_name, TAG_ALTERNATE_IIOP_ADDRESS, TAG_CODE_SETS};
use peregrine_giop::ior::profile_tag_name;
use peregrine_giop::{
    CodeSetComponent, IiopProfile, Ior, ObjectUrl, TaggedComponent, TaggedProfile,
};

// ------------------------------------------------------------- helpers

fn manifest_and_dir() -> (std::path::PathBuf, Json) {
    (fixtures_dir(), manifest())
}

fn entries<'a>(m: &'a Json, kind: &str) -> Vec<&'a Json> {
    m.at("fixtures")
        .arr()
        .iter()
        .filter(|f| f.at("kind").str() == kind)
        .collect()
}

fn order(little: bool) -> ByteOrder {
    ByteOrder::from_flag(little)
}

fn check_codeset_half(got: &CodeSetComponent, want: &Json, what: &str) {
    assert_eq!(
        u64::from(got.native_code_set.0),
        want.at("native").u64(),
        "{what}"
    );
    assert_eq!(
        code_set_name(got.native_code_set.0),
        Some(want.at("native_name").str()),
        "{what}"
    );
    let conv: Vec<u64> = want.at("conversion").arr().iter().map(Json::u64).collect();
    let got_conv: Vec<u64> = got
        .conversion_code_sets
        .iter()
        .map(|c| u64::from(c.0))
        .collect();
    assert_eq!(got_conv, conv, "{what}");
}

/// Checks a typed component against a manifest component entry.
fn check_component(c: &TaggedComponent, want: &Json, enc_order: ByteOrder, what: &str) {
    assert_eq!(u64::from(c.tag()), want.at("tag").u64(), "{what}");
    assert_eq!(
        hex(&c.data(enc_order).unwrap()),
        want.at("data_hex").str(),
        "{what}: component bytes"
    );
    match c {
        TaggedComponent::OrbType(t) => {
            assert_eq!(u64::from(*t), want.at("orb_type").u64(), "{what}");
            assert_eq!(
                format!("{t:#010x}"),
                want.at("orb_type_hex").str(),
                "{what}"
            );
        }
        TaggedComponent::CodeSets(info) => {
            check_codeset_half(&info.for_char_data, want.at("char"), what);
            check_codeset_half(&info.for_wchar_data, want.at("wchar"), what);
        }
        TaggedComponent::AlternateIiopAddress { host, port } => {
            assert_eq!(host, want.at("host").str(), "{what}");
            assert_eq!(u64::from(*port), want.at("port").u64(), "{what}");
        }
        TaggedComponent::Other { tag, .. } => {
            // omniORB writes canonical components: a known tag must have
            // decoded to its typed form.
            assert!(
                ![0, TAG_CODE_SETS, TAG_ALTERNATE_IIOP_ADDRESS].contains(tag),
                "{what}: known component {tag} left raw"
            );
        }
    }
}

fn check_iiop(p: &IiopProfile, want: &Json, enc_order: ByteOrder, what: &str) {
    assert_eq!(
        p.version.to_string(),
        want.at("iiop_version").str(),
        "{what}"
    );
    assert_eq!(p.host, want.at("host").str(), "{what}");
    assert_eq!(u64::from(p.port), want.at("port").u64(), "{what}");
    assert_eq!(
        hex(&p.object_key),
        want.at("object_key_hex").str(),
        "{what}"
    );
    let comps = want.at("components").arr();
    assert_eq!(p.components.len(), comps.len(), "{what}: component count");
    for (i, (c, w)) in p.components.iter().zip(comps).enumerate() {
        check_component(c, w, enc_order, &format!("{what} component {i}"));
    }
    // Endpoints: the primary address then every alternate address.
    let mut eps = vec![(want.at("host").str().to_owned(), want.at("port").u64())];
    for c in comps {
        if c.at("tag").u64() == u64::from(TAG_ALTERNATE_IIOP_ADDRESS) {
            eps.push((c.at("host").str().to_owned(), c.at("port").u64()));
        }
    }
    let got: Vec<(String, u64)> = p
        .endpoints()
        .into_iter()
        .map(|e| (e.host, u64::from(e.port)))
        .collect();
    assert_eq!(got, eps, "{what}: endpoints");
}

/// Checks a decoded IOR against a manifest IOR description (kind = ior, or
/// a reply's `forward_ior`); `outer` is the byte order it was encoded in.
fn check_ior(ior: &Ior, want: &Json, outer: ByteOrder, what: &str) {
    assert_eq!(ior.type_id, want.at("type_id").str(), "{what}");
    let profiles = want.at("profiles").arr();
    assert_eq!(ior.profiles.len(), profiles.len(), "{what}: profile count");
    for (i, (p, w)) in ior.profiles.iter().zip(profiles).enumerate() {
        let what = format!("{what} profile {i}");
        assert_eq!(u64::from(p.tag()), w.at("tag").u64(), "{what}");
        assert_eq!(
            profile_tag_name(p.tag()),
            Some(w.at("tag_name").str()),
            "{what}"
        );
        let data = p.data(outer).unwrap();
        assert_eq!(data.len() as u64, w.at("data_len").u64(), "{what}");
        if let Some(le) = w.get("encapsulation_little_endian") {
            assert_eq!(data[0] == 1, le.bool(), "{what}: profile byte order");
        }
        match p {
            TaggedProfile::Iiop(iiop) => check_iiop(iiop, w, outer, &what),
            other => panic!("{what}: omniORB IIOP profile not typed: {other:?}"),
        }
    }
}

// --------------------------------------------------------------- tests

#[test]
fn golden_iors_decode_as_manifest_says_and_restringify_exactly() {
    let (dir, m) = manifest_and_dir();
    let iors = entries(&m, "ior");
    assert!(!iors.is_empty(), "MANIFEST.json lists no IOR fixtures");
    for f in iors {
        let file = f.at("file").str();
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let text = text.trim();
        let ior = Ior::from_stringified(text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let little = f.at("encapsulation_little_endian").bool();
        let bytes = unhex(&text[4..]);
        assert_eq!(bytes[0] == 1, little, "{file}: byte order");
        assert_eq!(bytes.len() as u64, f.at("ior_bytes_len").u64(), "{file}");
        check_ior(&ior, f, order(little), file);

        // Byte-exact re-encoding and stringification. omniORB writes
        // lowercase hex, so the comparison is exact, not case-folded.
        assert_eq!(
            ior.to_encapsulation(order(little)).unwrap(),
            bytes,
            "{file}"
        );
        assert_eq!(ior.to_stringified(order(little)).unwrap(), text, "{file}");

        // The other byte order decodes to the same value.
        let other = ior.to_stringified(order(!little)).unwrap();
        assert_eq!(Ior::from_stringified(&other).unwrap(), ior, "{file}");

        // And through the one URL entry point.
        assert_eq!(ObjectUrl::parse(text).unwrap(), ObjectUrl::Ior(ior.clone()));
        assert!(
            ior.code_sets().is_some(),
            "{file}: omniORB publishes code sets"
        );
        assert_eq!(ior.orb_type(), Some(0x4154_5400), "{file}");
    }
}

#[test]
fn golden_cdr_encapsulations() {
    let (dir, m) = manifest_and_dir();
    let mut seen = 0;
    for f in entries(&m, "cdr_encapsulation") {
        let file = f.at("file").str();
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let little = f.at("little_endian").bool();
        assert_eq!(bytes[0] == 1, little, "{file}");
        assert_eq!(bytes.len() as u64, f.at("size").u64(), "{file}");
        let want = f.at("decoded");
        if want.get("iiop_version").is_some() {
            let p = IiopProfile::from_body(&bytes).unwrap();
            check_iiop(&p, want, order(little), file);
            assert_eq!(p.to_body(order(little)).unwrap(), bytes, "{file}");
        } else if want.get("char").is_some() {
            let c = TaggedComponent::decode_data(TAG_CODE_SETS, &bytes)
                .unwrap()
                .unwrap();
            let TaggedComponent::CodeSets(info) = &c else {
                panic!("{file}")
            };
            check_codeset_half(&info.for_char_data, want.at("char"), file);
            check_codeset_half(&info.for_wchar_data, want.at("wchar"), file);
            assert_eq!(c.data(order(little)).unwrap(), bytes, "{file}");
        } else if want.get("host").is_some() {
            let c = TaggedComponent::decode_data(TAG_ALTERNATE_IIOP_ADDRESS, &bytes)
                .unwrap()
                .unwrap();
            assert_eq!(
                c,
                TaggedComponent::AlternateIiopAddress {
                    host: want.at("host").str().into(),
                    port: want.at("port").u64() as u16,
                },
                "{file}"
            );
            assert_eq!(c.data(order(little)).unwrap(), bytes, "{file}");
        } else {
            // The CodeSets service context belongs to the GIOP message tests.
            continue;
        }
        seen += 1;
    }
    assert!(
        seen >= 3,
        "expected profile body, code sets and address fixtures"
    );
}

#[test]
fn golden_location_forward_iors() {
    let (dir, m) = manifest_and_dir();
    let mut seen = 0;
    for f in entries(&m, "giop") {
        let Some(want) = f.get("forward_ior") else {
            continue;
        };
        let file = f.at("file").str();
        let bytes = std::fs::read(dir.join(file)).unwrap();
        // Body alignment is relative to the start of the GIOP header.
        let msg_order = order(f.at("little_endian").bool());
        let mut r = Reader::new(&bytes, msg_order);
        r.read_bytes(f.at("body_offset").u64() as usize).unwrap();
        let ior = Ior::decode(&mut r).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(r.is_empty(), "{file}: bytes after the forward IOR");
        assert_eq!(ior.type_id, want.at("type_id").str(), "{file}");
        if let Some(same) = f.get("forward_ior_same_as") {
            let text = std::fs::read_to_string(dir.join(same.str())).unwrap();
            assert_eq!(ior, Ior::from_stringified(text.trim()).unwrap(), "{file}");
        }
        check_ior(&ior, want, msg_order, file);
        seen += 1;
    }
    assert!(seen > 0, "no LOCATION_FORWARD reply in the manifest");
}
