//! T6 (seed 004, IV-D.5.b): code size of each generated Param_Test stub
//! and skeleton, compiled vs interpreted (plus the interpreted tables),
//! and the text of the ORB crates, read from the running binary's symbol
//! table (see `crate::footprint` for what is counted).

use std::io;

use super::Settings;
use crate::output::Output;
use crate::record::Record;

/// The crates whose text is reported (`text <crate>` items).
#[cfg(feature = "orb")]
pub const CRATES: [&str; 4] = [
    "peregrine_cdr",
    "peregrine_giop",
    "peregrine_orb",
    "peregrine_dynamic",
];

fn record(marshal: Option<&'static str>, item: String, bytes: u64) -> Record {
    Record {
        suite: "footprint",
        orb: "peregrine",
        marshal,
        item: Some(item),
        bytes: Some(bytes),
        ..Record::default()
    }
}

/// Runs the suite (no server: it reads this binary).
#[cfg(feature = "orb")]
pub fn run_footprint(_settings: &Settings, out: &mut Output) -> io::Result<()> {
    use crate::footprint::Binary;
    use crate::param::{interpreted_tables, OPS};
    use std::collections::HashSet;

    out.begin_suite("footprint");
    out.status("footprint: reading the symbol table");
    let b = Binary::current()?;
    if !b.has_calls {
        out.note("footprint: no call graph on this architecture; entry points only");
    }
    let tables = interpreted_tables();
    for (form, module) in [
        ("compiled", "param::compiled::"),
        ("interpreted", "param::interpreted::"),
    ] {
        let mut all_roots = Vec::new();
        let mut per_entry = HashSet::new();
        let (mut stubs, mut skels, mut tabs) = (0u64, 0u64, 0u64);
        for (i, op) in OPS.iter().enumerate() {
            let stub_suffix = format!("ParamTestRef::{op}");
            let skel_suffix = format!("param_test::__handle_{op}");
            let stub = b.find(|n| n.contains(module) && n.ends_with(&stub_suffix));
            let skel = b.find(|n| n.contains(module) && n.ends_with(&skel_suffix));
            let (Some(stub), Some(skel)) = (stub, skel) else {
                return Err(io::Error::other(format!(
                    "footprint: {form} {op}: stub or skeleton symbol not found (stripped binary?)"
                )));
            };
            all_roots.extend([stub, skel]);
            let stub_set = b.specific(&[stub]);
            let skel_set = b.specific(&[skel]);
            let (st, sk) = (b.size_of(&stub_set), b.size_of(&skel_set));
            per_entry.extend(stub_set);
            per_entry.extend(skel_set);
            let table = if form == "interpreted" {
                tables[i].footprint() as u64
            } else {
                0
            };
            stubs += st;
            skels += sk;
            tabs += table;
            let m = Some(form);
            out.record(record(m, format!("{op} stub"), st))?;
            out.record(record(m, format!("{op} skeleton"), sk))?;
            if form == "interpreted" {
                out.record(record(m, format!("{op} table"), table))?;
            }
            out.record(record(m, format!("{op} stub+table"), st + table))?;
            out.record(record(m, format!("{op} skeleton+table"), sk + table))?;
            out.point_done();
        }
        // What the form's stubs and skeletons share and nothing else in
        // the binary calls: per-type marshaling, and for the interpreted
        // form the engine's instances.
        let shared = b.specific(&all_roots);
        let helpers: u64 = shared
            .iter()
            .filter(|f| !per_entry.contains(f))
            .map(|&f| b.funcs[f].size)
            .sum();
        let m = Some(form);
        out.record(record(m, "all stubs".into(), stubs))?;
        out.record(record(m, "all skeletons".into(), skels))?;
        out.record(record(m, "all tables".into(), tabs))?;
        out.record(record(
            m,
            "all stubs+skeletons+tables".into(),
            stubs + skels + tabs,
        ))?;
        out.record(record(m, "shared helpers".into(), helpers))?;
    }
    for krate in CRATES {
        out.record(record(None, format!("text {krate}"), b.crate_text(krate)))?;
    }
    let core: u64 = CRATES[..3].iter().map(|k| b.crate_text(k)).sum();
    out.record(record(None, "text cdr+giop+orb".into(), core))?;
    out.point_done();
    out.print_table("footprint");
    Ok(())
}

/// Without the ORB there is nothing generated to measure.
#[cfg(not(feature = "orb"))]
pub fn run_footprint(_settings: &Settings, out: &mut Output) -> io::Result<()> {
    out.begin_suite("footprint");
    let mut r = record(None, "stubs".into(), 0);
    r.bytes = None;
    r.skipped = Some(crate::peregrine::NOT_BUILT.into());
    out.record(r)?;
    out.print_table("footprint");
    Ok(())
}
