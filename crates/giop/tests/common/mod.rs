//! Shared by the golden-vector tests: a small JSON reader for the
//! fixtures' MANIFEST.json (trusted input; numbers kept as text so 64-bit
//! integers keep every digit), hex helpers and the fixtures' location.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(BTreeMap<String, Json>),
}

impl Json {
    pub fn get(&self, k: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.get(k),
            _ => None,
        }
    }
    pub fn at(&self, k: &str) -> &Json {
        self.get(k)
            .unwrap_or_else(|| panic!("manifest entry lacks {k:?}: {self:?}"))
    }
    pub fn str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            _ => panic!("not a string: {self:?}"),
        }
    }
    pub fn num<T: std::str::FromStr>(&self) -> T {
        match self {
            Json::Num(n) => n
                .parse()
                .unwrap_or_else(|_| panic!("number {n} does not fit")),
            _ => panic!("not a number: {self:?}"),
        }
    }
    pub fn bool(&self) -> bool {
        match self {
            Json::Bool(b) => *b,
            _ => panic!("not a bool: {self:?}"),
        }
    }
    /// An unsigned integer (the manifest's ports, tags, lengths).
    pub fn u64(&self) -> u64 {
        self.num()
    }
    pub fn arr(&self) -> &[Json] {
        match self {
            Json::Arr(a) => a,
            _ => panic!("not an array: {self:?}"),
        }
    }
}

pub fn parse_json(text: &str) -> Json {
    let mut p = JsonParser {
        s: text.as_bytes(),
        i: 0,
    };
    p.value()
}

struct JsonParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl JsonParser<'_> {
    fn ws(&mut self) {
        while self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s[self.i] == c {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn value(&mut self) -> Json {
        self.ws();
        match self.s[self.i] {
            b'{' => {
                self.i += 1;
                let mut m = BTreeMap::new();
                while !self.eat(b'}') {
                    let Json::Str(k) = self.value() else {
                        panic!("object key")
                    };
                    assert!(self.eat(b':'));
                    m.insert(k, self.value());
                    self.eat(b',');
                }
                Json::Obj(m)
            }
            b'[' => {
                self.i += 1;
                let mut a = Vec::new();
                while !self.eat(b']') {
                    a.push(self.value());
                    self.eat(b',');
                }
                Json::Arr(a)
            }
            b'"' => {
                self.i += 1;
                let mut units: Vec<u16> = Vec::new();
                let mut out = String::new();
                loop {
                    let c = self.s[self.i];
                    self.i += 1;
                    match c {
                        b'"' => break,
                        b'\\' => {
                            let e = self.s[self.i];
                            self.i += 1;
                            let ch = match e {
                                b'n' => '\n',
                                b't' => '\t',
                                b'r' => '\r',
                                b'b' => '\u{8}',
                                b'f' => '\u{c}',
                                b'u' => {
                                    let h =
                                        std::str::from_utf8(&self.s[self.i..self.i + 4]).unwrap();
                                    self.i += 4;
                                    units.push(u16::from_str_radix(h, 16).unwrap());
                                    continue;
                                }
                                other => other as char,
                            };
                            flush_units(&mut units, &mut out);
                            out.push(ch);
                        }
                        _ => {
                            flush_units(&mut units, &mut out);
                            let start = self.i - 1;
                            let mut end = self.i;
                            while (self.s[end] & 0xC0) == 0x80 {
                                end += 1;
                            }
                            out.push_str(std::str::from_utf8(&self.s[start..end]).unwrap());
                            self.i = end;
                        }
                    }
                }
                flush_units(&mut units, &mut out);
                Json::Str(out)
            }
            b't' => {
                self.i += 4;
                Json::Bool(true)
            }
            b'f' => {
                self.i += 5;
                Json::Bool(false)
            }
            b'n' => {
                self.i += 4;
                Json::Null
            }
            _ => {
                let start = self.i;
                while matches!(
                    self.s[self.i],
                    b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                ) {
                    self.i += 1;
                }
                Json::Num(String::from_utf8(self.s[start..self.i].to_vec()).unwrap())
            }
        }
    }
}

fn flush_units(units: &mut Vec<u16>, out: &mut String) {
    out.extend(char::decode_utf16(units.drain(..)).map(|c| c.unwrap_or('\u{fffd}')));
}

/// SHA-256 of `data`, lowercase hex (the manifest's body digests).
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// `fixtures/omniorb` at the top of the repository.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/omniorb")
}

/// The parsed MANIFEST.json; a missing one fails with the way to make it.
pub fn manifest() -> Json {
    let path = fixtures_dir().join("MANIFEST.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "golden fixtures missing: cannot read {} ({e}); \
             generate them with fixtures/omniorb/regen.sh",
            path.display()
        )
    });
    parse_json(&text)
}
