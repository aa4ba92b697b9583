//! The `idlc` binary: exit codes, rustc-style diagnostics, output files.

use std::process::Command;

fn idlc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_idlc"))
        .args(args)
        .output()
        .expect("run idlc");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("idlc-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn generates_files() {
    let d = tmp("ok");
    let idl = d.join("e.idl");
    std::fs::write(
        &idl,
        "module Echo { interface E { string echo(in string s); }; };\n",
    )
    .unwrap();
    let out = d.join("out");
    let (code, stdout, stderr) = idlc(&["--out", out.to_str().unwrap(), idl.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("echo.rs"), "{stdout}");
    let rs = std::fs::read_to_string(out.join("echo.rs")).unwrap();
    assert!(rs.contains("pub trait E"));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn errors_exit_1_with_location() {
    let d = tmp("bad");
    let idl = d.join("bad.idl");
    std::fs::write(&idl, "module M {\n  struct S { Undefined x; };\n};\n").unwrap();
    let (code, stdout, stderr) = idlc(&["--check", idl.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(stdout.is_empty());
    assert!(stderr.contains("error"), "{stderr}");
    assert!(stderr.contains("bad.idl:2:"), "{stderr}");
    assert!(stderr.contains("aborting due to"), "{stderr}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn unsupported_is_an_error_unless_skipped() {
    let d = tmp("native");
    let idl = d.join("a.idl");
    std::fs::write(
        &idl,
        "native Handle;\nlocal interface I {\n  void f(in Handle a);\n  void g();\n};\n",
    )
    .unwrap();
    let (code, _, stderr) = idlc(&["--check", idl.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("native type `::Handle` has no Rust mapping yet"),
        "{stderr}"
    );
    assert!(stderr.contains("a.idl:3:"), "{stderr}");
    let (code, _, stderr) = idlc(&["--check", "--skip-unsupported", idl.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("warning"), "{stderr}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn defines_and_includes() {
    let d = tmp("pp");
    std::fs::create_dir_all(d.join("inc")).unwrap();
    std::fs::write(d.join("inc/t.idl"), "typedef long T;\n").unwrap();
    let idl = d.join("m.idl");
    std::fs::write(
        &idl,
        "#include <t.idl>\n#ifndef FLAG\n#error FLAG needed\n#endif\nconst T X = VAL;\n",
    )
    .unwrap();
    let inc = format!("-I{}", d.join("inc").display());
    let (code, _, stderr) = idlc(&[
        "--check",
        &inc,
        "-D",
        "FLAG",
        "-DVAL=3",
        idl.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = idlc(&["--check", &inc, idl.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn usage_errors_exit_2() {
    let (code, _, stderr) = idlc(&[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("<FILE.idl>"), "{stderr}");
    assert_eq!(idlc(&["--bogus", "x.idl"]).0, 2);
    let (code, stdout, _) = idlc(&["--help"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Usage: idlc [OPTIONS] <FILE.idl>..."),
        "{stdout}"
    );
    // The help says what is really unsupported: `any`, TypeCode and fixed
    // are supported.
    assert!(
        stdout.contains("native types other than the POA's Servant and Cookie"),
        "{stdout}"
    );
    assert!(!stdout.contains("TypeCode"), "{stdout}");
    assert!(stdout.contains("--deny-warnings"), "{stdout}");
}

#[test]
fn version_and_flag_suggestions() {
    let (code, stdout, _) = idlc(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(stdout, format!("idlc {}\n", env!("CARGO_PKG_VERSION")));
    let (code, _, stderr) = idlc(&["--chek", "x.idl"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unexpected argument '--chek'"), "{stderr}");
    assert!(stderr.contains("--check"), "{stderr}");
}

#[test]
fn warnings_pass_unless_denied_or_silenced() {
    let d = tmp("warn");
    let idl = d.join("w.idl");
    std::fs::write(&idl, "interface W {\n  void delete();\n};\n").unwrap();
    let f = idl.to_str().unwrap();
    let (code, _, stderr) = idlc(&["--check", f]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.starts_with("warning: `delete` is a reserved word in C++\n"),
        "{stderr}"
    );
    assert!(stderr.contains("w.idl:2:8"), "{stderr}");
    assert!(stderr.contains("`_cxx_delete` in C++"), "{stderr}");

    let (code, _, stderr) = idlc(&["--check", "--deny-warnings", f]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.starts_with("error: `delete` is a reserved word"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("error: aborting due to 1 previous error\n"),
        "{stderr}"
    );

    let (code, _, stderr) = idlc(&["--check", "--no-portability-warnings", f]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "");

    // Writing files reports the warnings too, and still succeeds.
    let out = d.join("out");
    let (code, stdout, stderr) = idlc(&["-o", out.to_str().unwrap(), f]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.starts_with("warning: `delete`"), "{stderr}");
    assert!(stdout.contains("_include.rs"), "{stdout}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn marshal_option() {
    let d = tmp("marshal");
    let idl = d.join("e.idl");
    std::fs::write(&idl, "interface E { string echo(in string s); };\n").unwrap();
    let out = d.join("out");
    let (code, _, stderr) = idlc(&[
        "--marshal",
        "interpreted",
        "--out",
        out.to_str().unwrap(),
        idl.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let rs = std::fs::read_to_string(out.join("e.rs")).unwrap()
        + &std::fs::read_to_string(out.join("e_defs.rs")).unwrap();
    assert!(
        rs.contains("OP_ECHO") && rs.contains("interp::call"),
        "{rs}"
    );
    let (code, _, stderr) = idlc(&["--marshal", "fast", idl.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("unknown marshaling"), "{stderr}");
    let (code, _, stderr) = idlc(&["--interface-marshal", "E", idl.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn missing_input_file_is_one_clear_line() {
    let (code, stdout, stderr) = idlc(&["--check", "nosuch.idl"]);
    assert_eq!(code, 1);
    assert!(stdout.is_empty());
    assert_eq!(
        stderr,
        "error: cannot read nosuch.idl: No such file or directory (os error 2)\n\
         error: aborting due to 1 previous error\n"
    );
}

#[test]
fn misspelled_name_gets_a_suggestion() {
    let d = tmp("typo");
    let idl = d.join("bank.idl");
    std::fs::write(
        &idl,
        "struct Account { long id; };\ninterface Bank { Acount open(); };\n",
    )
    .unwrap();
    let (code, _, stderr) = idlc(&["--check", idl.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(stderr.contains("bank.idl:2:18"), "{stderr}");
    assert!(
        stderr.contains("= help: did you mean `Account`?"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&d).ok();
}
