//! The JacORB 3.9 peers (`java/src/peer/`): building them (JacORB's IDL
//! compiler, then javac; cached in the build directory) and running them.
//!
//! JacORB's jars come from Maven Central through `scripts/install-deps.sh`
//! into `~/.cache/peregrine/jacorb-3.9/lib` (`PEREGRINE_JACORB_LIB`
//! overrides). Where they or a JDK are missing, [`jacorb`] prints that the
//! JacORB tests were skipped and returns `None`; under CI (`CI` set) or
//! with `PEREGRINE_REQUIRE_JACORB=1` it panics instead, so a broken
//! install cannot pass unnoticed.
//!
//! The expected values are not copied by hand: [`expected_java`] writes
//! `peer/Expected.java` from [`crate::expected`].

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use crate::expected as x;
use crate::interop::{Color, Labels, Plain};
use crate::peers::{fnv, run_build, Peer};

/// The crate directory (IDL and Java sources).
const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");
/// Where the compiled peer is cached (per build configuration).
const CACHE_DIR: &str = env!("OUT_DIR");

/// The IDL files the Java peers are built from (compiled by JacORB's IDL
/// compiler without defines, so `jvalues.idl` gives the Java side its own
/// derived value).
const JAVA_IDL: [&str; 2] = ["idl/interop.idl", "idl/jvalues.idl"];

/// What to tell the user when JacORB is missing.
const INSTALL_HINT: &str = "the JacORB interop tests need a JDK (17) and JacORB 3.9's jars: \
run scripts/install-deps.sh (it installs openjdk-17-jdk-headless and maven, then copies \
JacORB from Maven Central)";

/// The compiled JacORB peer.
#[derive(Debug, Clone)]
pub struct Jacorb {
    /// `classes:lib/*`: the peer, the IDL compiler's output and JacORB.
    classpath: String,
}

/// Where install-deps.sh puts JacORB's jars.
fn lib_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("PEREGRINE_JACORB_LIB") {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    Path::new(&home).join(".cache/peregrine/jacorb-3.9/lib")
}

/// Whether a missing JacORB must fail the tests instead of skipping them.
fn required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
        || std::env::var("PEREGRINE_REQUIRE_JACORB").is_ok_and(|v| v == "1")
}

/// The JacORB peer, built once per process. `None` (after printing why)
/// when JacORB or a JDK is not installed and the tests may be skipped;
/// panics on a build failure, or on a missing install under CI.
pub fn jacorb() -> Option<&'static Jacorb> {
    static PEER: OnceLock<Result<Jacorb, Unavailable>> = OnceLock::new();
    match PEER.get_or_init(build) {
        Ok(p) => Some(p),
        Err(Unavailable::Missing(why)) if !required() => {
            println!("JacORB interop test skipped: {why}: {INSTALL_HINT}");
            None
        }
        Err(Unavailable::Missing(why)) => panic!("{why}: {INSTALL_HINT}"),
        Err(Unavailable::Broken(why)) => panic!("{why}"),
    }
}

/// Why the peer cannot run.
#[derive(Debug)]
enum Unavailable {
    /// Not installed (a test may be skipped).
    Missing(String),
    /// Installed but the build failed (a test must fail).
    Broken(String),
}

fn in_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
}

/// The `.java` files under `dir`, sorted (the cache key depends on them).
fn java_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            java_files(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "java") {
            out.push(p);
        }
    }
    Ok(())
}

fn build() -> Result<Jacorb, Unavailable> {
    for t in ["java", "javac"] {
        if !in_path(t) {
            return Err(Unavailable::Missing(format!("`{t}` not found in PATH")));
        }
    }
    let lib = lib_dir();
    if !lib.join(".complete").is_file() {
        return Err(Unavailable::Missing(format!(
            "JacORB's jars are not in {}",
            lib.display()
        )));
    }
    let broken = Unavailable::Broken;
    let idl: Vec<PathBuf> = JAVA_IDL
        .iter()
        .map(|f| Path::new(CRATE_DIR).join(f))
        .collect();
    let src = Path::new(CRATE_DIR).join("java/src");
    let mut sources = Vec::new();
    java_files(&src, &mut sources).map_err(|e| broken(format!("{}: {e}", src.display())))?;
    let expected = expected_java();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for s in idl.iter().chain(&sources) {
        let bytes = std::fs::read(s).map_err(|e| broken(format!("{}: {e}", s.display())))?;
        fnv(&mut h, s.as_os_str().as_encoded_bytes());
        fnv(&mut h, &bytes);
    }
    fnv(&mut h, expected.as_bytes());
    let mut jars: Vec<_> = std::fs::read_dir(&lib)
        .map_err(|e| broken(format!("{}: {e}", lib.display())))?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    jars.sort();
    for j in &jars {
        fnv(&mut h, j.as_encoded_bytes());
    }
    let dir = Path::new(CACHE_DIR).join(format!("jacorb-peer-{h:016x}"));
    let peer = Jacorb {
        classpath: format!("{}:{}/*", dir.join("classes").display(), lib.display()),
    };
    let done = dir.join("classes/peer/Server.class");
    if done.is_file() {
        return Ok(peer);
    }
    // Build in a private directory, then rename it into place: concurrent
    // test binaries may both build, but none sees a half-built peer.
    let tmp = Path::new(CACHE_DIR).join(format!("jacorb-peer-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let gen = tmp.join("gen");
    std::fs::create_dir_all(gen.join("peer")).map_err(|e| broken(format!("{e}")))?;
    let jars_cp = format!("{}/*", lib.display());
    run_build(
        Command::new("java")
            .arg("-cp")
            .arg(&jars_cp)
            .arg("org.jacorb.idl.parser")
            .arg("-d")
            .arg(&gen)
            .args(&idl),
    )
    .map_err(broken)?;
    std::fs::write(gen.join("peer/Expected.java"), &expected)
        .map_err(|e| broken(format!("{e}")))?;
    let mut all = Vec::new();
    java_files(&gen, &mut all).map_err(|e| broken(format!("{e}")))?;
    all.extend(sources);
    let argfile = tmp.join("sources.txt");
    let list: String = all.iter().map(|p| format!("{}\n", p.display())).collect();
    std::fs::write(&argfile, list).map_err(|e| broken(format!("{e}")))?;
    run_build(
        Command::new("javac")
            .args(["-nowarn", "-encoding", "UTF-8", "-d"])
            .arg(tmp.join("classes"))
            .arg("-cp")
            .arg(&jars_cp)
            .arg(format!("@{}", argfile.display())),
    )
    .map_err(broken)?;
    match std::fs::rename(&tmp, &dir) {
        Ok(()) => Ok(peer),
        // Another process won the race: use its build.
        Err(_) if done.is_file() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(peer)
        }
        Err(e) => Err(broken(format!("renaming {}: {e}", tmp.display()))),
    }
}

impl Jacorb {
    /// A JVM running `main` with JacORB as the ORB, speaking at most
    /// GIOP 1.`minor`, listening on 127.0.0.1 only.
    pub fn spawn(&self, name: &str, main: &str, minor: u8, args: &[String]) -> Peer {
        let mut all: Vec<String> = [
            "-Dorg.omg.CORBA.ORBClass=org.jacorb.orb.ORB",
            "-Dorg.omg.CORBA.ORBSingletonClass=org.jacorb.orb.ORBSingleton",
            "-DOAIAddr=127.0.0.1",
            // Its own calls (callbacks included) get a deadline too (ms): a guard
            // against hangs, generous for a loaded machine.
            "-Djacorb.connection.client.pending_reply_timeout=60000",
            // One request at a time, in arrival order, so a twoway after
            // oneways sees their effects (JacORB otherwise dispatches them
            // on a pool of threads).
            "-Djacorb.poa.thread_pool_min=1",
            "-Djacorb.poa.thread_pool_max=1",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            // Small, quick-starting JVMs: the machine is shared.
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        all.push(format!("-Djacorb.giop_minor_version={minor}"));
        all.extend(extra_args());
        all.push("-cp".into());
        all.push(self.classpath.clone());
        all.push(main.into());
        all.extend_from_slice(args);
        Peer::spawn(name, Path::new("java"), &all)
    }

    /// Starts the JacORB client (`peer.Client`) against `echo_ior`.
    pub fn client(&self, minor: u8, echo_ior: &str, badkey: &str) -> Peer {
        self.spawn(
            "JacORB client",
            "peer.Client",
            minor,
            &[echo_ior.to_string(), badkey.to_string()],
        )
    }
}

/// Extra JVM options from `PEREGRINE_INTEROP_JACORB_ARGS` (split on
/// whitespace), e.g. `-Djacorb.log.default.verbosity=4
/// -Djacorb.debug.dump_outgoing_messages=on
/// -Dorg.slf4j.simpleLogger.defaultLogLevel=debug` to debug a failure;
/// their output lands in the peer's stderr, which failing tests print.
fn extra_args() -> Vec<String> {
    std::env::var("PEREGRINE_INTEROP_JACORB_ARGS")
        .map(|v| v.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

/// A JacORB `Interop::Echo` server (`peer.Server`) speaking at most GIOP
/// 1.`minor` on an ephemeral port of 127.0.0.1.
pub struct JacorbServer {
    /// The process.
    pub peer: Peer,
    /// The Echo object's IOR.
    pub echo_ior: String,
    /// The object key bound with JacORB's `addObjectKey` (for
    /// `corbaloc::host:port/KEY`).
    pub key: String,
}

impl JacorbServer {
    /// Starts the server and waits for its IORs and `READY` line.
    pub fn start(jacorb: &Jacorb, minor: u8) -> JacorbServer {
        let mut peer = jacorb.spawn("JacORB server", "peer.Server", minor, &[]);
        let t = Duration::from_secs(60);
        let echo_ior = peer.wait_for("ECHO ", t);
        let key = peer.wait_for("KEY ", t);
        peer.wait_for("READY", t);
        JacorbServer {
            peer,
            echo_ior,
            key,
        }
    }
}

/// A Java string literal (UTF-16 code units outside printable ASCII as
/// `\uXXXX`).
fn jstr(s: &str) -> String {
    let mut o = String::from("\"");
    for u in s.encode_utf16() {
        match u {
            0x20..=0x7e if u != u16::from(b'"') && u != u16::from(b'\\') => {
                o.push(char::from(u as u8))
            }
            _ => {
                let _ = write!(o, "\\u{u:04x}");
            }
        }
    }
    o.push('"');
    o
}

/// A Java `double` expression with exactly `d`'s bits.
fn jdouble(d: f64) -> String {
    format!("Double.longBitsToDouble(0x{:016x}L)", d.to_bits())
}

fn jcolor(c: Color) -> String {
    format!("Color.from_int({})", c as i32)
}

fn jplain(p: &Plain) -> String {
    format!(
        "new Plain((short) {}, (char) {}, {}, (byte) {}, {})",
        p.s,
        p.c,
        p.l,
        p.o,
        jdouble(p.d)
    )
}

fn jints(v: &[i32]) -> String {
    let items: Vec<String> = v
        .iter()
        .map(|i| {
            if *i == i32::MIN {
                "Integer.MIN_VALUE".to_string()
            } else {
                i.to_string()
            }
        })
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// `peer/Expected.java`: the values of [`crate::expected`] for the JacORB
/// peers (unsigned IDL types are Java's signed types with the same bits).
pub fn expected_java() -> String {
    let r = x::record();
    let grid: Vec<String> = x::grid().iter().map(|row| jints(row)).collect();
    let num = match x::labels(1) {
        Labels::Num(n) => n,
        other => panic!("labels(1) is {other:?}"),
    };
    let text = match x::labels(2) {
        Labels::Text { value, .. } => value,
        other => panic!("labels(2) is {other:?}"),
    };
    let hue = match x::labels(0) {
        Labels::Hue { value, .. } => value,
        other => panic!("labels(0) is {other:?}"),
    };
    let octets: Vec<String> = x::OCTETS.iter().map(|o| format!("(byte) {o}")).collect();
    let strings: Vec<String> = x::STRINGS.iter().map(|s| jstr(s)).collect();
    let mut j = String::new();
    let _ = write!(
        j,
        "// Generated by tests/interop/src/jacorb.rs from src/expected.rs.\n\
         package peer;\n\n\
         import Interop.*;\n\
         import Interop.Record;\n\n\
         final class Expected {{\n\
         \x20 private Expected() {{}}\n\
         \x20 static final short S = (short) {s};\n\
         \x20 static final short US = (short) {us};\n\
         \x20 static final int L = {l};\n\
         \x20 static final int UL = (int) {ul}L;\n\
         \x20 static final long LL = {ll}L;\n\
         \x20 static final long ULL = 0x{ull:x}L;\n\
         \x20 static final float F = Float.intBitsToFloat(0x{f:08x});\n\
         \x20 static final double D = {d};\n\
         \x20 static final boolean B = {b};\n\
         \x20 static final char C = (char) {c};\n\
         \x20 static final byte O = (byte) {o};\n\
         \x20 static final String STR = {str};\n\
         \x20 static final char WC = (char) 0x{wc:x};\n\
         \x20 static final String WSTR = {wstr};\n\
         \x20 static final int[] LABEL_DISCS = {discs};\n\
         \x20 static final int LABEL_NUM = {num};\n\
         \x20 static final String LABEL_TEXT = {text};\n\
         \x20 static final Color LABEL_HUE = {hue};\n\
         \x20 static final byte[] OCTETS = {{{octets}}};\n\
         \x20 static final int[] LONGS = {longs};\n\
         \x20 static final String[] STRINGS = {{{strings}}};\n\n\
         \x20 static Plain plain1() {{ return {p1}; }}\n\
         \x20 static Plain plain2() {{ return {p2}; }}\n\
         \x20 static int[][] grid() {{ return new int[][] {{{grid}}}; }}\n\
         \x20 static Record record() {{\n\
         \x20   return new Record(new Inner({id}, {name}), {pod}, {rhue}, new int[] {values}, grid(), {flag});\n\
         \x20 }}\n\
         }}\n",
        s = x::S,
        us = x::US,
        l = x::L,
        ul = x::UL,
        ll = x::LL,
        ull = x::ULL,
        f = x::F.to_bits(),
        d = jdouble(x::D),
        b = x::B,
        c = x::C,
        o = x::O,
        str = jstr(x::STR),
        wc = u32::from(x::WC),
        wstr = jstr(x::WSTR),
        discs = jints(&x::LABEL_DISCS),
        text = jstr(&text),
        hue = jcolor(hue),
        octets = octets.join(", "),
        longs = jints(&x::LONGS),
        strings = strings.join(", "),
        p1 = jplain(&x::plain1()),
        p2 = jplain(&x::plain2()),
        grid = grid.join(", "),
        id = r.nested.id,
        name = jstr(&r.nested.name),
        pod = jplain(&r.pod),
        rhue = jcolor(r.hue),
        values = jints(&r.values),
        flag = r.flag,
    );
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_literals() {
        assert_eq!(jstr("a\"\\é"), "\"a\\u0022\\u005c\\u00e9\"");
        // Outside the BMP: a surrogate pair.
        assert_eq!(jstr("\u{1F600}"), "\"\\ud83d\\ude00\"");
        assert_eq!(jints(&[i32::MIN, 0]), "{Integer.MIN_VALUE, 0}");
        assert_eq!(jdouble(0.5), "Double.longBitsToDouble(0x3fe0000000000000L)");
    }

    #[test]
    fn expected_java_carries_the_shared_values() {
        let j = expected_java();
        assert!(j.contains("static final short US = (short) 54321;"), "{j}");
        assert!(
            j.contains("static final long ULL = 0xf9ccd8a1c5080000L;"),
            "{j}"
        );
        assert!(j.contains("static final int[] LABEL_DISCS = {1, 2, 3, 0, 42, -1};"));
        assert!(j.contains(&format!("STR = {};", jstr(x::STR))));
    }
}
