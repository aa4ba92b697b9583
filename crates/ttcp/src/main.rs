//! `ttcp`: the seed papers' CORBA measurements, Peregrine beside a raw-TCP
//! baseline with the same bytes on the wire. The contract (commands, JSON
//! fields, targets) is BENCHMARKS.md.

mod cli;
mod crowd;
mod echo;
mod epoll;
mod fd_limit;
#[cfg(feature = "orb")]
mod footprint;
mod frame;
mod output;
#[cfg(feature = "orb")]
mod param;
#[cfg(feature = "orb")]
mod peregrine;
#[cfg(not(feature = "orb"))]
#[path = "peregrine_absent.rs"]
mod peregrine;
mod pin;
mod proc_status;
mod raw;
mod record;
mod spawn;
mod stats;
mod suites;
mod transport;
mod types;
mod wire_size;

use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command, RunArgs};
use output::Output;
use suites::Settings;
use transport::OrbKind;

/// The suites `all` runs, in order.
const SUITES: [&str; 7] = [
    "throughput",
    "latency",
    "payload",
    "demux",
    "param",
    "connections",
    "footprint",
];

fn settings(a: &RunArgs) -> Settings {
    Settings {
        quick: a.quick,
        repeat: a
            .repeat
            .map(|r| r as usize)
            .unwrap_or(if a.quick { 1 } else { 3 }),
        pin: a.pin,
        total: a.total,
        objects: a.objects.clone(),
        types: a.types.clone(),
        buffers: a.buffers.clone(),
        connections: a.connections.clone(),
        duration: a.duration,
        orbs: a.orb.kinds(),
        remote: a.host.clone().map(|h| (h, a.port)),
        cpus: pin::allowed_cpus(),
    }
}

fn run_one(name: &str, s: &Settings, out: &mut Output) -> io::Result<()> {
    match name {
        "throughput" => suites::throughput::run_throughput(s, out),
        "latency" => suites::latency::run_latency(s, out),
        "payload" => suites::payload::run_payload(s, out),
        "demux" => suites::demux::run_demux(s, out),
        "param" => suites::param::run_param(s, out),
        "connections" => suites::connections::run_connections(s, out),
        "footprint" => suites::footprint::run_footprint(s, out),
        _ => unreachable!("suite names are fixed"),
    }
}

fn run(names: &[&str], a: &RunArgs) -> ExitCode {
    let s = settings(a);
    let mut out = match Output::new(a.json.as_deref()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!(
                "ttcp: cannot open {:?}: {e}",
                a.json.as_deref().unwrap_or("")
            );
            return ExitCode::from(2);
        }
    };
    let mut code = ExitCode::SUCCESS;
    for name in names {
        if let Err(e) = run_one(name, &s, &mut out) {
            out.note(&format!("ttcp: {name} failed: {e}"));
            code = ExitCode::FAILURE;
        }
    }
    if let Err(e) = out.finish() {
        eprintln!("ttcp: writing JSON: {e}");
        code = ExitCode::FAILURE;
    }
    for f in &out.failures {
        eprintln!("ttcp: {f}");
        code = ExitCode::FAILURE;
    }
    if let Some(dir) = &a.report {
        let command: Vec<String> = std::env::args().collect();
        match output::report::write_report(dir, &out.records, &command.join(" "), s.cpus.len()) {
            Ok(files) => out.note(&format!(
                "report: {} ({} files)",
                dir.join("report.md").display(),
                files.len()
            )),
            Err(e) => {
                eprintln!("ttcp: writing the report into {}: {e}", dir.display());
                code = ExitCode::FAILURE;
            }
        }
    }
    code
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Throughput(a) => run(&["throughput"], &a),
        Command::Latency(a) => run(&["latency"], &a),
        Command::Payload(a) => run(&["payload"], &a),
        Command::Demux(a) => run(&["demux"], &a),
        Command::Param(a) => run(&["param"], &a),
        Command::Connections(a) => run(&["connections"], &a),
        Command::Footprint(a) => run(&["footprint"], &a),
        Command::All(a) => run(&SUITES, &a),
        Command::Serve(a) => {
            let orbs = a.orb.kinds();
            match spawn::run_server(
                a.bind,
                a.port,
                a.cpu,
                &orbs,
                spawn::RawServer::Threads,
                false,
            ) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("ttcp serve: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Server(a) => {
            let orbs: Vec<OrbKind> = if a.orb.is_empty() {
                vec![OrbKind::Raw]
            } else {
                a.orb
            };
            let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
            match spawn::run_server(ip, 0, a.cpu, &orbs, a.raw, true) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("ttcp __server: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
