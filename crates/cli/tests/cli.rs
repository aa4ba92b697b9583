//! Runs the built `peregrine` binary on omniORB's golden IORs and compares
//! its decode with omniORB's own `catior` output stored beside each fixture.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_peregrine"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run peregrine")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn ior_fixtures() -> Vec<(PathBuf, String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/omniorb/ior");
    assert!(
        dir.is_dir(),
        "omniORB golden fixtures missing: expected {} (fixtures/omniorb/regen.sh)",
        dir.display()
    );
    let mut v = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "ior") {
            let ior = std::fs::read_to_string(&path).unwrap().trim().to_owned();
            let catior = std::fs::read_to_string(path.with_extension("catior.txt")).unwrap();
            v.push((path, ior, catior));
        }
    }
    v.sort();
    assert!(!v.is_empty(), "no .ior fixtures in {}", dir.display());
    v
}

#[test]
fn decodes_like_catior() {
    for (path, ior, catior) in ior_fixtures() {
        let o = run(&["ior", &ior]);
        assert!(o.status.success(), "{}: {}", path.display(), stderr(&o));
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        for want in catior.lines() {
            if want.starts_with("Type ID:") || want == "Profiles:" {
                assert!(
                    lines.contains(&want),
                    "{}: missing {want:?}\n{out}",
                    path.display()
                );
            } else if let Some(rest) = want.strip_prefix("1. IIOP ") {
                // catior: "1. IIOP 1.2 host port <key kind> 0x<hex>  (N bytes)"
                let f: Vec<&str> = rest.split_whitespace().collect();
                let head = format!("1. IIOP {} {} {}", f[0], f[1], f[2]);
                assert!(
                    lines.contains(&head.as_str()),
                    "{}: {head:?}\n{out}",
                    path.display()
                );
                let hex = f.iter().find(|t| t.starts_with("0x")).unwrap();
                let key_line = format!("      object key hex: {hex}");
                assert!(
                    lines.contains(&key_line.as_str()),
                    "{}: {key_line}\n{out}",
                    path.display()
                );
            } else if want.starts_with("      ") || want.starts_with("                    ") {
                // Component lines use catior's exact wording.
                assert!(
                    lines.contains(&want),
                    "{}: missing {want:?}\n{out}",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn json_output() {
    let (_, ior, _) = ior_fixtures().remove(0);
    let o = run(&["ior", "--json", &ior]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "\"kind\": \"ior\"",
        "\"type_id\": \"IDL:Golden/Echo:1.0\"",
        "\"iiop_version\": \"1.2\"",
        "\"host\": \"",
        "\"object_key_hex\": \"",
        "\"vendor\": \"omniORB\"",
        "\"orb_type_hex\": \"0x41545400\"",
        "\"native_name\": \"ISO-8859-1\"",
        "\"conversion_names\": [",
    ] {
        assert!(out.contains(want), "missing {want}\n{out}");
    }
    assert!(out.trim_start().starts_with('{') && out.trim_end().ends_with('}'));
}

#[test]
fn json_parses_with_the_documented_fields() {
    let (_, ior, _) = ior_fixtures().remove(0);
    let o = run(&["ior", "--json", &ior]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["kind"], "ior");
    assert_eq!(v["nil"], false);
    assert_eq!(v["type_id"], "IDL:Golden/Echo:1.0");
    let p = &v["profiles"][0];
    assert_eq!(p["tag"], 0);
    assert_eq!(p["tag_name"], "TAG_INTERNET_IOP");
    assert_eq!(p["canonical"], true);
    assert_eq!(p["iiop_version"], "1.2");
    assert!(
        p["port"].as_u64().is_some_and(|n| n > 0 && n < 65536),
        "{p}"
    );
    let key_hex = p["object_key_hex"].as_str().unwrap();
    assert!(!key_hex.is_empty() && key_hex.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(p["endpoints"][0]["host"], p["host"]);
    let comps = p["components"].as_array().unwrap();
    let orb = comps
        .iter()
        .find(|c| c["vendor"] == "omniORB")
        .expect("ORB type");
    assert_eq!(orb["orb_type"], 0x4154_5400);
    assert_eq!(orb["orb_type_hex"], "0x41545400");
    let cs = comps
        .iter()
        .find(|c| c.get("char").is_some())
        .expect("code sets");
    assert_eq!(cs["char"]["native_name"], "ISO-8859-1");
    assert!(cs["wchar"]["conversion_names"].is_array());

    let o = run(&["ior", "--json", "corbaloc::1.2@h:2809,:g/Key%01"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["kind"], "corbaloc");
    assert_eq!(
        v["addresses"],
        serde_json::json!([
            {"protocol": "iiop", "version": "1.2", "version_explicit": true, "host": "h", "port": 2809},
            {"protocol": "iiop", "version": "1.0", "version_explicit": false, "host": "g", "port": 2809}
        ])
    );
    assert_eq!(v["object_key_hex"], "4b657901");
    assert_eq!(v["object_key_escaped"], "Key%01");
    assert!(v.get("name").is_none());

    let o = run(&["ior", "--json", "corbaname::h#a/b%20c"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["kind"], "corbaname");
    assert_eq!(v["name"], "a/b c");
    assert_eq!(v["addresses"][0]["port"], 2809);
    let o = run(&["ior", "--json", "corbaloc:rir:/NameService"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["addresses"], serde_json::json!([{"protocol": "rir"}]));
}

#[test]
fn reads_stdin() {
    let (_, ior, _) = ior_fixtures().remove(0);
    let mut child = bin()
        .args(["ior", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{ior}\n").as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    assert!(stdout(&o).contains("Type ID: \"IDL:Golden/Echo:1.0\""));
}

#[test]
fn corbaloc_and_corbaname() {
    let o = run(&[
        "ior",
        "corbaloc::primary.com:110,:1.2@[::1]:120/Dev/NameService",
    ]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(
        out.contains("1. IIOP 1.0 primary.com 110 (default version)"),
        "{out}"
    );
    assert!(out.contains("2. IIOP 1.2 ::1 120"), "{out}");
    assert!(out.contains("Object key: \"Dev/NameService\""), "{out}");

    let o = run(&["ior", "--json", "corbaname:rir:#a/b%20c"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("\"protocol\": \"rir\""), "{out}");
    assert!(out.contains("\"name\": \"a/b c\""), "{out}");
}

#[test]
fn garbage_exits_2_with_a_message() {
    let o = run(&["ior", "IOR:0123zz"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("invalid IOR: stringified IOR has a non-hex character at byte 8"));
    assert!(o.stdout.is_empty());

    let o = run(&["ior", "IOR:01000000ffffffff"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid IOR: malformed IOR"),
        "{}",
        stderr(&o)
    );

    let o = run(&["ior", "corbaloc::host:99999/k"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("port is not a number from 0 to 65535 at byte 15"),
        "{err}"
    );
    assert!(
        err.contains("\n                 ^"),
        "caret under the port:\n{err}"
    );

    let o = run(&["ior", "hello"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown URL scheme"));

    let o = run(&["ior"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing the reference"));

    let o = run(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn help() {
    for args in [&["ior", "--help"][..], &["--help"][..], &["ior", "-h"][..]] {
        let o = run(args);
        assert!(o.status.success());
        assert!(stdout(&o).contains("usage: peregrine ior [--json]"));
    }
}
