//! Interoperability tests against omniORB, JacORB and omniORBpy.
//!
//! * [`idl`]: Rust stubs and skeletons generated from `idl/interop.idl` by
//!   peregrine-idl-rust (in `build.rs`).
//! * [`expected`]: the fixed values both sides check (mirrored in
//!   `cxx/expected.h`, generated for Java by [`jacorb::expected_java`]).
//! * [`servants`]: Peregrine implementations of `Interop::Echo` and
//!   `Interop::Callback` that check what they receive.
//! * [`peers`]: builds the omniORB C++ peers (`cxx/server.cc`,
//!   `cxx/client.cc`) with omniidl + g++ (cached in the build directory)
//!   and runs them with readiness lines on stdout, deadlines, and
//!   kill-on-drop.
//! * [`jvalues`]: the Peregrine side of the valuetypes exchanged with
//!   JacORB and omniORBpy (`idl/jvalues.idl`): custom marshaling, fixed
//!   values, the client's steps and the servant.
//! * [`omniorbpy`]: finds omniORBpy's virtual environment, generates the
//!   omniORBpy peers' Python stubs (`python/`) with omniidl and runs
//!   them.
//! * [`jacorb`]: builds the JacORB 3.9 Java peers (`java/src/peer/`) with
//!   JacORB's IDL compiler + javac (cached likewise) and runs them.
//!
//! The tests themselves are `tests/peregrine_client.rs` (Peregrine client,
//! omniORB server) and `tests/omniorb_client.rs` (omniORB client,
//! Peregrine server), each over GIOP 1.0, 1.1 and 1.2, and
//! `tests/jacorb.rs` (both directions against JacORB); objects by value
//! are `tests/values.rs` (omniORB), `tests/jacorb_values.rs` and
//! `tests/omniorbpy_values.rs`, and abstract interfaces
//! `tests/abstract_iface.rs` (all three peers), both directions each.

pub mod expected;
pub mod jacorb;
pub mod jvalues;
pub mod omniorbpy;
pub mod peers;
pub mod servants;

/// Code generated from `idl/interop.idl`.
pub mod idl {
    include!(concat!(env!("OUT_DIR"), "/_include.rs"));
}

pub use idl::interop;

/// Code generated from `idl/values.idl` (with `PEREGRINE_SIDE` defined).
pub mod values_idl {
    include!(concat!(env!("OUT_DIR"), "/values/_include.rs"));
}

/// Code generated from `idl/jvalues.idl` (with `PEREGRINE_SIDE` defined),
/// the valuetypes exchanged with JacORB.
pub mod jvalues_idl {
    include!(concat!(env!("OUT_DIR"), "/jvalues/_include.rs"));
}

/// Code generated from `idl/abstract.idl`, and the operations of its
/// valuetype (run where the value is; implemented in this crate, which
/// owns the generated type).
pub mod abstract_idl {
    include!(concat!(env!("OUT_DIR"), "/abstract/_include.rs"));

    impl abs_interop::Named for abs_interop::Label {
        fn name(&self) -> Result<String, peregrine_orb::SystemException> {
            Ok(format!("rust label {}", self.text))
        }
    }
}

/// Code generated from `idl/valuerefs.idl` (values holding object
/// references), and the operation of its `Note` (run where the value is).
pub mod valuerefs_idl {
    include!(concat!(env!("OUT_DIR"), "/valuerefs/_include.rs"));

    impl v_refs::Describable for v_refs::Note {
        fn describe(&self) -> Result<String, peregrine_orb::SystemException> {
            Ok(format!("rust note {}", self.text))
        }
    }
}

/// Code generated from `idl/contexts.idl` (an operation with a `context`
/// clause).
pub mod contexts_idl {
    include!(concat!(env!("OUT_DIR"), "/contexts/_include.rs"));
}

/// A Peregrine ORB serving on an ephemeral loopback port, its root POA's
/// manager active, calls (callbacks included) timing out after a minute.
pub fn serving_orb() -> peregrine_orb::Orb {
    let orb = peregrine_orb::Orb::builder()
        .listen("127.0.0.1", 0)
        .call_timeout(std::time::Duration::from_secs(60))
        .build()
        .expect("server ORB");
    orb.root_poa().manager().activate().expect("activate");
    orb
}

/// Runs `f` on a thread and fails the test if it takes longer than `secs`
/// (so a hang in the ORB or a peer fails instead of blocking CI).
pub fn bounded<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("test did not finish within {secs} s")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match h.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => panic!("test thread ended without a result"),
        },
    }
}
