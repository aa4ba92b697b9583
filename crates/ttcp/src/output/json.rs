//! `--json FILE|-`: one JSON object per measurement, one per line, with
//! the fields of BENCHMARKS.md.

use std::fs::File;
use std::io::{self, BufWriter, Write};

use crate::record::Record;

/// A JSON lines writer.
pub struct JsonSink {
    out: Box<dyn Write>,
    stdout: bool,
}

impl JsonSink {
    /// Opens `path` (`-` for stdout), truncating a file.
    pub fn open(path: &str) -> io::Result<JsonSink> {
        if path == "-" {
            Ok(JsonSink {
                out: Box::new(io::stdout()),
                stdout: true,
            })
        } else {
            Ok(JsonSink {
                out: Box::new(BufWriter::new(File::create(path)?)),
                stdout: false,
            })
        }
    }

    /// True when writing to stdout.
    pub fn is_stdout(&self) -> bool {
        self.stdout
    }

    /// Writes one record as a line.
    pub fn write(&mut self, r: &Record) -> io::Result<()> {
        let line = line(r);
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        if self.stdout {
            self.out.flush()?;
        }
        Ok(())
    }

    /// Flushes buffered lines.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The JSON text of a record (no newline).
pub fn line(r: &Record) -> String {
    serde_json::to_string(r).expect("records serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_have_the_contract_fields_in_order() {
        let r = Record {
            suite: "throughput",
            orb: "peregrine",
            ty: Some("double"),
            buffer: Some(65536),
            total: Some(268435456),
            seconds: Some(0.41),
            mbps: Some(5237.1),
            lost: Some(0),
            ..Record::default()
        };
        assert_eq!(
            line(&r),
            r#"{"suite":"throughput","orb":"peregrine","type":"double","buffer":65536,"total":268435456,"seconds":0.41,"mbps":5237.1,"lost":0}"#
        );
        let r = Record {
            suite: "latency",
            orb: "peregrine",
            objects: Some(1000),
            order: Some("round-robin"),
            op: Some("twoway"),
            pin: Some("same"),
            calls: Some(20000),
            mean_us: Some(21.3),
            p50_us: Some(20.9),
            p99_us: Some(35.0),
            ..Record::default()
        };
        assert_eq!(
            line(&r),
            r#"{"suite":"latency","orb":"peregrine","objects":1000,"order":"round-robin","op":"twoway","pin":"same","calls":20000,"mean_us":21.3,"p50_us":20.9,"p99_us":35.0}"#
        );
        let r = Record {
            suite: "demux",
            orb: "peregrine",
            skipped: Some("why".into()),
            ..Record::default()
        };
        assert_eq!(
            line(&r),
            r#"{"suite":"demux","orb":"peregrine","skipped":"why"}"#
        );
    }
}
