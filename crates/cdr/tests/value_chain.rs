//! A long chain of values (each node referring to the one read before
//! it) in a message that turns out truncated: the decode fails, and the
//! reader, which then holds the only references to the nodes, releases
//! them one at a time. Released first to last, the last node would free
//! the chain one node inside the other, recursing once per node, and
//! overflow the stack (an abort, not an error).

use peregrine_cdr::ValueRef;

use peregrine_cdr::{
    read_value, ByteOrder, CdrError, Decode, Encode, Reader, Result, ValueInfo, ValueSlot,
    ValueType, Writer,
};

/// `valuetype Link { public Link prev; };`
struct Link {
    prev: ValueSlot<Link>,
}

impl ValueType for Link {
    const REPO_ID: &'static str = "IDL:Test/Link:1.0";
    const IDS: &'static [&'static str] = &["IDL:Test/Link:1.0"];
    const CHUNKED: bool = false;
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        self.prev.encode(w)
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
        let mut prev = read_value::<Link>(r)?;
        let v = r.new_value(Link {
            prev: prev.take_slot(),
        });
        prev.fixup(r, &v, |s| &s.prev);
        Ok(v)
    }
}

#[test]
fn a_truncated_long_chain_is_an_error_not_a_stack_overflow() {
    // Far deeper than a test thread's stack allows recursing.
    let n = 200_000;
    let mut w = Writer::new(ByteOrder::Little);
    w.write_u32(n as u32);
    // Written node by node (the sender's nodes need not form a chain
    // that it drops recursively): node i's `prev` is node i - 1.
    let mut nodes: Vec<ValueRef<Link>> = Vec::with_capacity(n);
    for i in 0..n {
        let prev = if i == 0 {
            ValueSlot::null()
        } else {
            ValueSlot::new(nodes[i - 1].clone())
        };
        let node = ValueRef::new(Link { prev });
        ValueSlot::new(node.clone()).encode(&mut w).unwrap();
        nodes.push(node);
    }
    let mut bytes = w.into_vec();
    bytes.truncate(bytes.len() - 2);
    let e = Vec::<ValueSlot<Link>>::decode(&mut Reader::new(&bytes, ByteOrder::Little));
    assert!(
        matches!(e, Err(CdrError::Truncated { .. })),
        "{:?}",
        e.err()
    );
    // The sender's chain, released last first (no recursion either).
    while let Some(node) = nodes.pop() {
        drop(node);
    }
}
