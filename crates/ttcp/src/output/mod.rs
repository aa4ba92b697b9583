//! Where measurements go: JSON lines, tables on stdout, a progress bar on
//! stderr, and (at the end) the Markdown/SVG report.

pub mod json;
pub mod report;
pub mod table;

use std::io::{self, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::record::Record;

/// The sinks of a run.
pub struct Output {
    json: Option<json::JsonSink>,
    /// Every record so far.
    pub records: Vec<Record>,
    bar: ProgressBar,
    tables_to_stderr: bool,
    /// Errors that stopped an ORB (the run exits non-zero).
    pub failures: Vec<String>,
}

impl Output {
    /// Sinks for `--json` (a path or `-`).
    pub fn new(json: Option<&str>) -> io::Result<Output> {
        let json = json.map(json::JsonSink::open).transpose()?;
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        Ok(Output {
            tables_to_stderr: json.as_ref().is_some_and(|j| j.is_stdout()),
            json,
            records: Vec::new(),
            bar,
            failures: Vec::new(),
        })
    }

    /// Adds `n` points to the progress bar's length.
    pub fn add_points(&self, n: u64) {
        self.bar.inc_length(n);
    }

    /// Shows what runs now.
    pub fn status(&self, msg: &str) {
        self.bar.set_message(msg.to_string());
    }

    /// Marks the start of a suite.
    pub fn begin_suite(&self, name: &str) {
        self.status(name);
    }

    /// One point finished.
    pub fn point_done(&self) {
        self.bar.inc(1);
    }

    /// Writes `r` as a JSON line (if asked) and keeps it.
    pub fn record(&mut self, r: Record) -> io::Result<()> {
        if let Some(j) = &mut self.json {
            j.write(&r)?;
        }
        self.records.push(r);
        Ok(())
    }

    /// Prints the table of `suite` (stdout, or stderr when JSON goes to
    /// stdout).
    pub fn print_table(&self, suite: &str) {
        let text = table::render(suite, &self.records);
        let to_stderr = self.tables_to_stderr;
        self.bar.suspend(|| {
            if to_stderr {
                let _ = io::stderr().write_all(text.as_bytes());
            } else {
                let mut o = io::stdout().lock();
                let _ = o.write_all(text.as_bytes());
                let _ = o.flush();
            }
        });
    }

    /// Prints a line where the tables go.
    pub fn note(&self, text: &str) {
        let to_stderr = self.tables_to_stderr;
        self.bar.suspend(|| {
            if to_stderr {
                eprintln!("{text}");
            } else {
                println!("{text}");
            }
        });
    }

    /// Clears the progress bar and flushes the JSON.
    pub fn finish(&mut self) -> io::Result<()> {
        self.bar.finish_and_clear();
        if let Some(j) = &mut self.json {
            j.flush()?;
        }
        Ok(())
    }
}
