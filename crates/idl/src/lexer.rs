//! Tokenizer for OMG IDL (and for preprocessor directive bodies).
//!
//! The lexer is pull-based: the preprocessor asks for the next item, which
//! is either a token, a directive line, or end of file. In skipped
//! conditional regions the preprocessor calls [`Lexer::skip_to_directive`]
//! so that text in dead branches is never tokenized.

use crate::diagnostic::{DiagKind, Diagnostic};
use crate::source::{FileId, Span};

/// Punctuation tokens.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Punct {
    /// `;`
    Semi,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `:`
    Colon,
    /// `::`
    ColonColon,
    /// `,`
    Comma,
    /// `=`
    Eq,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `~`
    Tilde,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `|`
    Pipe,
    /// `^`
    Caret,
    /// `&`
    Amp,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `!` (preprocessor expressions only)
    Bang,
    /// `&&` (preprocessor expressions only)
    AndAnd,
    /// `||` (preprocessor expressions only)
    OrOr,
    /// `==` (preprocessor expressions only)
    EqEq,
    /// `!=` (preprocessor expressions only)
    Ne,
    /// `<=` (preprocessor expressions only)
    Le,
    /// `>=` (preprocessor expressions only)
    Ge,
    /// `?` (preprocessor expressions only)
    Question,
    /// `#` (stringize in macro bodies)
    Hash,
    /// `##` (token pasting in macro bodies)
    HashHash,
}

impl Punct {
    /// The source spelling.
    pub fn as_str(self) -> &'static str {
        use Punct::*;
        match self {
            Semi => ";",
            LBrace => "{",
            RBrace => "}",
            Colon => ":",
            ColonColon => "::",
            Comma => ",",
            Eq => "=",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Tilde => "~",
            LParen => "(",
            RParen => ")",
            Lt => "<",
            Gt => ">",
            LBracket => "[",
            RBracket => "]",
            Pipe => "|",
            Caret => "^",
            Amp => "&",
            Shl => "<<",
            Shr => ">>",
            Bang => "!",
            AndAnd => "&&",
            OrOr => "||",
            EqEq => "==",
            Ne => "!=",
            Le => "<=",
            Ge => ">=",
            Question => "?",
            Hash => "#",
            HashHash => "##",
        }
    }
}

/// A `#pragma` recognized by the preprocessor and passed on to the parser.
#[derive(Clone, Debug, PartialEq)]
pub enum Pragma {
    /// `#pragma prefix "p"`
    Prefix(String),
    /// `#pragma ID name "id"`
    Id {
        /// The (possibly scoped) name, e.g. `M::I`.
        name: String,
        /// The repository id.
        id: String,
    },
    /// `#pragma version name major.minor`
    Version {
        /// The (possibly scoped) name.
        name: String,
        /// Major version.
        major: u16,
        /// Minor version.
        minor: u16,
    },
}

/// Token kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Identifier (keywords are identifiers too; the parser decides).
    Ident {
        /// The name, without a leading escape underscore.
        name: String,
        /// True if written with a leading `_`.
        escaped: bool,
    },
    /// Integer literal.
    Int(u128),
    /// Floating-point literal.
    Float(f64),
    /// Fixed-point literal, digits with optional `.`, without the `d`.
    Fixed(String),
    /// Character literal.
    Char(u32),
    /// Wide character literal.
    WChar(u32),
    /// String literal.
    Str(String),
    /// Wide string literal.
    WStr(String),
    /// Punctuation.
    Punct(Punct),
    /// A pragma carried to the parser.
    Pragma(Pragma),
    /// Start of an included file's tokens.
    FileEnter,
    /// End of an included file's tokens.
    FileExit,
    /// End of input.
    Eof,
}

/// A token with its location and preceding doc comment.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What the token is.
    pub tok: Tok,
    /// Where it is.
    pub span: Span,
    /// Comment text immediately preceding the token, if any.
    pub doc: Option<String>,
}

impl Token {
    /// True if this is the given punctuation.
    pub fn is(&self, p: Punct) -> bool {
        self.tok == Tok::Punct(p)
    }
}

/// A preprocessor directive line.
#[derive(Clone, Debug)]
pub struct Directive {
    /// Span of the whole directive line.
    pub span: Span,
    /// Directive name (`include`, `define`, ...); empty for a null directive.
    pub name: String,
    /// Span of the name.
    pub name_span: Span,
    /// The rest of the logical line, with comments and continuations
    /// replaced by spaces so byte offsets are preserved.
    pub rest: String,
    /// Byte offset of `rest` in the file.
    pub rest_start: usize,
}

/// One item produced by [`Lexer::next_item`].
#[derive(Clone, Debug)]
pub enum Lexed {
    /// An ordinary token.
    Token(Token),
    /// A directive line.
    Directive(Directive),
    /// End of file.
    Eof(Span),
}

/// The IDL tokenizer.
pub struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    base: usize,
    file: FileId,
    /// Only whitespace seen since the last newline.
    line_start: bool,
    directives: bool,
    doc: Vec<String>,
    /// Line number (count of newlines) at which the last token ended.
    last_tok_line: usize,
    line: usize,
    newlines_since_comment: usize,
    /// Diagnostics produced while lexing.
    pub diags: Vec<Diagnostic>,
}

impl<'a> Lexer<'a> {
    /// A lexer over a whole file (recognizes directives).
    pub fn new(src: &'a str, file: FileId) -> Lexer<'a> {
        Lexer {
            src,
            bytes: src.as_bytes(),
            pos: 0,
            base: 0,
            file,
            line_start: true,
            directives: true,
            doc: Vec::new(),
            last_tok_line: usize::MAX,
            line: 0,
            newlines_since_comment: 0,
            diags: Vec::new(),
        }
    }

    /// A lexer over a fragment (directive body) starting at byte `base`
    /// of `file`; does not recognize directives.
    pub fn fragment(src: &'a str, file: FileId, base: usize) -> Lexer<'a> {
        Lexer {
            base,
            directives: false,
            line_start: false,
            ..Lexer::new(src, file)
        }
    }

    /// Tokenizes a whole fragment.
    pub fn tokenize_fragment(
        src: &str,
        file: FileId,
        base: usize,
    ) -> (Vec<Token>, Vec<Diagnostic>) {
        let mut lx = Lexer::fragment(src, file, base);
        let mut out = Vec::new();
        loop {
            match lx.next_item() {
                Lexed::Token(t) => out.push(t),
                Lexed::Directive(_) => {}
                Lexed::Eof(_) => break,
            }
        }
        (out, lx.diags)
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, self.base + start, self.base + end)
    }

    fn peek(&self) -> u8 {
        self.bytes.get(self.pos).copied().unwrap_or(0)
    }

    fn peek_at(&self, n: usize) -> u8 {
        self.bytes.get(self.pos + n).copied().unwrap_or(0)
    }

    fn err(&mut self, start: usize, end: usize, msg: impl Into<String>) {
        let sp = self.span(start, end);
        self.diags.push(Diagnostic::error(DiagKind::Lex, sp, msg));
    }

    /// Skips whitespace and comments, collecting doc comments.
    fn skip_trivia(&mut self) {
        loop {
            let c = self.peek();
            match c {
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = true;
                    self.newlines_since_comment += 1;
                    if self.newlines_since_comment >= 2 {
                        self.doc.clear();
                    }
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'\\' if self.peek_at(1) == b'\n' => {
                    self.pos += 2;
                    self.line += 1;
                }
                b'\\' if self.peek_at(1) == b'\r' && self.peek_at(2) == b'\n' => {
                    self.pos += 3;
                    self.line += 1;
                }
                b'/' if self.peek_at(1) == b'/' => {
                    let start = self.pos;
                    while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                    let text = &self.src[start..self.pos];
                    self.add_comment(text, self.line);
                }
                b'/' if self.peek_at(1) == b'*' => {
                    let start = self.pos;
                    let start_line = self.line;
                    self.pos += 2;
                    loop {
                        if self.pos >= self.bytes.len() {
                            self.err(start, start + 2, "unterminated comment");
                            break;
                        }
                        if self.bytes[self.pos] == b'*' && self.peek_at(1) == b'/' {
                            self.pos += 2;
                            break;
                        }
                        if self.bytes[self.pos] == b'\n' {
                            self.line += 1;
                        }
                        self.pos += 1;
                    }
                    let text = &self.src[start..self.pos];
                    self.add_comment(text, start_line);
                }
                _ => return,
            }
        }
    }

    fn add_comment(&mut self, text: &str, start_line: usize) {
        if start_line == self.last_tok_line {
            // Trailing comment of the previous line: not a doc comment.
            return;
        }
        self.newlines_since_comment = 0;
        self.doc.push(comment_text(text));
    }

    fn take_doc(&mut self) -> Option<String> {
        if self.doc.is_empty() {
            return None;
        }
        let d = std::mem::take(&mut self.doc).join("\n");
        let d = d.trim_matches('\n').to_string();
        if d.is_empty() {
            None
        } else {
            Some(d)
        }
    }

    /// In a skipped conditional region: advances to the start of the next
    /// line whose first non-blank character is `#` (or to end of file).
    pub fn skip_to_directive(&mut self) {
        self.doc.clear();
        loop {
            // at start of a line (or mid-line after a directive was handled)
            let mut p = self.pos;
            while p < self.bytes.len() && matches!(self.bytes[p], b' ' | b'\t' | b'\r') {
                p += 1;
            }
            if p >= self.bytes.len() {
                self.pos = p;
                return;
            }
            if self.bytes[p] == b'#' && self.line_start {
                self.pos = p;
                return;
            }
            // skip this logical line, but respect comments spanning lines
            while p < self.bytes.len() && self.bytes[p] != b'\n' {
                if self.bytes[p] == b'/' && self.bytes.get(p + 1) == Some(&b'*') {
                    p += 2;
                    while p < self.bytes.len()
                        && !(self.bytes[p] == b'*' && self.bytes.get(p + 1) == Some(&b'/'))
                    {
                        if self.bytes[p] == b'\n' {
                            self.line += 1;
                        }
                        p += 1;
                    }
                    p = (p + 2).min(self.bytes.len());
                    continue;
                }
                if self.bytes[p] == b'/' && self.bytes.get(p + 1) == Some(&b'/') {
                    while p < self.bytes.len() && self.bytes[p] != b'\n' {
                        p += 1;
                    }
                    break;
                }
                if self.bytes[p] == b'\\' && self.bytes.get(p + 1) == Some(&b'\n') {
                    p += 2;
                    self.line += 1;
                    continue;
                }
                p += 1;
            }
            if p < self.bytes.len() {
                p += 1; // newline
                self.line += 1;
            }
            self.pos = p;
            self.line_start = true;
        }
    }

    /// Returns the next token, directive or end of file.
    pub fn next_item(&mut self) -> Lexed {
        loop {
            self.skip_trivia();
            let start = self.pos;
            if start >= self.bytes.len() {
                return Lexed::Eof(self.span(start, start));
            }
            let c = self.bytes[start];
            if c == b'#' && self.directives && self.line_start {
                self.doc.clear();
                return Lexed::Directive(self.directive());
            }
            self.line_start = false;
            let doc = self.take_doc();
            if let Some(tok) = self.token(c) {
                let end = self.pos;
                self.last_tok_line = self.line;
                return Lexed::Token(Token {
                    tok,
                    span: self.span(start, end),
                    doc,
                });
            }
        }
    }

    fn directive(&mut self) -> Directive {
        let hash = self.pos;
        self.pos += 1;
        // rest of logical line
        let mut line = String::new();
        let line_begin = self.pos;
        while self.pos < self.bytes.len() {
            let b = self.bytes[self.pos];
            if b == b'\n' {
                break;
            }
            if b == b'\\' && self.peek_at(1) == b'\n' {
                line.push_str("  ");
                self.pos += 2;
                self.line += 1;
                continue;
            }
            if b == b'\\' && self.peek_at(1) == b'\r' && self.peek_at(2) == b'\n' {
                line.push_str("   ");
                self.pos += 3;
                self.line += 1;
                continue;
            }
            if b == b'/' && self.peek_at(1) == b'/' {
                while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                    line.push(' ');
                    self.pos += 1;
                }
                break;
            }
            if b == b'/' && self.peek_at(1) == b'*' {
                let s = self.pos;
                self.pos += 2;
                line.push_str("  ");
                loop {
                    if self.pos >= self.bytes.len() {
                        self.err(s, s + 2, "unterminated comment");
                        break;
                    }
                    if self.bytes[self.pos] == b'*' && self.peek_at(1) == b'/' {
                        self.pos += 2;
                        line.push_str("  ");
                        break;
                    }
                    if self.bytes[self.pos] == b'\n' {
                        self.line += 1;
                    }
                    line.push(' ');
                    self.pos += 1;
                }
                continue;
            }
            if b == b'"' || b == b'\'' {
                // copy quoted text verbatim
                let q = b;
                let s = self.pos;
                self.pos += 1;
                while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                    let x = self.bytes[self.pos];
                    if x == b'\\' && self.pos + 1 < self.bytes.len() && self.peek_at(1) != b'\n' {
                        self.pos += 2;
                        continue;
                    }
                    self.pos += 1;
                    if x == q {
                        break;
                    }
                }
                line.push_str(&self.src[s..self.pos]);
                continue;
            }
            let ch_len = utf8_len(b);
            let end = (self.pos + ch_len).min(self.bytes.len());
            line.push_str(self.src.get(self.pos..end).unwrap_or(" "));
            self.pos = end;
        }
        let end = self.pos;
        // directive name
        let trimmed = line.trim_start();
        let name_off = line_begin + (line.len() - trimmed.len());
        let name_len = trimmed
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let name = trimmed[..name_len].to_string();
        let rest_rel = (name_off - line_begin) + name_len;
        let rest = line[rest_rel..].to_string();
        Directive {
            span: self.span(hash, end),
            name,
            name_span: self.span(name_off, name_off + name_len),
            rest,
            rest_start: self.base + line_begin + rest_rel,
        }
    }

    fn token(&mut self, c: u8) -> Option<Tok> {
        let start = self.pos;
        if c.is_ascii_alphabetic() || c == b'_' {
            if (c == b'L') && (self.peek_at(1) == b'\'' || self.peek_at(1) == b'"') {
                self.pos += 1;
                let q = self.bytes[self.pos];
                return Some(if q == b'\'' {
                    Tok::WChar(self.char_lit(start, true))
                } else {
                    Tok::WStr(self.string_lit(start, true))
                });
            }
            while self.pos < self.bytes.len()
                && (self.bytes[self.pos].is_ascii_alphanumeric() || self.bytes[self.pos] == b'_')
            {
                self.pos += 1;
            }
            let text = &self.src[start..self.pos];
            if let Some(rest) = text.strip_prefix('_') {
                if rest.is_empty() {
                    self.err(start, self.pos, "`_` alone is not a valid identifier");
                    return None;
                }
                return Some(Tok::Ident {
                    name: rest.to_string(),
                    escaped: true,
                });
            }
            return Some(Tok::Ident {
                name: text.to_string(),
                escaped: false,
            });
        }
        if c.is_ascii_digit() || (c == b'.' && self.peek_at(1).is_ascii_digit()) {
            return self.number(start);
        }
        if c == b'\'' {
            return Some(Tok::Char(self.char_lit(start, false)));
        }
        if c == b'"' {
            return Some(Tok::Str(self.string_lit(start, false)));
        }
        use Punct::*;
        let two = [c, self.peek_at(1)];
        let p2 = match &two {
            b"::" => Some(ColonColon),
            b"<<" => Some(Shl),
            b">>" => Some(Shr),
            b"&&" => Some(AndAnd),
            b"||" => Some(OrOr),
            b"==" => Some(EqEq),
            b"!=" => Some(Ne),
            b"<=" => Some(Le),
            b">=" => Some(Ge),
            b"##" => Some(HashHash),
            _ => None,
        };
        if let Some(p) = p2 {
            self.pos += 2;
            return Some(Tok::Punct(p));
        }
        let p = match c {
            b';' => Semi,
            b'{' => LBrace,
            b'}' => RBrace,
            b':' => Colon,
            b',' => Comma,
            b'=' => Eq,
            b'+' => Plus,
            b'-' => Minus,
            b'*' => Star,
            b'/' => Slash,
            b'%' => Percent,
            b'~' => Tilde,
            b'(' => LParen,
            b')' => RParen,
            b'<' => Lt,
            b'>' => Gt,
            b'[' => LBracket,
            b']' => RBracket,
            b'|' => Pipe,
            b'^' => Caret,
            b'&' => Amp,
            b'!' => Bang,
            b'?' => Question,
            b'#' => Hash,
            _ => {
                let len = utf8_len(c);
                self.pos = (self.pos + len).min(self.bytes.len());
                let ch = self.src.get(start..self.pos).unwrap_or("?").to_string();
                self.err(start, self.pos, format!("unexpected character `{ch}`"));
                return None;
            }
        };
        self.pos += 1;
        Some(Tok::Punct(p))
    }

    fn number(&mut self, start: usize) -> Option<Tok> {
        let b = self.bytes;
        if b[start] == b'0' && matches!(self.peek_at(1), b'x' | b'X') {
            self.pos += 2;
            let ds = self.pos;
            while self.pos < b.len() && b[self.pos].is_ascii_hexdigit() {
                self.pos += 1;
            }
            let digits = &self.src[ds..self.pos];
            self.eat_suffix_garbage(start);
            if digits.is_empty() {
                self.err(start, self.pos, "hexadecimal literal has no digits");
                return Some(Tok::Int(0));
            }
            return Some(Tok::Int(self.parse_int(start, digits, 16)));
        }
        while self.pos < b.len() && b[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        let int_end = self.pos;
        let mut is_float = false;
        if self.peek() == b'.' {
            is_float = true;
            self.pos += 1;
            while self.pos < b.len() && b[self.pos].is_ascii_digit() {
                self.pos += 1;
            }
        }
        if matches!(self.peek(), b'd' | b'D') {
            let text = self.src[start..self.pos].to_string();
            self.pos += 1;
            self.eat_suffix_garbage(start);
            return Some(Tok::Fixed(text));
        }
        if matches!(self.peek(), b'e' | b'E') {
            let save = self.pos;
            self.pos += 1;
            if matches!(self.peek(), b'+' | b'-') {
                self.pos += 1;
            }
            if self.peek().is_ascii_digit() {
                while self.pos < b.len() && b[self.pos].is_ascii_digit() {
                    self.pos += 1;
                }
                is_float = true;
            } else {
                self.pos = save;
                self.pos += 1;
                self.err(
                    start,
                    self.pos,
                    "malformed exponent in floating-point literal",
                );
                return Some(Tok::Float(0.0));
            }
        }
        let text = &self.src[start..self.pos];
        if is_float {
            if matches!(self.peek(), b'f' | b'F' | b'l' | b'L') {
                self.pos += 1;
            }
            self.eat_suffix_garbage(start);
            let v = text.parse::<f64>().unwrap_or(0.0);
            return Some(Tok::Float(v));
        }
        let digits = &self.src[start..int_end];
        // C-style integer suffixes are tolerated (appear in #if lines).
        while matches!(self.peek(), b'u' | b'U' | b'l' | b'L') {
            self.pos += 1;
        }
        self.eat_suffix_garbage(start);
        if digits.len() > 1 && digits.starts_with('0') {
            if let Some(bad) = digits.bytes().position(|d| d > b'7') {
                self.err(
                    start + bad,
                    start + bad + 1,
                    "invalid digit in octal literal",
                );
                return Some(Tok::Int(0));
            }
            return Some(Tok::Int(self.parse_int(start, &digits[1..], 8)));
        }
        Some(Tok::Int(self.parse_int(start, digits, 10)))
    }

    fn eat_suffix_garbage(&mut self, start: usize) {
        let s = self.pos;
        while self.pos < self.bytes.len()
            && (self.bytes[self.pos].is_ascii_alphanumeric() || self.bytes[self.pos] == b'_')
        {
            self.pos += 1;
        }
        if self.pos > s {
            self.err(start, self.pos, "invalid suffix on numeric literal");
        }
    }

    fn parse_int(&mut self, start: usize, digits: &str, radix: u32) -> u128 {
        let mut v: u128 = 0;
        for d in digits.chars() {
            let dv = d.to_digit(radix).unwrap_or(0) as u128;
            match v.checked_mul(radix as u128).and_then(|x| x.checked_add(dv)) {
                Some(n) => v = n,
                None => {
                    self.err(start, self.pos, "integer literal is too large");
                    return 0;
                }
            }
        }
        v
    }

    /// Reads one (possibly escaped) character of a char/string literal.
    fn lit_char(&mut self, wide: bool) -> Option<u32> {
        let b = self.bytes;
        let s = self.pos;
        let c = b[self.pos];
        if c != b'\\' {
            let len = utf8_len(c);
            let end = (self.pos + len).min(b.len());
            let ch = self.src.get(self.pos..end).and_then(|x| x.chars().next());
            self.pos = end;
            return Some(ch.map(|c| c as u32).unwrap_or(0xFFFD));
        }
        self.pos += 1;
        let e = self.peek();
        self.pos += 1;
        let v = match e {
            b'n' => 10,
            b't' => 9,
            b'v' => 11,
            b'b' => 8,
            b'r' => 13,
            b'f' => 12,
            b'a' => 7,
            b'\\' => b'\\' as u32,
            b'?' => b'?' as u32,
            b'\'' => b'\'' as u32,
            b'"' => b'"' as u32,
            b'0'..=b'7' => {
                let mut v = (e - b'0') as u32;
                for _ in 0..2 {
                    let d = self.peek();
                    if (b'0'..=b'7').contains(&d) {
                        v = v * 8 + (d - b'0') as u32;
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                if v > 255 {
                    self.err(s, self.pos, "octal escape out of range");
                }
                v
            }
            b'x' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 && self.peek().is_ascii_hexdigit() {
                    v = v * 16 + (self.peek() as char).to_digit(16).unwrap_or(0);
                    self.pos += 1;
                    n += 1;
                }
                if n == 0 {
                    self.err(s, self.pos, "`\\x` escape without hex digits");
                }
                v
            }
            b'u' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 4 && self.peek().is_ascii_hexdigit() {
                    v = v * 16 + (self.peek() as char).to_digit(16).unwrap_or(0);
                    self.pos += 1;
                    n += 1;
                }
                if n == 0 {
                    self.err(s, self.pos, "`\\u` escape without hex digits");
                }
                if !wide {
                    self.err(s, self.pos, "`\\u` escape is only allowed in wide literals");
                }
                v
            }
            0 | b'\n' => {
                self.pos -= 1;
                self.err(s, self.pos, "incomplete escape sequence");
                return None;
            }
            other => {
                self.pos = self.pos - 1 + utf8_len(other);
                self.err(s, self.pos, "unknown escape sequence");
                other as u32
            }
        };
        Some(v)
    }

    fn char_lit(&mut self, start: usize, wide: bool) -> u32 {
        self.pos += 1; // opening quote
        if self.peek() == b'\'' {
            self.pos += 1;
            self.err(start, self.pos, "empty character literal");
            return 0;
        }
        if self.pos >= self.bytes.len() || self.peek() == b'\n' {
            self.err(start, self.pos, "unterminated character literal");
            return 0;
        }
        let v = self.lit_char(wide).unwrap_or(0);
        if self.peek() != b'\'' {
            // find closing quote on the line
            while self.pos < self.bytes.len() && !matches!(self.peek(), b'\'' | b'\n') {
                self.pos += 1;
            }
            if self.peek() == b'\'' {
                self.pos += 1;
                self.err(
                    start,
                    self.pos,
                    "character literal contains more than one character",
                );
            } else {
                self.err(start, self.pos, "unterminated character literal");
            }
            return v;
        }
        self.pos += 1;
        if !wide && v > 255 {
            self.err(start, self.pos, "character literal does not fit in `char`");
        }
        v
    }

    fn string_lit(&mut self, start: usize, wide: bool) -> String {
        self.pos += 1;
        let mut s = String::new();
        loop {
            if self.pos >= self.bytes.len() || self.peek() == b'\n' {
                self.err(start, self.pos, "unterminated string literal");
                return s;
            }
            if self.peek() == b'"' {
                self.pos += 1;
                return s;
            }
            let cs = self.pos;
            match self.lit_char(wide) {
                Some(0) => self.err(cs, self.pos, "string literal contains a NUL character"),
                Some(v @ 0xD800..=0xDFFF) => self.err(
                    cs,
                    self.pos,
                    format!("`\\u{v:04X}` is a UTF-16 surrogate, not a character: a wide string cannot hold it"),
                ),
                Some(v) => s.push(char::from_u32(v).unwrap_or('\u{FFFD}')),
                None => {}
            }
        }
    }
}

fn utf8_len(b: u8) -> usize {
    match b {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// Extracts the text of a comment (without `//`, `/*`, `*/`, leading `*`).
pub fn comment_text(raw: &str) -> String {
    if let Some(r) = raw.strip_prefix("//") {
        let r = r.trim_start_matches('/');
        return r.strip_prefix(' ').unwrap_or(r).trim_end().to_string();
    }
    let body = raw
        .strip_prefix("/*")
        .unwrap_or(raw)
        .trim_start_matches('*')
        .strip_suffix("*/")
        .unwrap_or(raw.strip_prefix("/*").unwrap_or(raw));
    let body = body.trim_end_matches('*');
    let lines: Vec<String> = body
        .lines()
        .map(|l| {
            let t = l.trim_start();
            let t = t
                .strip_prefix('*')
                .map(|x| x.strip_prefix(' ').unwrap_or(x));
            t.unwrap_or(l.trim_start()).trim_end().to_string()
        })
        .collect();
    let mut s: &[String] = &lines;
    while s.first().is_some_and(|l| l.is_empty()) {
        s = &s[1..];
    }
    while s.last().is_some_and(|l| l.is_empty()) {
        s = &s[..s.len() - 1];
    }
    s.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        let mut lx = Lexer::new(s, FileId(0));
        let mut v = Vec::new();
        loop {
            match lx.next_item() {
                Lexed::Token(t) => v.push(t.tok),
                Lexed::Directive(d) => v.push(Tok::Str(format!("#{}|{}", d.name, d.rest.trim()))),
                Lexed::Eof(_) => break,
            }
        }
        assert!(lx.diags.is_empty(), "{:?}", lx.diags);
        v
    }

    #[test]
    fn numbers() {
        assert_eq!(
            toks("10 010 0x1F 1.5 2e3 12.5d .5"),
            vec![
                Tok::Int(10),
                Tok::Int(8),
                Tok::Int(31),
                Tok::Float(1.5),
                Tok::Float(2000.0),
                Tok::Fixed("12.5".into()),
                Tok::Float(0.5)
            ]
        );
    }

    #[test]
    fn chars_and_strings() {
        assert_eq!(
            toks(r#"'a' '\n' '\x41' '\101' L'\u00e9' "a\tb" L"w""#),
            vec![
                Tok::Char(97),
                Tok::Char(10),
                Tok::Char(65),
                Tok::Char(65),
                Tok::WChar(0xe9),
                Tok::Str("a\tb".into()),
                Tok::WStr("w".into())
            ]
        );
    }

    #[test]
    fn directives_and_continuations() {
        let t = toks("#define X \\\n 1 // c\nX :: _y");
        assert_eq!(t[0], Tok::Str("#define|X    1".into()));
        assert_eq!(
            t[1],
            Tok::Ident {
                name: "X".into(),
                escaped: false
            }
        );
        assert_eq!(t[2], Tok::Punct(Punct::ColonColon));
        assert_eq!(
            t[3],
            Tok::Ident {
                name: "y".into(),
                escaped: true
            }
        );
    }

    #[test]
    fn doc_comments() {
        let src = "// header\n\n/** Doc\n * line 2\n */\nstruct S; // trailing\nlong x;";
        let mut lx = Lexer::new(src, FileId(0));
        let mut docs = Vec::new();
        while let Lexed::Token(t) = lx.next_item() {
            docs.push(t.doc);
        }
        assert_eq!(docs[0].as_deref(), Some("Doc\nline 2"));
        assert_eq!(docs[3], None);
    }

    #[test]
    fn errors_do_not_panic() {
        for s in [
            "'", "\"abc", "'ab'", "0x", "09", "/* x", "@", "'\\", "1e+", "_", "L'",
        ] {
            let mut lx = Lexer::new(s, FileId(0));
            let mut n = 0;
            while !matches!(lx.next_item(), Lexed::Eof(_)) {
                n += 1;
                assert!(n < 100);
            }
            assert!(!lx.diags.is_empty(), "{s}");
        }
    }
}
