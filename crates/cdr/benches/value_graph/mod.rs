//! The value graph both value benches measure (this crate's `values` and
//! peregrine-dynamic's `values_interp`, which includes this file): `N`
//! nodes with sharing, each written once and referred to once more, by
//! the next node's `prev`, as an indirection; and the sequence of the
//! equivalent structs, an index in place of the reference. `Node` is
//! written as peregrine-idl-rust generates valuetypes.

use peregrine_cdr::ValueRef;

use peregrine_cdr::{
    read_value, Decode, Edges, Encode, Reader, Result, ValueInfo, ValueSlot, ValueType, Writer,
};

/// Nodes in the graph (and structs in the sequence).
pub const N: usize = 1000;

/// `valuetype Node { public long id; public string label; public Node prev; };`
pub struct Node {
    pub id: i32,
    pub label: String,
    pub prev: ValueSlot<Node>,
}

impl ValueType for Node {
    const REPO_ID: &'static str = "IDL:Bench/Node:1.0";
    const IDS: &'static [&'static str] = &["IDL:Bench/Node:1.0"];
    const CHUNKED: bool = false;
    // SAFETY: a `Node` holds one value reference, `prev`.
    const EDGES: Option<Edges<Self>> = Some(unsafe { Edges::new(|n, e| e.slot(&n.prev)) });
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        self.id.encode(w)?;
        self.label.encode(w)?;
        self.prev.encode(w)
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
        let id = i32::decode(r)?;
        let label = String::decode(r)?;
        let mut prev = read_value::<Node>(r)?;
        let v = r.new_value(Node {
            id,
            label,
            prev: prev.take_slot(),
        });
        prev.fixup(r, &v, |s| &s.prev);
        Ok(v)
    }
}

/// `struct Row { long id; string label; long prev; };`
pub struct Row {
    pub id: i32,
    pub label: String,
    pub prev: i32,
}

// Inline, as they were when this code stood in each bench's own module:
// the baseline stays what it was measured as.
impl Encode for Row {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        self.id.encode(w)?;
        self.label.encode(w)?;
        self.prev.encode(w)
    }
}

impl<'de> Decode<'de> for Row {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        Ok(Row {
            id: i32::decode(r)?,
            label: String::decode(r)?,
            prev: i32::decode(r)?,
        })
    }
}

/// The label of node (and row) `i`.
pub fn label(i: usize) -> String {
    format!("node {i}")
}

/// The graph and the equivalent structs, built node by node: node `i`
/// has id `i`, `label(i)` and node `i - 1` as `prev` (null for the
/// first); row `i` the same with the index `i - 1` (-1 for the first).
/// `also(i)` runs between node `i` and row `i`: a bench building more
/// inputs per node (the dynamic crate's `DynValue`s) does it there, so
/// that the inputs' allocations interleave the same way in every run.
pub fn graph_and_rows(mut also: impl FnMut(usize)) -> (Vec<ValueSlot<Node>>, Vec<Row>) {
    let mut graph: Vec<ValueSlot<Node>> = Vec::with_capacity(N);
    let mut rows = Vec::with_capacity(N);
    for i in 0..N {
        let prev = graph.last().cloned().unwrap_or_default();
        graph.push(
            ValueRef::new(Node {
                id: i as i32,
                label: label(i),
                prev,
            })
            .into(),
        );
        also(i);
        rows.push(Row {
            id: i as i32,
            label: label(i),
            prev: i as i32 - 1,
        });
    }
    (graph, rows)
}
