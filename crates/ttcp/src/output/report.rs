//! `--report DIR`: report.md with every suite's table, and SVG charts in
//! the style of the seeds' figures (throughput vs buffer size per type
//! with the raw line; latency vs number of objects; latency vs units).

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use plotters::prelude::*;

use super::table;
use crate::record::Record;
use crate::types::DataType;

/// A line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// (x, y) points, x ascending.
    pub points: Vec<(f64, f64)>,
    /// The raw baseline: drawn dashed.
    pub baseline: bool,
    /// Series with equal keys share a colour (the raw and the Peregrine
    /// line of one type or order).
    pub color_key: String,
}

fn other<E: std::fmt::Display>(e: E) -> io::Error {
    io::Error::other(e.to_string())
}

/// `x` as a short label: 1K, 64K, 1M for powers of two from 1024, else
/// the number (10000, 1000000 as 10k, 1M).
fn human(x: f64) -> String {
    let v = x.round() as u64;
    if v >= 1024 && v.is_power_of_two() {
        if v >= 1 << 20 {
            format!("{}M", v >> 20)
        } else {
            format!("{}K", v >> 10)
        }
    } else if v >= 1_000_000 && v % 1_000_000 == 0 {
        format!("{}M", v / 1_000_000)
    } else if v >= 10_000 && v % 1000 == 0 {
        format!("{}k", v / 1000)
    } else {
        v.to_string()
    }
}

/// Draws `series` into an SVG at `path`: x on a log scale, y linear from 0.
pub fn line_chart(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> io::Result<()> {
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut xmin, mut xmax, mut ymax) = (f64::MAX, f64::MIN, 0f64);
    for &(x, y) in pts {
        xmin = xmin.min(x);
        xmax = xmax.max(x);
        ymax = ymax.max(y);
    }
    if xmin > xmax {
        (xmin, xmax) = (1.0, 10.0);
    }
    if xmin >= xmax {
        xmax = xmin * 10.0;
    }
    let xmin = xmin.max(1e-3);
    let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };
    // Ticks at the measured x values (1K, 2K, ...; 1, 100, 1000, ...).
    let mut ticks: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(other)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((xmin..xmax).log_scale().with_key_points(ticks), 0f64..ymax)
        .map_err(other)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|x| human(*x))
        .y_label_formatter(&|y| {
            if ymax > 100.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.1}")
            }
        })
        .draw()
        .map_err(other)?;
    let mut keys: Vec<&str> = series.iter().map(|s| s.color_key.as_str()).collect();
    keys.dedup();
    for s in series {
        let k = keys.iter().position(|k| *k == s.color_key).unwrap_or(0);
        let color = if keys.len() == 1 && s.baseline {
            BLACK
        } else {
            let c = Palette99::pick(k + 1).to_rgba();
            RGBColor(c.0, c.1, c.2)
        };
        let style = color.stroke_width(2);
        let points = s.points.iter().copied();
        let drawn = if s.baseline {
            chart.draw_series(DashedLineSeries::new(points, 8, 5, style))
        } else {
            chart.draw_series(LineSeries::new(points, style))
        };
        let dashed = s.baseline;
        drawn
            .map_err(other)?
            .label(s.name.as_str())
            .legend(move |(x, y)| {
                let to = if dashed { x + 8 } else { x + 20 };
                PathElement::new(vec![(x, y), (to, y)], style)
            });
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(other)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(other)?;
    root.present().map_err(other)?;
    Ok(())
}

/// One series per group of measured records sharing a label.
fn group(
    records: &[&Record],
    color_key: impl Fn(&Record) -> String,
    label: impl Fn(&Record) -> String,
    xy: impl Fn(&Record) -> Option<(f64, f64)>,
) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for r in records.iter().filter(|r| r.measured()) {
        let Some(p) = xy(r) else { continue };
        let name = label(r);
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(p),
            None => out.push(Series {
                name,
                points: vec![p],
                baseline: r.orb == "raw",
                color_key: color_key(r),
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// The table of message sizes: what both ORBs put on the wire per call.
fn wire_sizes(md: &mut String) {
    use crate::types::SeqData;
    use crate::wire_size::{self, Args};
    let _ = writeln!(md, "Bytes on the wire per call (GIOP 1.2, {}-byte object keys; the raw baseline sends exactly these):\n", wire_size::OBJECT_KEY_LEN);
    let _ = writeln!(md, "| exchange | request | reply |\n|---|---:|---:|");
    let rows: Vec<(String, usize, Option<usize>)> = vec![
        (
            "sendNoParams_2way".into(),
            wire_size::request_size(wire_size::NO_PARAMS_2WAY, Args::None),
            Some(wire_size::reply_size(false)),
        ),
        (
            "sendNoParams_1way".into(),
            wire_size::request_size(wire_size::NO_PARAMS_1WAY, Args::None),
            None,
        ),
        (
            "sync".into(),
            wire_size::request_size(wire_size::SYNC, Args::None),
            Some(wire_size::reply_size(true)),
        ),
        (
            "demux_000 / demux_099".into(),
            wire_size::request_size(&wire_size::demux_op(0), Args::None),
            Some(wire_size::reply_size(false)),
        ),
        (
            "sendDoubleSeq, 1K buffer".into(),
            wire_size::request_size(
                "sendDoubleSeq",
                Args::Seq(&SeqData::with_bytes(DataType::Double, 1024)),
            ),
            None,
        ),
        (
            "sendStructSeq_2way, 1024 units".into(),
            wire_size::request_size(
                "sendStructSeq_2way",
                Args::Seq(&SeqData::new(DataType::Struct, 1024)),
            ),
            Some(wire_size::reply_size(false)),
        ),
    ];
    for (name, req, rep) in rows {
        let rep = rep.map(|r| r.to_string()).unwrap_or_else(|| "-".into());
        let _ = writeln!(md, "| {name} | {req} | {rep} |");
    }
    md.push('\n');
}

/// Writes report.md and the charts into `dir`; returns the files written.
pub fn write_report(
    dir: &Path,
    records: &[Record],
    command: &str,
    cpus: usize,
) -> io::Result<Vec<String>> {
    fs::create_dir_all(dir)?;
    let mut files = Vec::new();
    let mut md = String::new();
    let _ = writeln!(md, "# ttcp report\n");
    let _ = writeln!(md, "Command: `{command}`  ");
    let _ = writeln!(
        md,
        "Machine: {cpus} CPUs available; ratios are Peregrine / raw from the same run.\n"
    );
    wire_sizes(&mut md);
    let suites = ["throughput", "latency", "payload", "demux", "connections"];
    for suite in suites {
        let rs: Vec<&Record> = records.iter().filter(|r| r.suite == suite).collect();
        if rs.is_empty() {
            continue;
        }
        let _ = writeln!(md, "## {suite}\n");
        let _ = writeln!(md, "```text{}```\n", table::render(suite, records));
        match suite {
            "throughput" => {
                for ty in DataType::ALL {
                    let of: Vec<&Record> = rs
                        .iter()
                        .copied()
                        .filter(|r| r.ty == Some(ty.name()))
                        .collect();
                    let series = group(
                        &of,
                        |_| String::new(),
                        |r| r.orb.to_string(),
                        |r| Some((r.buffer? as f64, r.mbps?)),
                    );
                    if series.is_empty() {
                        continue;
                    }
                    let name = format!("throughput_{}.svg", ty.name());
                    line_chart(
                        &dir.join(&name),
                        &format!("Throughput, sequence of {}", ty.name()),
                        "buffer size (bytes)",
                        "Mbit/s",
                        &series,
                    )?;
                    let _ = writeln!(md, "![throughput {0}]({name})\n", ty.name());
                    files.push(name);
                }
            }
            "latency" => {
                let tw: Vec<&Record> = rs
                    .iter()
                    .copied()
                    .filter(|r| r.op == Some("twoway"))
                    .collect();
                let series = group(
                    &tw,
                    |r| r.order.unwrap_or("").to_string(),
                    |r| format!("{} {}", r.orb, r.order.unwrap_or("")),
                    |r| Some((r.objects? as f64, r.p50_us?)),
                );
                if !series.is_empty() {
                    let name = "latency_objects.svg".to_string();
                    line_chart(
                        &dir.join(&name),
                        "Twoway latency vs number of objects (p50)",
                        "objects in the server",
                        "microseconds per call",
                        &series,
                    )?;
                    let _ = writeln!(md, "![latency vs objects]({name})\n");
                    files.push(name);
                }
            }
            "payload" => {
                let series = group(
                    &rs,
                    |r| r.ty.unwrap_or("").to_string(),
                    |r| format!("{} {}", r.orb, r.ty.unwrap_or("")),
                    |r| Some((r.units? as f64, r.p50_us?)),
                );
                if !series.is_empty() {
                    let name = "latency_units.svg".to_string();
                    line_chart(
                        &dir.join(&name),
                        "Twoway latency vs sequence length (p50)",
                        "units per call",
                        "microseconds per call",
                        &series,
                    )?;
                    let _ = writeln!(md, "![latency vs units]({name})\n");
                    files.push(name);
                }
            }
            "connections" => {
                let active: Vec<&Record> = rs
                    .iter()
                    .copied()
                    .filter(|r| r.phase == Some("active"))
                    .collect();
                let series = group(
                    &active,
                    |_| String::new(),
                    |r| r.orb.to_string(),
                    |r| Some((r.connections? as f64, r.calls_per_s?)),
                );
                if !series.is_empty() {
                    let name = "connections_calls.svg".to_string();
                    line_chart(
                        &dir.join(&name),
                        "Twoway calls/s of all connections together",
                        "client connections",
                        "calls per second",
                        &series,
                    )?;
                    let _ = writeln!(md, "![calls/s vs connections]({name})\n");
                    files.push(name);
                }
            }
            _ => {}
        }
    }
    fs::write(dir.join("report.md"), md)?;
    files.push("report.md".into());
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_an_svg() {
        let dir = std::env::temp_dir().join(format!("ttcp-report-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("c.svg");
        let s = Series {
            name: "raw".into(),
            points: vec![(1024.0, 100.0), (2048.0, 180.0)],
            baseline: true,
            color_key: String::new(),
        };
        line_chart(&p, "t", "x", "y", &[s]).unwrap();
        let text = fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("<svg") && text.contains("raw"));
        line_chart(&p, "empty", "x", "y", &[]).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }
}
