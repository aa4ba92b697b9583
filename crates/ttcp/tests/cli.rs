//! End-to-end runs of the `ttcp` binary: every suite in quick mode against
//! its own server process, the JSON contract, sync totals, percentiles,
//! the report, `serve` + `--host`, and usage errors. Every run is bounded
//! in time; nothing asserts on speed.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use common::{has, json_lines, orbs, temp_dir, ttcp};

#[test]
fn all_quick_keeps_the_contract_for_every_orb() {
    let dir = temp_dir("report");
    let out = ttcp(&[
        "all",
        "--quick",
        "--total",
        "64K",
        "--json",
        "-",
        "--report",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "ttcp failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    for suite in ["throughput", "latency", "payload", "demux", "connections"] {
        for orb in orbs() {
            assert!(
                lines
                    .iter()
                    .any(|l| l["suite"] == suite && l["orb"] == *orb),
                "no {orb} lines for {suite}"
            );
        }
    }
    for l in &lines {
        let orb = l["orb"].as_str().unwrap_or_default();
        if !orbs().contains(&orb) {
            assert_eq!(orb, "peregrine", "{l}");
            assert!(l.get("skipped").is_some(), "not built in: {l}");
            continue;
        }
        if l["suite"] == "connections"
            && l["skipped"]
                .as_str()
                .is_some_and(|s| s.contains("open-file hard limit"))
        {
            // A host whose limit is too low for 1,000 connections.
            continue;
        }
        assert!(l.get("skipped").is_none(), "{orb} skipped: {l}");
        match l["suite"].as_str().unwrap() {
            "throughput" => {
                has(l, &["type", "buffer", "total", "seconds", "mbps", "lost"]);
                // sync() returned exactly the payload sent.
                assert_eq!(l["lost"], 0, "sync total differs: {l}");
                assert!(l["total"].as_u64().unwrap() >= 64 << 10);
                assert!(l["mbps"].as_f64().unwrap() > 0.0);
            }
            "latency" if l["op"] == "oneway" => {
                has(l, &["objects", "order", "calls", "calls_per_s"]);
                assert!(l["calls_per_s"].as_f64().unwrap() > 0.0);
            }
            "latency" => {
                has(
                    l,
                    &[
                        "objects", "order", "op", "pin", "calls", "mean_us", "p50_us", "p99_us",
                    ],
                );
                assert_eq!(l["pin"], "same");
                assert!(l["p50_us"].as_f64().unwrap() > 0.0, "{l}");
                assert!(
                    l["p50_us"].as_f64().unwrap() <= l["p99_us"].as_f64().unwrap(),
                    "{l}"
                );
            }
            "payload" => {
                has(l, &["type", "units", "mean_us", "p50_us", "p99_us"]);
                assert!(l["p50_us"].as_f64().unwrap() > 0.0, "{l}");
                assert!(
                    l["p50_us"].as_f64().unwrap() <= l["p99_us"].as_f64().unwrap(),
                    "{l}"
                );
            }
            "demux" => {
                has(l, &["operations", "position", "mean_us", "p50_us"]);
                assert_eq!(l["operations"], 100);
                assert!(l["p50_us"].as_f64().unwrap() > 0.0, "{l}");
            }
            "param" => {
                has(l, &["marshal", "op", "pin", "calls", "calls_per_s"]);
                assert_eq!(l["orb"], "peregrine", "{l}");
                assert!(l["marshal"] == "compiled" || l["marshal"] == "interpreted");
                assert!(l["op"].as_str().unwrap().starts_with("test_"), "{l}");
                assert!(l["calls_per_s"].as_f64().unwrap() > 0.0, "{l}");
            }
            "connections" => {
                has(
                    l,
                    &[
                        "connections",
                        "phase",
                        "pin",
                        "threads",
                        "rss_kib",
                        "calls",
                        "p99_us",
                    ],
                );
                assert!(l["threads"].as_u64().unwrap() >= 1, "{l}");
                assert!(l["rss_kib"].as_u64().unwrap() > 0, "{l}");
                if l["phase"] == "active" {
                    assert!(l["calls_per_s"].as_f64().unwrap() > 0.0, "{l}");
                } else {
                    assert_eq!(l["phase"], "idle");
                    has(l, &["rss_per_conn_kib", "server_cpu_pct", "alone_p99_us"]);
                }
            }
            "footprint" => {
                has(l, &["item", "bytes"]);
                if let Some(m) = l.get("marshal") {
                    assert!(m == "compiled" || m == "interpreted", "{l}");
                } else {
                    assert!(l["item"].as_str().unwrap().starts_with("text "), "{l}");
                }
                assert!(l["bytes"].as_u64().is_some(), "{l}");
            }
            other => panic!("unknown suite {other}"),
        }
    }
    // Per ORB: 6 types x 8 buffers; 2 object counts x (2 orders + oneway);
    // 3 x 11; 2; 3 x 2.
    for orb in orbs() {
        let count = |s: &str| {
            lines
                .iter()
                .filter(|l| l["suite"] == s && l["orb"] == *orb)
                .count()
        };
        assert_eq!(count("throughput"), 48, "{orb}");
        assert_eq!(count("latency"), 6, "{orb}");
        assert_eq!(count("payload"), 33, "{orb}");
        assert_eq!(count("demux"), 2, "{orb}");
        // 3 numbers of connections x (idle, active).
        assert_eq!(count("connections"), 6, "{orb}");
        if *orb == "peregrine" {
            // 7 operations x 2 forms.
            assert_eq!(count("param"), 14, "{orb}");
            for form in ["compiled", "interpreted"] {
                for item in ["test_short stub", "test_struct_seq skeleton", "all stubs"] {
                    let l = lines
                        .iter()
                        .find(|l| {
                            l["suite"] == "footprint" && l["marshal"] == form && l["item"] == item
                        })
                        .unwrap_or_else(|| panic!("no footprint {form} {item}"));
                    assert!(l["bytes"].as_u64().unwrap() > 0, "{l}");
                }
            }
            let text = lines
                .iter()
                .find(|l| l["suite"] == "footprint" && l["item"] == "text peregrine_orb")
                .expect("ORB text size");
            assert!(text["bytes"].as_u64().unwrap() > 10_000, "{text}");
        }
        for order in ["round-robin", "request-train"] {
            assert!(lines
                .iter()
                .any(|l| l["order"] == order && l["orb"] == *orb));
        }
    }
    // Tables went to stderr, so stdout stayed pure JSON.
    assert!(String::from_utf8_lossy(&out.stderr).contains("== throughput"));
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    for svg in [
        "throughput_short.svg",
        "throughput_struct.svg",
        "latency_objects.svg",
        "latency_units.svg",
        "connections_calls.svg",
    ] {
        let text = std::fs::read_to_string(dir.join(svg)).unwrap_or_else(|_| panic!("{svg}"));
        assert!(text.contains("<svg"), "{svg} is not SVG");
        assert!(md.contains(svg), "report.md does not show {svg}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn peregrine_rows_are_measured_when_built_in() {
    let out = ttcp(&["demux", "--quick", "--json", "-"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 4, "2 positions x 2 orbs");
    let peregrine: Vec<&Value> = lines.iter().filter(|l| l["orb"] == "peregrine").collect();
    assert_eq!(peregrine.len(), 2);
    for l in peregrine {
        has(l, &["suite", "operations", "position"]);
        if cfg!(feature = "orb") {
            assert!(l.get("skipped").is_none(), "{l}");
            has(l, &["mean_us", "p50_us"]);
        } else {
            assert!(l.get("skipped").is_some(), "{l}");
        }
    }
    assert_eq!(lines.iter().filter(|l| l["orb"] == "raw").count(), 2);
}

/// `TTCP_ORB_ARGS` passes ORB options to the Peregrine server; words that
/// are not ORB options skip its rows with the reason instead of
/// measuring the default setting under another name.
#[cfg(feature = "orb")]
#[test]
fn orb_options_come_from_the_environment() {
    let args = ["demux", "--quick", "--orb", "peregrine", "--json", "-"];
    let out = common::ttcp_with_env("TTCP_ORB_ARGS", "-ORBmaxPollingThreads 1", &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2, "2 positions");
    for l in &lines {
        assert!(l.get("skipped").is_none(), "{l}");
        has(l, &["p50_us"]);
    }
    let out = common::ttcp_with_env("TTCP_ORB_ARGS", "maxPollingThreads 1", &args);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2, "2 positions");
    for l in &lines {
        let why = l["skipped"].as_str().unwrap_or_default();
        assert!(
            why.contains("BAD_PARAM") && why.contains("\"maxPollingThreads\""),
            "{l}"
        );
    }
}

#[test]
fn table_and_json_file() {
    let dir = temp_dir("json");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("out.json");
    let out = ttcp(&[
        "throughput",
        "--quick",
        "--orb",
        "raw",
        "--total",
        "16K",
        "--json",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("== throughput") && table.contains("struct"),
        "{table}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 48);
    for l in text.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["lost"], 0);
        assert_eq!(v["pin"], "none");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn throughput_points_can_be_chosen() {
    let out = ttcp(&[
        "throughput",
        "--orb",
        "raw",
        "--total",
        "16K",
        "--types",
        "struct,short",
        "--buffers",
        "1K,4K",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let points: Vec<(String, u64)> = json_lines(&out)
        .iter()
        .map(|l| {
            assert_eq!(l["total"], 16384);
            (
                l["type"].as_str().unwrap().to_string(),
                l["buffer"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("struct", 1024),
        ("struct", 4096),
        ("short", 1024),
        ("short", 4096),
    ];
    assert_eq!(points.len(), want.len(), "{points:?}");
    for ((t, b), (wt, wb)) in points.iter().zip(want) {
        assert_eq!((t.as_str(), *b), (wt, wb));
    }
}

#[test]
fn serve_and_remote_client() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_ttcp"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            "0",
            "--orb",
            "raw",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = server.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next().and_then(|l| l.ok()).unwrap_or_default();
        let _ = tx.send(first);
        for _ in lines {}
    });
    let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
    let port = line
        .strip_prefix("endpoint raw 127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected serve line {line:?}"))
        .to_string();
    let out = ttcp(&[
        "latency",
        "--quick",
        "--orb",
        "raw",
        "--host",
        "127.0.0.1",
        "--port",
        &port,
        "--objects",
        "1,3,7",
        "--json",
        "-",
    ]);
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Three points (round robin, request train, oneway) per number of
    // objects given with --objects, in the order given.
    let objects: Vec<u64> = json_lines(&out)
        .iter()
        .map(|l| l["objects"].as_u64().unwrap())
        .collect();
    assert_eq!(objects, [1, 1, 1, 3, 3, 3, 7, 7, 7]);
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["param", "--orb", "corba"][..],
        &["footprint", "--repeat", "0"],
        &["throughput", "--total", "0"],
        &["latency", "--port", "9"],
        &["latency", "--objects", "0"],
        &["latency", "--objects", "1,many"],
        &["throughput", "--types", "float"],
        &["throughput", "--buffers", "8"],
        &["throughput", "--buffers", "1G"],
        &["connections", "--connections", "0"],
        &["connections", "--duration", "0"],
        &["connections", "--duration", "soon"],
        &["all", "--orb", "corba"],
        &["demux", "--repeat", "0"],
        &["nonsense"],
    ] {
        let out = ttcp(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn unreachable_remote_fails_cleanly() {
    // A port nobody listens on (bound then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = ttcp(&[
        "demux",
        "--quick",
        "--orb",
        "raw",
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--json",
        "-",
    ]);
    assert_eq!(out.status.code(), Some(1));
    for l in json_lines(&out) {
        assert!(l.get("skipped").is_some(), "{l}");
    }
}
