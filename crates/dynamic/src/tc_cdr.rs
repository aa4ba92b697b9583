//! TypeCodes on the wire (CORBA 3.x Part 2, 9.3.5.1 "TypeCode").
//!
//! A TypeCode is its `TCKind` as an `unsigned long`, then its parameters:
//! none for the simple kinds; a bound (string, wstring) or digits and
//! scale (fixed) in the stream itself; for every other kind an
//! encapsulation holding the parameter list. The kind `0xffffffff` is an
//! *indirection*: a `long` offset, from the offset itself, back to the
//! `TCKind` of a TypeCode encoded earlier inside the same top-level
//! TypeCode. Indirections express recursion (a struct containing a
//! sequence of itself) and let repeated TypeCodes be sent once.
//!
//! Decoding treats the bytes as hostile. An indirection is accepted only
//! when it lands exactly on the `TCKind` of a TypeCode this decoder has
//! already started: one that is finished (a repeated TypeCode: the shared
//! node is reused, nothing is parsed again) or an enclosing struct, union,
//! exception, valuetype or value box still being decoded (recursion: a
//! placeholder resolved when the enclosing type completes). Forward
//! offsets, offsets into the middle of something, into the indirection
//! itself, or out of range therefore fail with `BAD_TYPECODE`, and no
//! loop can form because no byte is ever parsed twice. Member counts are
//! checked against the bytes left before anything is reserved, nesting is
//! limited, and a member whose values could take zero bytes is rejected
//! (so a small input cannot describe values with an exponential number of
//! nodes).

use std::collections::HashMap;
use std::sync::Arc;

use peregrine_cdr::{CdrError, Reader, Writer};

use crate::error::{bad_tc, DynError, Result};
use crate::kind::TcKind;
use crate::typecode::{label_key, Body, Member, TypeCode, UnionBody, UnionMember, ValueMember};

/// The TCKind value that announces an indirection.
pub const INDIRECTION: u32 = 0xffff_ffff;

/// Deepest nesting of TypeCodes (encapsulations inside encapsulations)
/// that decoding accepts; IDL types in practice nest a handful deep.
pub const MAX_TC_DEPTH: u32 = 32;

/// Writes `tc` (a top-level TypeCode: indirections only point inside it).
pub fn write_typecode(tc: &TypeCode, w: &mut Writer) -> Result<()> {
    // Parameterless kinds (the common case in an `any`) need no context.
    if let Body::Simple = tc.body() {
        w.write_u32(tc.0.kind as u32);
        return Ok(());
    }
    Encoder {
        written: HashMap::new(),
    }
    .enc(tc, w)
}

/// Reads a top-level TypeCode.
pub fn read_typecode(r: &mut Reader<'_>) -> Result<TypeCode> {
    Decoder {
        entries: Vec::new(),
        depth: 0,
    }
    .dec(r, 0)
}

struct Encoder {
    /// Buffer index of the `TCKind` of each complex TypeCode written (or
    /// being written): the target of later indirections.
    written: HashMap<usize, usize>,
}

impl Encoder {
    fn enc(&mut self, tc: &TypeCode, w: &mut Writer) -> Result<()> {
        let tc = if tc.is_recursive_placeholder() {
            tc.resolve()?
        } else {
            tc.clone()
        };
        w.align(4);
        let key = Arc::as_ptr(&tc.0) as usize;
        let complex = tc.0.kind.is_complex();
        if complex {
            if let Some(&at) = self.written.get(&key) {
                w.write_u32(INDIRECTION);
                let here = w.len();
                let off = at as i64 - here as i64;
                let off = i32::try_from(off).map_err(|_| bad_tc("indirection too far"))?;
                w.write_i32(off);
                return Ok(());
            }
            self.written.insert(key, w.len());
        }
        w.write_u32(tc.0.kind as u32);
        match tc.body() {
            Body::Simple => Ok(()),
            Body::String { bound } => {
                w.write_u32(*bound);
                Ok(())
            }
            Body::Fixed { digits, scale } => {
                w.write_u16(*digits);
                w.write_i16(*scale);
                Ok(())
            }
            _ => self.encap(w, |this, w| this.params(&tc, w)),
        }
    }

    /// Writes an encapsulation whose body may fail with a [`DynError`].
    fn encap(
        &mut self,
        w: &mut Writer,
        body: impl FnOnce(&mut Self, &mut Writer) -> Result<()>,
    ) -> Result<()> {
        let mut err = None;
        let r = w.write_encapsulation(|w| {
            body(self, w).map_err(|e| {
                err = Some(e);
                CdrError::BadEncapsulation
            })
        });
        match (r, err) {
            (_, Some(e)) => Err(e),
            (Err(e), None) => Err(e.into()),
            (Ok(()), None) => Ok(()),
        }
    }

    fn params(&mut self, tc: &TypeCode, w: &mut Writer) -> Result<()> {
        match tc.body() {
            Body::Named { id, name } => {
                w.write_string(id)?;
                w.write_string(name)?;
            }
            Body::Struct { id, name, members } => {
                w.write_string(id)?;
                w.write_string(name)?;
                w.write_len(members.len())?;
                for m in members {
                    w.write_string(&m.name)?;
                    self.enc(&m.tc, w)?;
                }
            }
            Body::Union(u) => {
                w.write_string(&u.id)?;
                w.write_string(&u.name)?;
                self.enc(&u.disc, w)?;
                w.write_i32(u.default_index);
                w.write_len(u.members.len())?;
                let d = u.disc.unalias()?;
                for m in &u.members {
                    match &m.label {
                        // The default branch's label is a zero octet.
                        None => w.write_u8(0),
                        Some(l) => crate::interp::encode::encode_value(&d, l, w)?,
                    }
                    w.write_string(&m.name)?;
                    self.enc(&m.tc, w)?;
                }
            }
            Body::Enum { id, name, members } => {
                w.write_string(id)?;
                w.write_string(name)?;
                w.write_len(members.len())?;
                for m in members {
                    w.write_string(m)?;
                }
            }
            Body::Sequence { content, bound } => {
                self.enc(content, w)?;
                w.write_u32(*bound);
            }
            Body::Array { content, length } => {
                self.enc(content, w)?;
                w.write_u32(*length);
            }
            Body::Alias { id, name, content } => {
                w.write_string(id)?;
                w.write_string(name)?;
                self.enc(content, w)?;
            }
            Body::Value(v) => {
                w.write_string(&v.id)?;
                w.write_string(&v.name)?;
                w.write_i16(v.modifier);
                match &v.base {
                    Some(b) => self.enc(b, w)?,
                    None => w.write_u32(TcKind::Null as u32),
                }
                w.write_len(v.members.len())?;
                for m in &v.members {
                    w.write_string(&m.name)?;
                    self.enc(&m.tc, w)?;
                    w.write_i16(m.visibility);
                }
            }
            Body::Simple | Body::String { .. } | Body::Fixed { .. } | Body::Recursive { .. } => {
                unreachable!("handled by enc")
            }
        }
        Ok(())
    }
}

/// A TypeCode the decoder has started, by the absolute position of its
/// `TCKind` (positions only grow, so the list stays sorted).
struct Entry {
    pos: u64,
    state: State,
}

enum State {
    /// Being decoded: its id once read, and the placeholders that
    /// indirections to it produced.
    InProgress {
        kind: TcKind,
        id: Option<String>,
        placeholders: Vec<TypeCode>,
    },
    Done(TypeCode),
}

struct Decoder {
    entries: Vec<Entry>,
    depth: u32,
}

/// Reads an encapsulation and returns a reader over it plus the absolute
/// position of its first byte (indirection offsets are absolute).
fn encap<'a>(r: &mut Reader<'a>, base: u64) -> Result<(Reader<'a>, u64)> {
    let len = r.read_u32()?;
    let n = r.check_len(len, 1)?;
    let at = r.offset();
    let bytes = r.read_bytes(n)?;
    let mut inner = Reader::from_encapsulation(bytes)?;
    inner.set_version(r.version());
    inner.set_codesets(r.codesets());
    Ok((inner, base + at as u64))
}

impl Decoder {
    fn dec(&mut self, r: &mut Reader<'_>, base: u64) -> Result<TypeCode> {
        r.align(4)?;
        let pos = base + r.offset() as u64;
        let k = r.read_u32()?;
        if k == INDIRECTION {
            let at = base + r.offset() as u64;
            let off = r.read_i32()?;
            return self.indirect(at as i64 + i64::from(off));
        }
        let kind = TcKind::from_u32(k).ok_or_else(|| bad_tc("unknown TCKind"))?;
        if kind.has_no_params() {
            let tc = TypeCode::from_simple_kind(kind)?;
            self.entries.push(Entry {
                pos,
                state: State::Done(tc.clone()),
            });
            return Ok(tc);
        }
        let tc = match kind {
            TcKind::String | TcKind::WString => {
                let bound = r.read_u32()?;
                if kind == TcKind::String {
                    TypeCode::string_tc(bound)
                } else {
                    TypeCode::wstring_tc(bound)
                }
            }
            TcKind::Fixed => {
                let digits = r.read_u16()?;
                let scale = r.read_i16()?;
                if digits == 0 || digits > 31 || i32::from(scale) > i32::from(digits) {
                    return Err(bad_tc("fixed digits/scale out of range"));
                }
                TypeCode::fixed_tc(digits, scale)
            }
            _ => {
                if self.depth >= MAX_TC_DEPTH {
                    return Err(DynError::Cdr(CdrError::TooDeep));
                }
                self.depth += 1;
                let idx = self.entries.len();
                self.entries.push(Entry {
                    pos,
                    state: State::InProgress {
                        kind,
                        id: None,
                        placeholders: Vec::new(),
                    },
                });
                let (mut e, ebase) = encap(r, base)?;
                let result = self.complex(kind, &mut e, ebase, idx);
                self.depth -= 1;
                let tc = result?;
                // Resolve the placeholders of recursive references to it.
                let done = State::Done(tc.clone());
                if let State::InProgress { placeholders, .. } =
                    std::mem::replace(&mut self.entries[idx].state, done)
                {
                    for p in placeholders {
                        if let Body::Recursive { target, .. } = p.body() {
                            let _ = target.set(Arc::downgrade(&tc.0));
                        }
                    }
                }
                return Ok(tc);
            }
        };
        self.entries.push(Entry {
            pos,
            state: State::Done(tc.clone()),
        });
        Ok(tc)
    }

    #[cold]
    fn indirect(&mut self, target: i64) -> Result<TypeCode> {
        let target = u64::try_from(target).map_err(|_| bad_tc("indirection before the stream"))?;
        let i = self
            .entries
            .binary_search_by_key(&target, |e| e.pos)
            .map_err(|_| bad_tc("indirection to no TypeCode"))?;
        let aggregate = |k: &TcKind| {
            matches!(
                k,
                TcKind::Struct | TcKind::Union | TcKind::Except | TcKind::Value | TcKind::ValueBox
            )
        };
        // TypeCodes still in progress after the target are nested in it
        // and enclose this indirection.
        let through_aggregate = self.entries[i + 1..]
            .iter()
            .any(|e| matches!(&e.state, State::InProgress { kind, .. } if aggregate(kind)));
        match &mut self.entries[i].state {
            State::Done(tc) => Ok(tc.clone()),
            State::InProgress {
                kind,
                id,
                placeholders,
            } => {
                // Aggregates can legally contain themselves, and so can an
                // alias through an aggregate inside it (`struct Tree;
                // typedef sequence<Tree> Forest; struct Tree { Forest
                // kids; };` gives `Forest` as alias - sequence - struct -
                // indirection to the alias, as omniORB marshals it). An
                // alias or sequence that contains itself directly
                // describes no finite type.
                if !(aggregate(kind) || *kind == TcKind::Alias && through_aggregate) {
                    return Err(bad_tc("recursive indirection to a non-aggregate"));
                }
                let id = id
                    .as_ref()
                    .ok_or_else(|| bad_tc("recursive indirection before the id"))?;
                let p = TypeCode::recursive(id.clone());
                placeholders.push(p.clone());
                Ok(p)
            }
        }
    }

    fn set_id(&mut self, idx: usize, new: &str) {
        if let State::InProgress { id, .. } = &mut self.entries[idx].state {
            *id = Some(new.to_owned());
        }
    }

    /// A member type: decoded, then checked to need at least one byte.
    fn member(&mut self, r: &mut Reader<'_>, base: u64) -> Result<TypeCode> {
        let tc = self.dec(r, base)?;
        if tc.layout().min_size == 0 {
            return Err(DynError::BadTypeCode {
                minor: crate::error::minor::BAD_TYPECODE_ILLEGAL_MEMBER,
                what: "member type whose values take no bytes",
            });
        }
        Ok(tc)
    }

    fn complex(
        &mut self,
        kind: TcKind,
        r: &mut Reader<'_>,
        base: u64,
        idx: usize,
    ) -> Result<TypeCode> {
        let body = match kind {
            TcKind::ObjRef
            | TcKind::Native
            | TcKind::AbstractInterface
            | TcKind::LocalInterface => Body::Named {
                id: r.read_string()?,
                name: r.read_string()?,
            },
            TcKind::Struct | TcKind::Except => {
                let id = r.read_string()?;
                self.set_id(idx, &id);
                let name = r.read_string()?;
                // A member is at least a name (5 octets) and a kind (4).
                let n = r.read_len(9)?;
                let mut members = Vec::with_capacity(n);
                for _ in 0..n {
                    let name = r.read_string()?;
                    let tc = self.member(r, base)?;
                    members.push(Member { name, tc });
                }
                Body::Struct { id, name, members }
            }
            TcKind::Union => {
                let id = r.read_string()?;
                self.set_id(idx, &id);
                let name = r.read_string()?;
                let disc = self.dec(r, base)?;
                let d = disc.unalias()?;
                if !d.kind().is_discriminator() {
                    return Err(bad_tc("illegal union discriminator type"));
                }
                // Any negative index means "no default branch": the spec
                // says -1, but omniORB 4.2 writes -2 for a union whose labels
                // cover every discriminator value (a boolean with TRUE and
                // FALSE, an enum with all its enumerators).
                let default_used = r.read_i32()?.max(-1);
                // A branch is at least a label (1), a name (5), a kind (4).
                let n = r.read_len(10)?;
                if default_used >= n as i32 {
                    return Err(bad_tc("union default index out of range"));
                }
                let mut members = Vec::with_capacity(n);
                for i in 0..n {
                    let label = if i as i32 == default_used {
                        r.read_u8()?;
                        None
                    } else {
                        let v = crate::interp::decode::decode_value(&d, r)?;
                        if label_key(&d, &v).is_none() {
                            return Err(bad_tc("union label out of range"));
                        }
                        Some(v)
                    };
                    let name = r.read_string()?;
                    let tc = self.member(r, base)?;
                    members.push(UnionMember { label, name, tc });
                }
                let body = UnionBody::new(id, name, disc, members)
                    .map_err(|_| bad_tc("bad union labels"))?;
                Body::Union(Box::new(body))
            }
            TcKind::Enum => {
                let id = r.read_string()?;
                let name = r.read_string()?;
                let n = r.read_len(5)?;
                let mut members = Vec::with_capacity(n);
                for _ in 0..n {
                    members.push(r.read_string()?);
                }
                if members.is_empty() {
                    return Err(bad_tc("enum without enumerators"));
                }
                Body::Enum { id, name, members }
            }
            TcKind::Sequence | TcKind::Array => {
                let content = self.member(r, base)?;
                let n = r.read_u32()?;
                if kind == TcKind::Sequence {
                    Body::Sequence { content, bound: n }
                } else {
                    if n == 0 {
                        return Err(bad_tc("array of length 0"));
                    }
                    Body::Array { content, length: n }
                }
            }
            TcKind::Alias | TcKind::ValueBox => {
                let id = r.read_string()?;
                self.set_id(idx, &id);
                let name = r.read_string()?;
                let content = self.dec(r, base)?;
                Body::Alias { id, name, content }
            }
            TcKind::Value => {
                let id = r.read_string()?;
                self.set_id(idx, &id);
                let name = r.read_string()?;
                let modifier = r.read_i16()?;
                let base_tc = self.dec(r, base)?;
                if base_tc.is_recursive_placeholder() {
                    // An indirection to a valuetype still being decoded:
                    // the type would be its own base.
                    return Err(bad_tc("valuetype that is its own base"));
                }
                let base_tc = match base_tc.0.kind {
                    TcKind::Null => None,
                    TcKind::Value => Some(base_tc),
                    _ => return Err(bad_tc("valuetype base is not a valuetype")),
                };
                // name (5) + kind (4) + visibility (2)
                let n = r.read_len(11)?;
                let mut members = Vec::with_capacity(n);
                for _ in 0..n {
                    let name = r.read_string()?;
                    let tc = self.member(r, base)?;
                    let visibility = r.read_i16()?;
                    members.push(ValueMember {
                        name,
                        tc,
                        visibility,
                    });
                }
                Body::Value(Box::new(crate::typecode::ValueBody {
                    id,
                    name,
                    modifier,
                    base: base_tc,
                    members,
                }))
            }
            _ => return Err(bad_tc("kind without an encapsulation")),
        };
        Ok(TypeCode::from_body(kind, body))
    }
}
