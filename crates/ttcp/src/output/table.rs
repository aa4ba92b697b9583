//! The human table of a suite: one row per point, a column per ORB and
//! the Peregrine / raw ratio of the headline figure.

use crate::record::Record;

/// The ORBs as columns, in this order when present.
const ORBS: [&str; 2] = ["raw", "peregrine"];

/// Names of the columns identifying a point of `suite`.
fn key_columns(suite: &str) -> &'static [&'static str] {
    match suite {
        "throughput" => &["type", "buffer"],
        "latency" => &["objects", "order", "op"],
        "payload" => &["type", "units"],
        "demux" => &["operations", "position"],
        _ => &[],
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn key_cells(r: &Record) -> Vec<String> {
    match r.suite {
        "throughput" => vec![opt(r.ty), opt(r.buffer.map(|b| format!("{}K", b >> 10)))],
        "latency" => vec![opt(r.objects), opt(r.order), opt(r.op)],
        "payload" => vec![opt(r.ty), opt(r.units)],
        "demux" => vec![opt(r.operations), opt(r.position)],
        _ => vec![],
    }
}

/// The headline figure of a record and whether higher is better.
pub fn headline(r: &Record) -> Option<f64> {
    if !r.measured() {
        return None;
    }
    match r.suite {
        "throughput" => r.mbps,
        "latency" if r.op == Some("oneway") => r.calls_per_s,
        _ => r.p50_us,
    }
}

/// The cell of one ORB's measurement.
fn value_cell(r: &Record) -> String {
    if !r.measured() {
        return "skipped".into();
    }
    match r.suite {
        "throughput" => {
            let lost = match r.lost {
                Some(0) | None => String::new(),
                Some(l) => format!(" LOST {l}"),
            };
            format!("{:.1} Mbit/s{lost}", r.mbps.unwrap_or(0.0))
        }
        "latency" if r.op == Some("oneway") => {
            format!("{:.0} calls/s", r.calls_per_s.unwrap_or(0.0))
        }
        _ => format!(
            "{:.1} / {:.1} / {:.1} us",
            r.p50_us.unwrap_or(0.0),
            r.mean_us.unwrap_or(0.0),
            r.p99_us.unwrap_or(0.0)
        ),
    }
}

/// What the value columns hold.
fn value_legend(suite: &str) -> &'static str {
    match suite {
        "throughput" => "Mbit/s, median of repeats",
        _ => "p50 / mean / p99 per call (oneway: calls/s), median of repeats",
    }
}

/// The table of the param and footprint suites: a row per operation or
/// item, the compiled and interpreted figures and their ratio
/// (interpreted / compiled: calls/s for param, bytes for footprint).
fn render_forms(suite: &str, records: &[Record]) -> String {
    let rows: Vec<&Record> = records.iter().filter(|r| r.suite == suite).collect();
    let key = |r: &Record| -> String {
        match suite {
            "param" => opt(r.op),
            _ => r.item.clone().unwrap_or_default(),
        }
    };
    let value = |r: &Record| -> Option<f64> {
        if !r.measured() {
            return None;
        }
        match suite {
            "param" => r.calls_per_s,
            _ => r.bytes.map(|b| b as f64),
        }
    };
    let mut keys: Vec<String> = Vec::new();
    for r in &rows {
        let k = key(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let (legend, unit) = match suite {
        "param" => ("twoway calls/s, median of repeats", "calls/s"),
        _ => ("bytes of code and tables, this binary", "bytes"),
    };
    let mut out = format!("\n== {suite} ({legend}) ==\n");
    let _ = unit;
    let width = keys.iter().map(|k| k.len()).max().unwrap_or(4).max(4);
    out.push_str(&format!(
        "{:<width$}  {:>12}  {:>12}  {:>12}\n",
        "", "compiled", "interpreted", "interp/comp"
    ));
    for k in &keys {
        let find = |m: Option<&str>| rows.iter().find(|r| key(r) == *k && r.marshal == m);
        let cell = |r: Option<&&Record>| match r {
            Some(r) if r.measured() => format!("{:.0}", value(r).unwrap_or(0.0)),
            Some(_) => "skipped".into(),
            None => String::new(),
        };
        let (c, i) = (find(Some("compiled")), find(Some("interpreted")));
        let (cc, ic) = match find(None) {
            Some(r) if c.is_none() && i.is_none() => (cell(Some(r)), String::new()),
            _ => (cell(c), cell(i)),
        };
        let ratio = match (c.and_then(|r| value(r)), i.and_then(|r| value(r))) {
            (Some(c), Some(i)) if c > 0.0 => format!("{:.3}", i / c),
            _ => String::new(),
        };
        let line = format!("{k:<width$}  {cc:>12}  {ic:>12}  {ratio:>12}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for r in rows.iter().filter(|r| !r.measured()) {
        out.push_str(&format!(
            "skipped: {}\n",
            r.skipped.as_deref().unwrap_or_default()
        ));
    }
    out
}

/// The table of the connections suite: a row per number of connections,
/// phase and ORB with the server's threads and memory, the fresh
/// client's call (and its p99 against its p99 alone), the calls/s of all
/// connections and, on Peregrine's active rows, their ratio to raw.
fn render_connections(records: &[Record]) -> String {
    let rows: Vec<&Record> = records
        .iter()
        .filter(|r| r.suite == "connections")
        .collect();
    // Points in order of appearance, ORBs within each in column order.
    let mut points: Vec<(Option<u64>, Option<&str>)> = Vec::new();
    for r in &rows {
        let k = (r.connections, r.phase);
        if !points.contains(&k) {
            points.push(k);
        }
    }
    let mut table = vec![[
        "connections",
        "phase",
        "orb",
        "threads",
        "RSS KiB",
        "KiB/conn",
        "server CPU %",
        "fresh p50 / p99 us",
        "p99/alone",
        "calls/s",
        "peregrine/raw",
    ]
    .map(String::from)
    .to_vec()];
    let num =
        |v: Option<f64>, digits: usize| v.map(|x| format!("{x:.digits$}")).unwrap_or_default();
    for (n, phase) in points {
        let at = |orb: &str| {
            rows.iter()
                .find(|r| r.connections == n && r.phase == phase && r.orb == orb)
        };
        for orb in ORBS {
            let Some(r) = at(orb) else { continue };
            let mut row = vec![opt(n), opt(phase), orb.to_string()];
            if r.measured() {
                let ratio = match (
                    orb,
                    r.calls_per_s,
                    at("raw").and_then(|raw| raw.calls_per_s),
                ) {
                    ("peregrine", Some(p), Some(raw)) if raw > 0.0 => format!("{:.3}", p / raw),
                    _ => String::new(),
                };
                let p99_alone = match (r.p99_us, r.alone_p99_us) {
                    (Some(p), Some(a)) if a > 0.0 => format!("{:.2}", p / a),
                    _ => String::new(),
                };
                row.extend([
                    opt(r.threads),
                    opt(r.rss_kib),
                    num(r.rss_per_conn_kib, 1),
                    num(r.server_cpu_pct, 1),
                    match (r.p50_us, r.p99_us) {
                        (Some(a), Some(b)) => format!("{a:.1} / {b:.1}"),
                        // No probe call fitted in the active phase.
                        _ => "-".into(),
                    },
                    p99_alone,
                    num(r.calls_per_s, 0),
                    ratio,
                ]);
            } else {
                row.push("skipped".into());
            }
            table.push(row);
        }
    }
    lay_out(
        String::from(
            "\n== connections (server with N client connections: threads, resident memory; \
             a fresh client's twoway call; calls/s of all N, median of repeats) ==\n",
        ),
        &table,
        3,
        &rows,
    )
}

/// Renders the table of `suite` from `records` (other suites ignored).
pub fn render(suite: &str, records: &[Record]) -> String {
    if suite == "param" || suite == "footprint" {
        return render_forms(suite, records);
    }
    if suite == "connections" {
        return render_connections(records);
    }
    let rows: Vec<&Record> = records.iter().filter(|r| r.suite == suite).collect();
    let orbs: Vec<&str> = ORBS
        .into_iter()
        .filter(|o| rows.iter().any(|r| r.orb == *o))
        .collect();
    let mut points: Vec<(Vec<String>, Vec<&Record>)> = Vec::new();
    for r in &rows {
        let k = key_cells(r);
        match points.iter_mut().find(|(pk, _)| *pk == k) {
            Some((_, v)) => v.push(r),
            None => points.push((k, vec![r])),
        }
    }
    let both = orbs.len() == 2;
    let mut header: Vec<String> = key_columns(suite).iter().map(|s| s.to_string()).collect();
    header.extend(orbs.iter().map(|o| o.to_string()));
    if both {
        header.push("peregrine/raw".into());
    }
    let mut table = vec![header];
    for (k, recs) in &points {
        let mut row = k.clone();
        let find = |o: &str| recs.iter().find(|r| r.orb == o);
        for o in &orbs {
            row.push(find(o).map(|r| value_cell(r)).unwrap_or_default());
        }
        if both {
            let ratio = match (
                find("peregrine").and_then(|r| headline(r)),
                find("raw").and_then(|r| headline(r)),
            ) {
                (Some(p), Some(r)) if r > 0.0 => format!("{:.3}", p / r),
                _ => "-".into(),
            };
            row.push(ratio);
        }
        table.push(row);
    }
    let title = format!("\n== {suite} ({}) ==\n", value_legend(suite));
    lay_out(title, &table, key_columns(suite).len(), &rows)
}

/// `title`, then `table` in aligned columns (the first `nleft` to the
/// left, the rest to the right), then why any of `rows` was skipped.
fn lay_out(mut out: String, table: &[Vec<String>], nleft: usize, rows: &[&Record]) -> String {
    let ncols = table.iter().map(|r| r.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..ncols)
        .map(|c| {
            table
                .iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in table {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if i < nleft {
                    format!("{s:<w$}", w = widths[i])
                } else {
                    format!("{s:>w$}", w = widths[i])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let mut reasons: Vec<(&str, &str)> = rows
        .iter()
        .filter_map(|r| r.skipped.as_deref().map(|s| (r.orb, s)))
        .collect();
    reasons.sort_unstable();
    reasons.dedup();
    for (orb, why) in reasons {
        out.push_str(&format!("{orb} skipped: {why}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_and_skips() {
        let base = Record {
            suite: "demux",
            operations: Some(100),
            position: Some("last"),
            ..Record::default()
        };
        let raw = Record {
            orb: "raw",
            p50_us: Some(10.0),
            mean_us: Some(11.0),
            p99_us: Some(20.0),
            ..base.clone()
        };
        let per = Record {
            orb: "peregrine",
            p50_us: Some(12.0),
            mean_us: Some(12.0),
            p99_us: Some(30.0),
            ..base.clone()
        };
        let t = render("demux", &[raw.clone(), per]);
        assert!(t.contains("1.200"), "{t}");
        let skipped = Record {
            orb: "peregrine",
            skipped: Some("not built".into()),
            ..base
        };
        let t = render("demux", &[raw, skipped]);
        assert!(
            t.contains("skipped") && t.contains("peregrine skipped: not built"),
            "{t}"
        );
        assert!(render("latency", &[]).contains("== latency"));
    }

    #[test]
    fn connections_rows_and_ratio() {
        let base = Record {
            suite: "connections",
            connections: Some(1000),
            phase: Some("active"),
            threads: Some(3),
            rss_kib: Some(2048),
            p50_us: Some(20.0),
            p99_us: Some(90.0),
            alone_p99_us: Some(30.0),
            ..Record::default()
        };
        let raw = Record {
            orb: "raw",
            calls_per_s: Some(100_000.0),
            ..base.clone()
        };
        let per = Record {
            orb: "peregrine",
            calls_per_s: Some(50_000.0),
            threads: Some(1004),
            ..base.clone()
        };
        let idle = Record {
            orb: "peregrine",
            phase: Some("idle"),
            rss_per_conn_kib: Some(14.5),
            skipped: None,
            ..base.clone()
        };
        let t = render("connections", &[idle, per, raw]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[1].starts_with("== connections"), "{t}");
        assert!(
            lines[3].contains("idle") && lines[3].contains("14.5"),
            "{t}"
        );
        // raw first within a point, the ratio on Peregrine's row.
        assert!(
            lines[4].contains("raw") && !lines[4].contains("0.500"),
            "{t}"
        );
        assert!(
            lines[5].contains("1004") && lines[5].ends_with("0.500"),
            "{t}"
        );
        assert!(
            lines[5].contains("20.0 / 90.0") && lines[5].contains("3.00"),
            "{t}"
        );
        let skipped = Record {
            orb: "peregrine",
            skipped: Some("fd limit".into()),
            ..base
        };
        let t = render("connections", &[skipped]);
        assert!(
            t.contains("skipped") && t.contains("peregrine skipped: fd limit"),
            "{t}"
        );
    }
}
