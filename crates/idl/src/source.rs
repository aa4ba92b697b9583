//! Source files, spans and line/column mapping.
//!
//! Every time a file is entered (the main file or an `#include`), a new
//! [`FileId`] is allocated, recording the span of the `#include` directive
//! that pulled it in, so diagnostics can show the include stack.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Identifies one inclusion of a source file in a [`SourceMap`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// The file the range lies in.
    pub file: FileId,
    /// Byte offset of the first byte.
    pub start: u32,
    /// Byte offset one past the last byte.
    pub end: u32,
}

impl Span {
    /// Creates a span.
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end.max(start) as u32,
        }
    }

    /// The smallest span covering `self` and `other` (if in the same file).
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// One inclusion of a source file.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The name shown in diagnostics (the path as given or found).
    pub name: String,
    /// The resolved path used to read the file.
    pub path: PathBuf,
    /// The file contents.
    pub text: Rc<str>,
    /// Byte offsets of line starts.
    line_starts: Vec<usize>,
    /// The `#include` directive that included this file, if any.
    pub included_from: Option<Span>,
}

impl SourceFile {
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts[line];
        let col = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(offset - start);
        (line + 1, col + 1)
    }

    /// The text of 1-based line `line`, without its line terminator.
    pub fn line_text(&self, line: usize) -> &str {
        if line == 0 || line > self.line_starts.len() {
            return "";
        }
        let start = self.line_starts[line - 1];
        let end = self
            .line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len());
        self.text
            .get(start..end)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r'])
    }
}

/// All files read during one front-end run.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// Creates an empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file inclusion and returns its id.
    pub fn add(
        &mut self,
        name: impl Into<String>,
        path: PathBuf,
        text: Rc<str>,
        included_from: Option<Span>,
    ) -> FileId {
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        let id = FileId(self.files.len() as u32);
        self.files.push(SourceFile {
            name: name.into(),
            path,
            text,
            line_starts,
            included_from,
        });
        id
    }

    /// The file with the given id, if any.
    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// Number of file inclusions recorded.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// True if no file was recorded.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// `(file name, line, column)` of the start of a span.
    pub fn location(&self, span: Span) -> (String, usize, usize) {
        match self.get(span.file) {
            Some(f) => {
                let (l, c) = f.line_col(span.start as usize);
                (f.name.clone(), l, c)
            }
            None => ("<unknown>".to_string(), 0, 0),
        }
    }

    /// The source text covered by a span.
    pub fn snippet(&self, span: Span) -> &str {
        self.get(span.file)
            .and_then(|f| f.text.get(span.start as usize..span.end as usize))
            .unwrap_or("")
    }

    /// The chain of `#include` directive spans leading to `file`,
    /// innermost first.
    pub fn include_stack(&self, file: FileId) -> Vec<Span> {
        let mut out = Vec::new();
        let mut cur = file;
        while let Some(sp) = self.get(cur).and_then(|f| f.included_from) {
            if out.len() > 1000 {
                break;
            }
            out.push(sp);
            cur = sp.file;
        }
        out
    }
}

/// Reads source files; implemented for the real file system and for
/// in-memory sources used by tests and fuzzing.
pub trait FileLoader {
    /// Reads the whole file at `path` as UTF-8 text.
    fn read(&self, path: &Path) -> io::Result<String>;
    /// True if a file exists at `path`.
    fn exists(&self, path: &Path) -> bool;
}

/// A [`FileLoader`] reading the real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct FsLoader;

impl FileLoader for FsLoader {
    fn read(&self, path: &Path) -> io::Result<String> {
        let bytes = std::fs::read(path)?;
        Ok(String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }
    fn exists(&self, path: &Path) -> bool {
        path.is_file()
    }
}

/// A [`FileLoader`] serving files from memory.
#[derive(Debug, Clone, Default)]
pub struct MemLoader {
    files: HashMap<PathBuf, String>,
}

impl MemLoader {
    /// Creates an empty in-memory file set.
    pub fn new() -> MemLoader {
        MemLoader::default()
    }

    /// Adds (or replaces) a file.
    pub fn add(&mut self, path: impl Into<PathBuf>, text: impl Into<String>) -> &mut Self {
        self.files.insert(normalize(&path.into()), text.into());
        self
    }

    /// Builder-style [`MemLoader::add`].
    pub fn with(mut self, path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        self.add(path, text);
        self
    }
}

impl FileLoader for MemLoader {
    fn read(&self, path: &Path) -> io::Result<String> {
        self.files
            .get(&normalize(path))
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file"))
    }
    fn exists(&self, path: &Path) -> bool {
        self.files.contains_key(&normalize(path))
    }
}

/// Lexically normalizes a path (removes `.` and resolves `..` where possible).
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                _ => out.push(c),
            },
            _ => out.push(c),
        }
    }
    out.iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_mapping() {
        let mut m = SourceMap::new();
        let id = m.add("a.idl", "a.idl".into(), "ab\ncd\n\nxyz".into(), None);
        let f = m.get(id).unwrap();
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(4), (2, 2));
        assert_eq!(f.line_col(7), (4, 1));
        assert_eq!(f.line_text(2), "cd");
        assert_eq!(f.line_text(3), "");
        assert_eq!(m.location(Span::new(id, 8, 9)), ("a.idl".into(), 4, 2));
    }

    #[test]
    fn normalize_paths() {
        assert_eq!(normalize(Path::new("a/./b/../c")), PathBuf::from("a/c"));
        let l = MemLoader::new().with("x/y.idl", "t");
        assert!(l.exists(Path::new("x/../x/y.idl")));
    }
}
