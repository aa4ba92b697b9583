//! Hand-built byte vectors for each rule of the value encoding, in both
//! byte orders, and hostile input.

use super::ValueRef;
use alloc::boxed::Box;
use alloc::vec::Vec;
use std::sync::OnceLock;

use super::{RepoIds, ValueStart};
use crate::{ByteOrder, CdrError, Reader, Result, Writer};

const NODE: &str = "IDL:t/Node:1.0";
const BASE: &str = "IDL:t/Base:1.0";
const DERIVED: &str = "IDL:t/Derived:1.0";
const ORDERS: [ByteOrder; 2] = [ByteOrder::Big, ByteOrder::Little];

/// Builds expected streams long by long.
struct B {
    order: ByteOrder,
    bytes: Vec<u8>,
}

impl B {
    fn new(order: ByteOrder) -> Self {
        Self {
            order,
            bytes: Vec::new(),
        }
    }
    fn pad4(&mut self) -> &mut Self {
        while self.bytes.len() % 4 != 0 {
            self.bytes.push(0);
        }
        self
    }
    fn long(&mut self, v: u32) -> &mut Self {
        self.pad4();
        let b = match self.order {
            ByteOrder::Big => v.to_be_bytes(),
            ByteOrder::Little => v.to_le_bytes(),
        };
        self.bytes.extend_from_slice(&b);
        self
    }
    fn neg(&mut self, v: i32) -> &mut Self {
        self.long(v as u32)
    }
    fn string(&mut self, s: &str) -> &mut Self {
        self.long(s.len() as u32 + 1);
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        self
    }
    fn octet(&mut self, v: u8) -> &mut Self {
        self.bytes.push(v);
        self
    }
    fn at(&self) -> usize {
        self.bytes.len()
    }
    fn done(&mut self) -> Vec<u8> {
        core::mem::take(&mut self.bytes)
    }
}

/// A linked node with a slot that a cycle can close after construction.
#[derive(Debug)]
struct Node {
    v: i32,
    next: OnceLock<ValueRef<Node>>,
}

fn node(v: i32, next: Option<ValueRef<Node>>) -> ValueRef<Node> {
    let n = Node {
        v,
        next: OnceLock::new(),
    };
    if let Some(next) = next {
        n.next.set(next).unwrap();
    }
    ValueRef::new(n)
}

fn write_node(w: &mut Writer, n: Option<&ValueRef<Node>>, chunked: bool) -> Result<()> {
    let Some(n) = n else {
        w.write_null_value();
        return Ok(());
    };
    w.write_value(ValueRef::as_ptr(n).cast(), &[NODE], chunked, |w| {
        w.write_i32(n.v);
        write_node(w, n.next.get(), chunked)
    })
}

enum Link {
    Ready(Option<ValueRef<Node>>),
    Cycle(usize),
}

fn read_node(r: &mut Reader<'_>) -> Result<Link> {
    let info = match r.read_value_start()? {
        ValueStart::Null => return Ok(Link::Ready(None)),
        ValueStart::Shared(v) => {
            return Ok(Link::Ready(Some(
                v.downcast::<Node>().map_err(|_| CdrError::NoValueFactory)?,
            )))
        }
        ValueStart::Cycle(at) => return Ok(Link::Cycle(at)),
        ValueStart::New(info) => info,
    };
    if !info.may_read_as(NODE) && !info.ids.as_slice().is_empty() {
        return Err(CdrError::NoValueFactory);
    }
    let v = r.read_i32()?;
    let next = read_node(r)?;
    let n = node(v, None);
    match next {
        Link::Ready(Some(next)) => n.next.set(next).unwrap(),
        Link::Ready(None) => {}
        Link::Cycle(at) => {
            let slot = n.clone();
            r.defer_value(
                at,
                Box::new(move |v| {
                    let v = v
                        .clone()
                        .downcast::<Node>()
                        .map_err(|_| CdrError::NoValueFactory)?;
                    slot.next.set(v).map_err(|_| CdrError::BadChunk)
                }),
            );
        }
    }
    r.finish_value(&info, ValueRef::into_any(n.clone()))?;
    Ok(Link::Ready(Some(n)))
}

fn decode_node(bytes: &[u8], order: ByteOrder) -> Result<Option<ValueRef<Node>>> {
    let mut r = Reader::new(bytes, order);
    match read_node(&mut r)? {
        Link::Ready(n) => Ok(n),
        Link::Cycle(_) => Err(CdrError::BadChunk),
    }
}

fn values(n: &ValueRef<Node>, max: usize) -> Vec<i32> {
    let mut out = Vec::new();
    let mut cur = Some(n.clone());
    while let Some(c) = cur {
        if out.len() == max {
            break;
        }
        out.push(c.v);
        cur = c.next.get().cloned();
    }
    out
}

#[test]
fn unchunked_value_with_single_id_and_null() {
    for order in ORDERS {
        let list = node(7, None);
        let mut w = Writer::new(order);
        write_node(&mut w, Some(&list), false).unwrap();
        let want = B::new(order)
            .long(0x7fff_ff02)
            .string(NODE)
            .long(7)
            .long(0)
            .done();
        assert_eq!(w.as_slice(), want);
        let back = decode_node(&want, order).unwrap().unwrap();
        assert_eq!(values(&back, 10), [7]);
    }
}

#[test]
fn shared_value_and_repo_id_are_indirections() {
    for order in ORDERS {
        // b -> a, and a again after b: a second time as an indirection.
        let a = node(1, None);
        let b = node(2, Some(a.clone()));
        let mut w = Writer::new(order);
        write_node(&mut w, Some(&b), false).unwrap();
        write_node(&mut w, Some(&a), false).unwrap();
        let mut e = B::new(order);
        e.long(0x7fff_ff02).string(NODE).long(2);
        let a_at = e.at();
        e.long(0x7fff_ff02).long(0xffff_ffff);
        // Back from the offset's position to the first id's length (4).
        e.neg(4 - e.at() as i32);
        e.long(1).long(0).long(0xffff_ffff);
        e.neg(a_at as i32 - e.at() as i32);
        let want = e.done();
        assert_eq!(w.as_slice(), want);

        let mut r = Reader::new(&want, order);
        let Link::Ready(Some(b2)) = read_node(&mut r).unwrap() else {
            panic!()
        };
        let Link::Ready(Some(a2)) = read_node(&mut r).unwrap() else {
            panic!()
        };
        assert!(ValueRef::ptr_eq(b2.next.get().unwrap(), &a2));
        assert!(r.is_empty());
    }
}

/// `Reader::done` ends a reader that read values as dropping it does: the
/// position table lets go of them (the fast path that skips the drop is
/// only for readers that own nothing).
#[test]
fn done_releases_the_values_a_reader_read() {
    let a = node(1, None);
    let b = node(2, Some(a.clone()));
    let mut w = Writer::new(ByteOrder::Little);
    write_node(&mut w, Some(&b), false).unwrap();
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes, ByteOrder::Little);
    let Link::Ready(Some(b2)) = read_node(&mut r).unwrap() else {
        panic!()
    };
    // Held by the table too, until the reader ends.
    assert_eq!(ValueRef::strong_count(&b2), 2);
    r.done();
    assert_eq!(ValueRef::strong_count(&b2), 1);
    assert_eq!(ValueRef::strong_count(b2.next.get().unwrap()), 1);
    // A reader that read no value ends the same way.
    let plain = [0u8; 4];
    let mut r = Reader::new(&plain, ByteOrder::Little);
    assert_eq!(r.read_u32().unwrap(), 0);
    r.done();
}

#[test]
fn cycle_is_closed_by_a_fixup() {
    for order in ORDERS {
        let a = node(1, None);
        let b = node(2, Some(a.clone()));
        a.next.set(b.clone()).unwrap();
        let mut w = Writer::new(order);
        write_node(&mut w, Some(&a), false).unwrap();
        let back = decode_node(w.as_slice(), order).unwrap().unwrap();
        assert_eq!(values(&back, 5), [1, 2, 1, 2, 1]);
        let again = back.next.get().unwrap().next.get().unwrap();
        assert!(ValueRef::ptr_eq(again, &back));
    }
}

#[test]
fn chunked_nested_values_and_end_tags() {
    for order in ORDERS {
        // a(1) -> b(2) -> null, chunked: the outer chunk ends before b's
        // header, b ends with -2, a's empty chunk after b is omitted.
        let b = node(2, None);
        let a = node(1, Some(b));
        let mut w = Writer::new(order);
        write_node(&mut w, Some(&a), true).unwrap();
        let mut e = B::new(order);
        e.long(0x7fff_ff0a).string(NODE).long(4).long(1);
        e.long(0x7fff_ff0a).long(0xffff_ffff);
        e.neg(4 - e.at() as i32);
        e.long(8).long(2).long(0).neg(-2).neg(-1);
        let want = e.done();
        assert_eq!(w.as_slice(), want);
        let back = decode_node(&want, order).unwrap().unwrap();
        assert_eq!(values(&back, 10), [1, 2]);
    }
}

#[test]
fn one_end_tag_may_close_several_levels() {
    for order in ORDERS {
        let mut e = B::new(order);
        e.long(0x7fff_ff0a).string(NODE).long(4).long(1);
        e.long(0x7fff_ff0a).string(NODE).long(8).long(2).long(0);
        e.neg(-1);
        let bytes = e.done();
        let back = decode_node(&bytes, order).unwrap().unwrap();
        assert_eq!(values(&back, 10), [1, 2]);
    }
}

#[test]
fn data_after_a_chunk_gap_is_read_from_the_next_chunk() {
    for order in ORDERS {
        // State: octet, then a long in a chunk of its own (with the
        // octet's chunk ending off alignment).
        let mut e = B::new(order);
        e.long(0x7fff_ff08)
            .long(1)
            .octet(9)
            .long(4)
            .long(77)
            .neg(-1);
        let bytes = e.done();
        let mut r = Reader::new(&bytes, order);
        let ValueStart::New(info) = r.read_value_start().unwrap() else {
            panic!()
        };
        assert_eq!(info.ids, RepoIds::None);
        assert_eq!(r.read_u8().unwrap(), 9);
        assert_eq!(r.read_u32().unwrap(), 77);
        r.finish_value(&info, ValueRef::into_any(ValueRef::new(())))
            .unwrap();
        assert!(r.is_empty());
    }
}

#[test]
fn truncated_to_a_known_base_skips_the_rest() {
    for order in ORDERS {
        let mut e = B::new(order);
        e.long(0x7fff_ff0e).long(2).string(DERIVED).string(BASE);
        // Base state: long 5; derived state: long 6 and a nested value.
        e.long(8).long(5).long(6);
        e.long(0x7fff_ff0a).string(NODE).long(4).long(3).neg(-2);
        e.long(4).long(0).neg(-1);
        e.long(0xabcd);
        let bytes = e.done();
        let mut r = Reader::new(&bytes, order);
        let ValueStart::New(info) = r.read_value_start().unwrap() else {
            panic!()
        };
        assert_eq!(info.repo_id(), Some(DERIVED));
        assert!(info.may_read_as(BASE));
        assert!(!info.may_read_as(NODE));
        assert_eq!(r.read_i32().unwrap(), 5);
        r.finish_value(&info, ValueRef::into_any(ValueRef::new(5i32)))
            .unwrap();
        assert_eq!(r.read_u32().unwrap(), 0xabcd);
        assert!(r.is_empty());
    }
}

/// A value nested in the truncated part, then an indirection to it (the
/// sender did not know the receiver would truncate; omniORB and JacORB
/// write this): the reader goes back, decodes it there, and goes on
/// after the indirection. `shared_end`: the nested value's end tag closes
/// the enclosing value too.
fn indirection_into_truncated_part(order: ByteOrder, shared_end: bool) {
    let mut e = B::new(order);
    e.long(0x7fff_ff0e).long(2).string(DERIVED).string(BASE);
    e.long(8).long(5).long(6);
    let node_at = e.at();
    e.long(0x7fff_ff0a).string(NODE).long(4).long(3);
    if shared_end {
        e.neg(-1);
    } else {
        e.neg(-2).long(4).long(0).neg(-1);
    }
    for _ in 0..2 {
        e.long(0xffff_ffff);
        e.neg(node_at as i32 - e.at() as i32);
    }
    e.long(0xabcd);
    let bytes = e.done();
    let mut r = Reader::new(&bytes, order);
    let ValueStart::New(info) = r.read_value_start().unwrap() else {
        panic!()
    };
    assert_eq!(r.read_i32().unwrap(), 5);
    r.finish_value(&info, ValueRef::into_any(ValueRef::new(5i32)))
        .unwrap();
    // The first indirection: the skipped Node, decoded now.
    let ValueStart::New(node) = r.read_value_start().unwrap() else {
        panic!()
    };
    assert_eq!((node.pos, node.repo_id()), (node_at, Some(NODE)));
    assert_eq!(r.read_i32().unwrap(), 3);
    let n: super::AnyValue = ValueRef::into_any(ValueRef::new(3i32));
    r.finish_value(&node, n.clone()).unwrap();
    // The second: shared, as any value decoded before.
    let ValueStart::Shared(again) = r.read_value_start().unwrap() else {
        panic!()
    };
    assert!(ValueRef::ptr_eq(&again, &n));
    assert_eq!(r.read_u32().unwrap(), 0xabcd);
    assert!(r.is_empty());
}

#[test]
fn indirection_into_a_truncated_part_decodes_it_there() {
    for order in ORDERS {
        indirection_into_truncated_part(order, false);
        indirection_into_truncated_part(order, true);
    }
}

/// Two values nested in a truncated part, B inside A, reached by
/// indirections in that order: decoding A meets B again and shares the
/// B decoded before.
#[test]
fn values_in_a_truncated_part_keep_their_identity() {
    for order in ORDERS {
        let mut e = B::new(order);
        e.long(0x7fff_ff0e).long(2).string(DERIVED).string(BASE);
        e.long(8).long(5).long(6);
        let a_at = e.at();
        e.long(0x7fff_ff0a).string(NODE).long(4).long(1);
        let b_at = e.at();
        e.long(0x7fff_ff0a).string(NODE).long(4).long(2).neg(-3);
        e.long(4).long(0).neg(-2);
        e.long(4).long(0).neg(-1);
        for at in [b_at, a_at] {
            e.long(0xffff_ffff);
            e.neg(at as i32 - e.at() as i32);
        }
        let bytes = e.done();
        let mut r = Reader::new(&bytes, order);
        let ValueStart::New(x) = r.read_value_start().unwrap() else {
            panic!()
        };
        assert_eq!(r.read_i32().unwrap(), 5);
        r.finish_value(&x, ValueRef::into_any(ValueRef::new(5i32)))
            .unwrap();
        let ValueStart::New(b) = r.read_value_start().unwrap() else {
            panic!()
        };
        assert_eq!((b.pos, r.read_i32().unwrap()), (b_at, 2));
        let vb: super::AnyValue = ValueRef::into_any(ValueRef::new(2i32));
        r.finish_value(&b, vb.clone()).unwrap();
        let ValueStart::New(a) = r.read_value_start().unwrap() else {
            panic!()
        };
        assert_eq!((a.pos, r.read_i32().unwrap()), (a_at, 1));
        // A's member: the B decoded before, not a second copy.
        let ValueStart::Shared(member) = r.read_value_start().unwrap() else {
            panic!()
        };
        assert!(ValueRef::ptr_eq(&member, &vb));
        r.finish_value(&a, ValueRef::into_any(ValueRef::new(1i32)))
            .unwrap();
        assert!(r.is_empty());
    }
}

#[test]
fn codebase_is_skipped_and_rmi_ids_accepted() {
    for order in ORDERS {
        let rmi = "RMI:java.lang.Integer:0000000000000000";
        let mut e = B::new(order);
        e.long(0x7fff_ff03).string("http://x/").string(rmi).long(4);
        let bytes = e.done();
        let mut r = Reader::new(&bytes, order);
        let ValueStart::New(info) = r.read_value_start().unwrap() else {
            panic!()
        };
        assert_eq!(info.repo_id(), Some(rmi));
        assert_eq!(r.read_i32().unwrap(), 4);
        r.finish_value(&info, ValueRef::into_any(ValueRef::new(4i32)))
            .unwrap();
    }
}

fn start_err(bytes: &[u8], order: ByteOrder) -> CdrError {
    decode_node(bytes, order).unwrap_err()
}

#[test]
fn hostile_indirections() {
    for order in ORDERS {
        // To itself (offset -4 reaches its own tag), forward, before the
        // stream's start, far back, far forward.
        for off in [-4i32, 0, 8, -5, -8, i32::MIN, i32::MAX] {
            let bytes = B::new(order).long(0xffff_ffff).neg(off).done();
            assert_eq!(start_err(&bytes, order), CdrError::BadIndirection(off));
        }
        // Back to a position that holds no value (the id's length).
        let mut e = B::new(order);
        e.long(0x7fff_ff02).string(NODE).long(1).long(0xffff_ffff);
        e.neg(4 - e.at() as i32);
        let bytes = e.done();
        assert!(matches!(
            start_err(&bytes, order),
            CdrError::BadIndirection(_)
        ));
        // A repo id indirection to something that is no id.
        let mut e = B::new(order);
        e.long(0x7fff_ff02).long(0xffff_ffff).neg(-8);
        let bytes = e.done();
        assert_eq!(start_err(&bytes, order), CdrError::BadIndirection(-8));
    }
}

#[test]
fn hostile_chunks() {
    for order in ORDERS {
        // Chunk length past the end.
        let bytes = B::new(order).long(0x7fff_ff08).long(1000).long(1).done();
        assert_eq!(start_err(&bytes, order), CdrError::BadChunk);
        // A long crossing the chunk's end.
        let bytes = B::new(order).long(0x7fff_ff08).long(2).long(1).done();
        assert_eq!(start_err(&bytes, order), CdrError::BadChunk);
        // An end tag deeper than the open value.
        let bytes = B::new(order)
            .long(0x7fff_ff08)
            .long(4)
            .long(1)
            .long(0)
            .neg(-2)
            .done();
        assert_eq!(start_err(&bytes, order), CdrError::BadEndTag(-2));
        // A value header inside a chunk.
        let bytes = B::new(order)
            .long(0x7fff_ff08)
            .long(12)
            .long(1)
            .long(0x7fff_ff08)
            .long(4)
            .done();
        assert_eq!(start_err(&bytes, order), CdrError::BadChunk);
        // An unchunked value nested in a chunked one.
        let bytes = B::new(order)
            .long(0x7fff_ff08)
            .long(4)
            .long(1)
            .long(0x7fff_ff00)
            .done();
        assert_eq!(start_err(&bytes, order), CdrError::BadChunk);
        // Data read after an end tag closed the value.
        let bytes = B::new(order)
            .long(0x7fff_ff08)
            .long(4)
            .long(1)
            .long(0x7fff_ff08)
            .long(4)
            .long(2)
            .long(0)
            .neg(-1)
            .long(4)
            .long(0)
            .done();
        // Inner closes both; the outer then has nothing left to read:
        // fine. An invalid tag where a value is expected is not.
        decode_node(&bytes, order).unwrap();
        let bytes = B::new(order).long(0x1234).done();
        assert_eq!(start_err(&bytes, order), CdrError::BadValueTag(0x1234));
    }
}

#[test]
fn hostile_nesting_and_id_lists() {
    for order in ORDERS {
        // Unbounded nesting of chunked values: stopped by the depth limit.
        let mut e = B::new(order);
        for _ in 0..200 {
            e.long(0x7fff_ff08).long(4).long(1);
        }
        let bytes = e.done();
        assert_eq!(start_err(&bytes, order), CdrError::TooDeep);
        // A huge repo id count.
        let bytes = B::new(order).long(0x7fff_ff0e).long(0x7fff_ffff).done();
        assert!(matches!(
            start_err(&bytes, order),
            CdrError::LengthExceedsInput { .. }
        ));
        // Truncated header.
        let bytes = B::new(order).long(0x7fff_ff02).long(30).done();
        assert!(matches!(
            start_err(&bytes, order),
            CdrError::LengthExceedsInput { .. }
        ));
    }
}

#[test]
fn truncation_needs_a_known_base() {
    let order = ByteOrder::Big;
    let bytes = B::new(order)
        .long(0x7fff_ff0e)
        .long(1)
        .string(DERIVED)
        .long(4)
        .long(1)
        .neg(-1)
        .done();
    assert_eq!(start_err(&bytes, order), CdrError::NoValueFactory);
}

#[test]
fn encapsulation_starts_fresh_tables() {
    let a = node(1, None);
    let mut w = Writer::new(ByteOrder::Big);
    write_node(&mut w, Some(&a), false).unwrap();
    w.write_encapsulation(|w| write_node(w, Some(&a), false))
        .unwrap();
    let mut r = Reader::new(w.as_slice(), ByteOrder::Big);
    read_node(&mut r).unwrap();
    let mut inner = r.read_encapsulation().unwrap();
    let Link::Ready(Some(n)) = read_node(&mut inner).unwrap() else {
        panic!()
    };
    assert_eq!(n.v, 1);
}
