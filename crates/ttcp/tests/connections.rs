//! End-to-end runs of `ttcp connections` (T7), tiny: both servers with 1
//! and 10 client connections for a fraction of a second. The records must
//! be complete and their counts plausible; nothing asserts on speed.

mod common;

use serde_json::Value;

use common::{has, json_lines, orbs, stderr, ttcp, ttcp_with_nofile};

/// The record of `orb` with `n` connections in `phase`.
fn find<'a>(lines: &'a [Value], orb: &str, n: u64, phase: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["orb"] == orb && l["connections"] == n && l["phase"] == phase)
        .unwrap_or_else(|| panic!("no {orb} {phase} record with {n} connections"))
}

fn f64_of(l: &Value, field: &str) -> f64 {
    l[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number in {l}"))
}

fn u64_of(l: &Value, field: &str) -> u64 {
    l[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} is not a count in {l}"))
}

#[test]
fn tiny_run_against_both_servers() {
    let out = ttcp(&[
        "connections",
        "--quick",
        "--connections",
        "1,10",
        "--duration",
        "0.2",
        "--json",
        "-",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    // Per number of connections and ORB: idle, then active.
    assert_eq!(lines.len(), 2 * orbs().len() * 2, "{lines:?}");
    for l in &lines {
        assert_eq!(l["suite"], "connections");
        assert_eq!(l["pin"], "same");
    }
    if !cfg!(feature = "orb") {
        let p: Vec<&Value> = lines.iter().filter(|l| l["orb"] == "peregrine").collect();
        assert!(p.iter().all(|l| l.get("skipped").is_some()), "{p:?}");
    }
    for &orb in orbs() {
        for n in [1u64, 10] {
            let idle = find(&lines, orb, n, "idle");
            let active = find(&lines, orb, n, "active");
            for l in [idle, active] {
                assert!(l.get("skipped").is_none(), "{l}");
                has(
                    l,
                    &[
                        "threads",
                        "rss_kib",
                        "calls",
                        "mean_us",
                        "p50_us",
                        "p99_us",
                        "alone_p50_us",
                        "alone_p99_us",
                    ],
                );
                assert!(u64_of(l, "threads") >= 1, "{l}");
                assert!(u64_of(l, "rss_kib") > 0, "{l}");
                assert!(u64_of(l, "calls") > 0, "{l}");
                assert!(f64_of(l, "p50_us") > 0.0, "{l}");
                assert!(f64_of(l, "p50_us") <= f64_of(l, "p99_us"), "{l}");
                assert!(
                    f64_of(l, "alone_p50_us") <= f64_of(l, "alone_p99_us"),
                    "{l}"
                );
            }
            // The quick fresh client's timed calls.
            assert_eq!(u64_of(idle, "calls"), 500, "{idle}");
            has(idle, &["rss_per_conn_kib", "server_cpu_pct"]);
            assert!(f64_of(idle, "server_cpu_pct") >= 0.0, "{idle}");
            assert!(idle.get("calls_per_s").is_none(), "{idle}");
            assert_eq!(f64_of(active, "seconds"), 0.2, "{active}");
            // Clock ticks of 10 ms: a short phase may see none.
            assert!(f64_of(active, "server_cpu_pct") >= 0.0, "{active}");
            let total = u64_of(active, "total_calls");
            assert!(total > 0, "{active}");
            let rate = f64_of(active, "calls_per_s");
            assert!((rate - total as f64 / 0.2).abs() <= 1.0, "{active}");
            // The same alone reference in both records of a point.
            assert_eq!(idle["alone_p99_us"], active["alone_p99_us"]);
        }
    }
    // The epoll baseline's threads do not grow with its connections.
    assert_eq!(
        find(&lines, "raw", 1, "idle")["threads"],
        find(&lines, "raw", 10, "idle")["threads"]
    );
    let table = stderr(&out);
    assert!(table.contains("== connections"), "{table}");
}

#[test]
fn connections_beyond_the_open_file_limit_are_skipped_with_a_note() {
    // 1 connection fits in 100 descriptors, 100 do not.
    let out = ttcp_with_nofile(
        100,
        &[
            "connections",
            "--orb",
            "raw",
            "--quick",
            "--connections",
            "1,100",
            "--duration",
            "0.1",
            "--json",
            "-",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 4, "{lines:?}");
    for phase in ["idle", "active"] {
        let one = find(&lines, "raw", 1, phase);
        assert!(one.get("skipped").is_none(), "{one}");
        let hundred = find(&lines, "raw", 100, phase);
        let why = hundred["skipped"].as_str().unwrap_or_default();
        assert!(
            why.contains("open-file hard limit") && why.contains("100"),
            "{hundred}"
        );
    }
    let err = stderr(&out);
    assert!(err.contains("connections: skipping 100"), "{err}");
}

#[test]
fn a_remote_server_is_not_measured() {
    let out = ttcp(&[
        "connections",
        "--host",
        "127.0.0.1",
        "--port",
        "1",
        "--connections",
        "5",
        "--json",
        "-",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2 * 2, "{lines:?}");
    for l in &lines {
        let why = l["skipped"].as_str().unwrap_or_default();
        assert!(why.contains("--host"), "{l}");
    }
    let err = stderr(&out);
    assert!(err.contains("connections: not measured"), "{err}");
}
