//! Diagnostics (errors and warnings) and their rustc-style rendering.

use crate::source::{SourceMap, Span};
use std::fmt::Write as _;

/// How serious a diagnostic is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Compilation cannot succeed.
    Error,
    /// Suspicious but accepted.
    Warning,
}

/// Which stage / rule produced a diagnostic, for tools that branch on it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DiagKind {
    /// Malformed token (bad literal, stray character, ...).
    Lex,
    /// Preprocessor directive problem (`#if`, `#define`, `#error`, ...).
    Preprocess,
    /// `#include` could not be resolved or is cyclic.
    Include,
    /// Grammar violation.
    Syntax,
    /// A name could not be resolved.
    Undefined,
    /// A name is defined twice (or differs only in case).
    Redefinition,
    /// A name resolves to several definitions.
    Ambiguous,
    /// A type is used where it is not allowed.
    Type,
    /// Constant expression error (overflow, division by zero, ...).
    Const,
    /// Union discriminator or label error.
    Union,
    /// Operation / attribute rule violation.
    Operation,
    /// Feature recognized but not supported.
    Unsupported,
    /// Accepted here, but rejected or deprecated by other IDL compilers,
    /// or renamed by another language mapping (a warning).
    Portability,
    /// Resource limit hit (nesting depth, include depth, ...).
    Limit,
    /// Anything else.
    Other,
}

/// A secondary message attached to a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// Where the note points to, if anywhere.
    pub span: Option<Span>,
    /// The note text.
    pub message: String,
}

/// An error or warning with a primary source location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The rule that produced it.
    pub kind: DiagKind,
    /// Main message.
    pub message: String,
    /// Primary location.
    pub span: Option<Span>,
    /// Label printed under the primary location.
    pub label: String,
    /// Additional notes (include stack, previous definitions, ...).
    pub notes: Vec<Note>,
    /// A suggested fix ("did you mean `Account`?"), printed last as
    /// `= help:`.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A new error.
    pub fn error(kind: DiagKind, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            kind,
            message: message.into(),
            span: Some(span),
            label: String::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    /// A new error with no source location (e.g. an input file that
    /// cannot be read): rendered without a snippet.
    pub fn error_without_span(kind: DiagKind, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span: None,
            ..Diagnostic::error(kind, Span::default(), message)
        }
    }

    /// A new warning.
    pub fn warning(kind: DiagKind, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(kind, span, message)
        }
    }

    /// Sets the label under the primary span.
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    /// Adds a note pointing at `span`.
    pub fn with_note(mut self, span: Option<Span>, message: impl Into<String>) -> Diagnostic {
        self.notes.push(Note {
            span,
            message: message.into(),
        });
        self
    }

    /// Sets the help line (a suggested fix).
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `(file, line, column)` of the primary span.
    pub fn location(&self, sources: &SourceMap) -> Option<(String, usize, usize)> {
        self.span.map(|s| sources.location(s))
    }

    /// Renders the diagnostic rustc-style, with a source snippet and the
    /// include stack as notes.
    pub fn render(&self, sources: &SourceMap) -> String {
        let mut out = String::new();
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let _ = writeln!(out, "{sev}: {}", self.message);
        // `= note:` lines line up with the snippet's `|` gutter, which is
        // as wide as the line number (as rustc does).
        let mut gutter = 1;
        if let Some(span) = self.span {
            gutter = render_snippet(&mut out, sources, span, &self.label);
        }
        let pad = " ".repeat(gutter);
        if let Some(span) = self.span {
            for inc in sources.include_stack(span.file) {
                let (f, l, c) = sources.location(inc);
                let _ = writeln!(out, "{pad} = note: included from {f}:{l}:{c}");
            }
        }
        for n in &self.notes {
            match n.span {
                Some(s) => {
                    let (f, l, c) = sources.location(s);
                    let _ = writeln!(out, "{pad} = note: {} (at {f}:{l}:{c})", n.message);
                }
                None => {
                    let _ = writeln!(out, "{pad} = note: {}", n.message);
                }
            }
        }
        if let Some(h) = &self.help {
            let _ = writeln!(out, "{pad} = help: {h}");
        }
        out
    }
}

/// Writes the `-->` line and the snippet; returns the gutter width.
fn render_snippet(out: &mut String, sources: &SourceMap, span: Span, label: &str) -> usize {
    let Some(file) = sources.get(span.file) else {
        return 1;
    };
    let (line, col) = file.line_col(span.start as usize);
    let (end_line, end_col) = file.line_col(span.end as usize);
    let text = file.line_text(line);
    let num = line.to_string();
    let pad = " ".repeat(num.len());
    let _ = writeln!(out, "{pad}--> {}:{line}:{col}", file.name);
    let _ = writeln!(out, "{pad} |");
    let _ = writeln!(out, "{num} | {text}");
    let width = if end_line == line && end_col > col {
        end_col - col
    } else {
        1
    };
    let lead: String = text
        .chars()
        .take(col.saturating_sub(1))
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let sep = if label.is_empty() { "" } else { " " };
    let _ = writeln!(out, "{pad} | {lead}{}{sep}{label}", "^".repeat(width));
    num.len()
}

/// Renders many diagnostics, separated by blank lines.
pub fn render_all(diags: &[Diagnostic], sources: &SourceMap) -> String {
    diags
        .iter()
        .map(|d| d.render(sources))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_rustc_style() {
        let mut m = SourceMap::new();
        let f = m.add(
            "t.idl",
            "t.idl".into(),
            "module M {\n  foo bar;\n};\n".into(),
            None,
        );
        let d = Diagnostic::error(
            DiagKind::Undefined,
            Span::new(f, 13, 16),
            "undefined name `foo`",
        )
        .with_label("not found");
        let r = d.render(&m);
        assert_eq!(
            r,
            "error: undefined name `foo`\n --> t.idl:2:3\n  |\n2 |   foo bar;\n  |   ^^^ not found\n"
        );
    }

    #[test]
    fn renders_help_last_and_no_snippet_without_span() {
        let mut m = SourceMap::new();
        let f = m.add("t.idl", "t.idl".into(), "Acount a;\n".into(), None);
        let d = Diagnostic::error(DiagKind::Undefined, Span::new(f, 0, 6), "undefined name")
            .with_note(None, "a note")
            .with_help("did you mean `Account`?");
        let r = d.render(&m);
        assert!(
            r.ends_with("  = note: a note\n  = help: did you mean `Account`?\n"),
            "{r}"
        );
        // A two-digit line number widens the gutter, and the notes with it.
        let text = format!("{}Acount a;\n", "\n".repeat(11));
        let f = m.add("u.idl", "u.idl".into(), text.into(), None);
        let d = Diagnostic::error(DiagKind::Undefined, Span::new(f, 11, 17), "undefined name")
            .with_note(None, "a note")
            .with_help("did you mean `Account`?");
        assert_eq!(
            d.render(&m),
            "error: undefined name\n  --> u.idl:12:1\n   |\n12 | Acount a;\n   | ^^^^^^\n   \
             = note: a note\n   = help: did you mean `Account`?\n"
        );
        let d = Diagnostic::error_without_span(DiagKind::Include, "cannot read x.idl: gone");
        assert_eq!(d.render(&m), "error: cannot read x.idl: gone\n");
    }
}
