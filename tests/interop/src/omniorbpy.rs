//! The omniORBpy peers (`python/`): the Python stubs of their IDL,
//! generated with omniidl's Python back end (cached in the build
//! directory), and the Python processes.
//!
//! omniORBpy (4.3, PyPI's `jeteve-omniorb` wheel) lives in a virtual
//! environment that `scripts/install-deps.sh` creates in
//! `~/.cache/peregrine/omniorbpy-venv` (`PEREGRINE_OMNIORBPY_VENV`
//! overrides; [`venv`] finds it, for the examples' tests too). Where it
//! is missing, [`omniorbpy`] prints that the tests were skipped and
//! returns `None`; under CI (`CI` set) or with
//! `PEREGRINE_REQUIRE_OMNIORBPY=1` it panics instead.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::peers::{fnv, run_build, Peer};

/// The crate directory (IDL and Python sources).
const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");
/// Where the stubs are cached (per build configuration).
const CACHE_DIR: &str = env!("OUT_DIR");
/// The IDL the Python peers use (compiled without defines: the peers'
/// side of `#ifdef PEREGRINE_SIDE`).
const PYTHON_IDL: [&str; 4] = [
    "idl/jvalues.idl",
    "idl/abstract.idl",
    "idl/valuerefs.idl",
    "idl/contexts.idl",
];

/// The Python interpreter with omniORBpy and the generated stubs.
#[derive(Debug, Clone)]
pub struct OmniOrbPy {
    python: PathBuf,
    /// `stubs:python`, for `PYTHONPATH`.
    path: String,
}

/// The virtual environment holding omniORBpy and omniidl with its Python
/// back end; `Err` says where it was looked for when it is not there.
pub fn venv() -> Result<PathBuf, String> {
    let venv = match std::env::var_os("PEREGRINE_OMNIORBPY_VENV") {
        Some(d) => PathBuf::from(d),
        None => Path::new(&std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/peregrine/omniorbpy-venv"),
    };
    if venv.join("bin/omniidl").is_file() {
        Ok(venv)
    } else {
        Err(format!("omniORBpy is not installed in {}", venv.display()))
    }
}

fn required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
        || std::env::var("PEREGRINE_REQUIRE_OMNIORBPY").is_ok_and(|v| v == "1")
}

/// omniORBpy with the stubs built, once per process. `None` (after
/// printing why) when it is not installed and the tests may be skipped;
/// panics when generating the stubs fails, or on a missing install under
/// CI.
pub fn omniorbpy() -> Option<&'static OmniOrbPy> {
    static PY: OnceLock<Result<OmniOrbPy, (bool, String)>> = OnceLock::new();
    match PY.get_or_init(build) {
        Ok(p) => Some(p),
        Err((true, why)) if !required() => {
            println!("omniORBpy interop test skipped: {why}: run scripts/install-deps.sh");
            None
        }
        Err((_, why)) => panic!("{why}"),
    }
}

/// The stubs of [`PYTHON_IDL`] in `$OUT_DIR/omniorbpy-stubs-<hash>`
/// (generated in a private directory renamed into place, so concurrent
/// test binaries never see half-written stubs). `Err((missing, why))`.
fn build() -> Result<OmniOrbPy, (bool, String)> {
    let venv = venv().map_err(|why| (true, why))?;
    let idl = PYTHON_IDL.map(|f| Path::new(CRATE_DIR).join(f));
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    fnv(&mut h, venv.as_os_str().as_encoded_bytes());
    for f in &idl {
        let text = std::fs::read(f).map_err(|e| (false, format!("{}: {e}", f.display())))?;
        fnv(&mut h, &text);
    }
    let dir = Path::new(CACHE_DIR).join(format!("omniorbpy-stubs-{h:016x}"));
    let py = OmniOrbPy {
        python: venv.join("bin/python"),
        path: format!("{}:{}/python", dir.display(), CRATE_DIR),
    };
    // Renamed into place once complete: there means whole.
    if dir.is_dir() {
        return Ok(py);
    }
    let tmp = Path::new(CACHE_DIR).join(format!("omniorbpy-stubs-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| (false, format!("{e}")))?;
    run_build(
        Command::new(venv.join("bin/omniidl"))
            .arg("-bpython")
            .arg("-C")
            .arg(&tmp)
            .args(&idl),
    )
    .map_err(|e| (false, e))?;
    match std::fs::rename(&tmp, &dir) {
        Ok(()) => Ok(py),
        // Another process won the race: use its stubs.
        Err(_) if dir.is_dir() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(py)
        }
        Err(e) => Err((false, format!("renaming {}: {e}", tmp.display()))),
    }
}

impl OmniOrbPy {
    /// Runs `python/<script>` with `args` (unbuffered, so each line
    /// reaches the test as it is printed).
    pub fn spawn(&self, name: &str, script: &str, args: &[String]) -> Peer {
        let mut all = vec![
            format!("PYTHONPATH={}", self.path),
            self.python.display().to_string(),
            "-u".into(),
            format!("{CRATE_DIR}/python/{script}"),
        ];
        all.extend_from_slice(args);
        Peer::spawn(name, Path::new("/usr/bin/env"), &all)
    }
}
