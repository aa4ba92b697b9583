//! Cyclic value graphs whose back edges close inside plain members of a
//! value's state (`idl/value_cycles.idl`), through generated stubs and
//! skeletons over real TCP, both ways: edges that are structs in a
//! sequence pointing back to an ancestor or to their own node, and slots
//! in a sequence of sequences and in a union's branch. The server
//! describes what it received by node identity; the client checks
//! `ValueRef::ptr_eq` on what comes back. Hostile back edges (into a struct's
//! middle, to a value of another type) are `MARSHAL` with a minor code.

use std::sync::Arc;

use peregrine_cdr::{ValueRef, ValueSlot, Writer};
use peregrine_giop::system_exception::minor;
use peregrine_orb::{Orb, SystemException, SystemExceptionKind as K};
use peregrine_orb_tests::idl::cycles::{
    Both, Cell, Edge, Graphs, GraphsRef, GraphsSkeleton, Link, Node,
};
use peregrine_orb_tests::{bounded, client};

type R<T> = Result<T, SystemException>;

/// Nodes numbered by identity in the order they are first met, each
/// listed (after those it reaches) as `<n><name>[<weight>:<target>,..]`.
fn describe_node(root: &ValueRef<Node>) -> String {
    fn visit(n: &ValueRef<Node>, seen: &mut Vec<*const Node>, out: &mut Vec<String>) -> usize {
        if let Some(i) = seen.iter().position(|p| *p == ValueRef::as_ptr(n)) {
            return i;
        }
        let i = seen.len();
        seen.push(ValueRef::as_ptr(n));
        let edges: Vec<String> = n
            .edges
            .iter()
            .map(|e| match e.target.get() {
                Some(t) => format!("{}:{}", e.weight, visit(t, seen, out)),
                None => format!("{}:-", e.weight),
            })
            .collect();
        out.push(format!("{i}{}[{}]", n.name, edges.join(",")));
        i
    }
    let mut out = Vec::new();
    visit(root, &mut Vec::new(), &mut out);
    out.join(" ")
}

/// As [`describe_node`]: `<n>[[<cell>,..],..]` and the link.
fn describe_cell(root: &ValueRef<Cell>) -> String {
    fn visit(c: &ValueRef<Cell>, seen: &mut Vec<*const Cell>, out: &mut Vec<String>) -> usize {
        if let Some(i) = seen.iter().position(|p| *p == ValueRef::as_ptr(c)) {
            return i;
        }
        let i = seen.len();
        seen.push(ValueRef::as_ptr(c));
        let mut one = |s: &ValueSlot<Cell>| match s.get() {
            Some(t) => visit(t, seen, out).to_string(),
            None => "-".into(),
        };
        let rows: Vec<String> = c
            .rows
            .iter()
            .map(|row| {
                format!(
                    "[{}]",
                    row.iter().map(&mut one).collect::<Vec<_>>().join(",")
                )
            })
            .collect();
        let link = match &c.link {
            Link::To(s) => format!("to{}", one(s)),
            Link::None(n) => format!("none{n}"),
        };
        out.push(format!("{i}#{}[{}]{link}", c.id, rows.join(",")));
        i
    }
    let mut out = Vec::new();
    visit(root, &mut Vec::new(), &mut out);
    out.join(" ")
}

struct GraphsImpl;

impl Graphs for GraphsImpl {
    fn echo_node(&self, n: &ValueSlot<Node>) -> R<(ValueSlot<Node>, String)> {
        let seen = n.get().map(describe_node).unwrap_or_default();
        Ok((n.clone(), seen))
    }

    fn echo_cell(&self, c: &ValueSlot<Cell>) -> R<(ValueSlot<Cell>, String)> {
        let seen = c.get().map(describe_cell).unwrap_or_default();
        Ok((c.clone(), seen))
    }

    fn tag_of(&self, b: &ValueSlot<Both>) -> R<i32> {
        Ok(b.get().map_or(-1, |b| b.tag))
    }
}

fn setup() -> (Orb, Orb, GraphsRef) {
    let server = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
    let root = server.root_poa();
    root.manager().activate().unwrap();
    let obj: GraphsRef = root
        .servant_to_reference(&Arc::new(GraphsSkeleton::new(GraphsImpl)))
        .unwrap();
    let client = client();
    let obj =
        GraphsRef::unchecked_narrow(client.string_to_object(&obj.object().to_string()).unwrap());
    (server, client, obj)
}

fn node(name: &str, weights: &[i32]) -> ValueRef<Node> {
    let edges = weights
        .iter()
        .map(|&weight| Edge {
            weight,
            target: ValueSlot::null(),
        })
        .collect();
    ValueRef::new(Node::new(name.into(), edges))
}

fn target(n: &Node, i: usize) -> &ValueRef<Node> {
    n.edges[i].target.get().expect("a target")
}

#[test]
fn a_graph_whose_edges_point_back_through_structs_goes_and_comes_back() {
    bounded(30, || {
        let (_server, _client, obj) = setup();
        // a -1-> b -4-> c; b -2-> a and c -5-> b close on ancestors,
        // a -3-> a on the node itself; c -6-> nothing.
        let a = node("a", &[1, 3]);
        let b = node("b", &[2, 4]);
        let c = node("c", &[5, 6]);
        a.edges[0].target.set(b.clone()).unwrap();
        a.edges[1].target.set(a.clone()).unwrap();
        b.edges[0].target.set(a.clone()).unwrap();
        b.edges[1].target.set(c.clone()).unwrap();
        c.edges[0].target.set(b.clone()).unwrap();
        let want = "2c[5:1,6:-] 1b[2:0,4:2] 0a[1:1,3:0]";
        assert_eq!(describe_node(&a), want);

        let (back, seen) = obj.echo_node(&a.clone().into()).unwrap();
        assert_eq!(seen, want, "as the server received it");
        let back = back.get().expect("a node");
        assert_eq!(describe_node(back), want, "as it came back");
        assert!(!ValueRef::ptr_eq(back, &a));
        let b2 = target(back, 0);
        assert!(ValueRef::ptr_eq(target(back, 1), back), "a -> a");
        assert!(ValueRef::ptr_eq(target(b2, 0), back), "b -> a");
        let c2 = target(b2, 1);
        assert!(ValueRef::ptr_eq(target(c2, 0), b2), "c -> b");
        assert!(c2.edges[1].target.is_null());
        assert_eq!((back.edges[0].weight, c2.edges[0].weight), (1, 5));
    });
}

#[test]
fn back_edges_in_a_sequence_of_sequences_and_a_union_branch() {
    bounded(30, || {
        let (_server, _client, obj) = setup();
        // c0.rows = [[c1, c0], []], c0.link -> c1;
        // c1.rows = [[c0, nil]], c1.link -> c1.
        let c0 = ValueRef::new(Cell::new(
            0,
            vec![vec![ValueSlot::null(), ValueSlot::null()], vec![]],
            Link::To(ValueSlot::null()),
        ));
        let c1 = ValueRef::new(Cell::new(
            1,
            vec![vec![ValueSlot::null(), ValueSlot::null()]],
            Link::To(ValueSlot::null()),
        ));
        let link = |c: &Cell| match &c.link {
            Link::To(s) => s.clone(),
            Link::None(_) => panic!("a link"),
        };
        c0.rows[0][0].set(c1.clone()).unwrap();
        c0.rows[0][1].set(c0.clone()).unwrap();
        c1.rows[0][0].set(c0.clone()).unwrap();
        let Link::To(s) = &c0.link else {
            unreachable!()
        };
        s.set(c1.clone()).unwrap();
        let Link::To(s) = &c1.link else {
            unreachable!()
        };
        s.set(c1.clone()).unwrap();
        let want = "1#1[[0,-]]to1 0#0[[1,0],[]]to1";
        assert_eq!(describe_cell(&c0), want);

        let (back, seen) = obj.echo_cell(&c0.clone().into()).unwrap();
        assert_eq!(seen, want, "as the server received it");
        let back = back.get().expect("a cell");
        assert_eq!(describe_cell(back), want, "as it came back");
        let c1b = back.rows[0][0].get().unwrap();
        assert!(
            ValueRef::ptr_eq(back.rows[0][1].get().unwrap(), back),
            "c0 -> c0"
        );
        assert!(
            ValueRef::ptr_eq(c1b.rows[0][0].get().unwrap(), back),
            "c1 -> c0"
        );
        assert!(
            ValueRef::ptr_eq(link(c1b).get().unwrap(), c1b),
            "c1 -> c1 (union)"
        );
        assert!(
            ValueRef::ptr_eq(link(back).get().unwrap(), c1b),
            "c0 -> c1 (union)"
        );
    });
}

/// Writes a value tag with the repository id `id`; its stream position.
fn header(w: &mut Writer, id: &str) -> usize {
    w.write_u32(0x7fff_ff02);
    let at = w.position() - 4;
    w.write_string(id).unwrap();
    at
}

/// An indirection to stream position `to`.
fn back_to(w: &mut Writer, to: usize) {
    w.write_u32(0xffff_ffff);
    let at = w.position();
    w.write_i32((to as i64 - at as i64) as i32);
}

fn refused(
    obj: &peregrine_orb::ObjectRef,
    op: &str,
    args: impl FnOnce(&mut Writer) -> peregrine_cdr::Result<()>,
) -> SystemException {
    obj.invoke::<(), SystemException>(
        op,
        args,
        |_r: &mut peregrine_cdr::Reader<'_>| Ok(()),
        |_id: &str, _r: &mut peregrine_cdr::Reader<'_>| None,
    )
    .expect_err("the server must refuse the argument")
}

#[test]
fn hostile_back_edges_in_structs_are_marshal_errors() {
    bounded(30, || {
        let (_server, _client, obj) = setup();
        let raw = obj.object();
        // An edge whose target points into the middle of its own struct
        // (at its weight).
        let e = refused(raw, "echo_node", |w| {
            header(w, "IDL:Cycles/Node:1.0");
            w.write_string("a")?;
            w.write_u32(1);
            w.write_i32(7);
            let weight = w.position() - 4;
            back_to(w, weight);
            Ok(())
        });
        assert_eq!(
            (e.kind, e.minor),
            (K::Marshal, minor::MARSHAL_INVALID_INDIRECTION),
            "{e:?}"
        );
        // A Node's edge pointing back to the Both being read: a value of
        // another type than the edge's, found when the Both is complete.
        let e = refused(raw, "tag_of", |w| {
            let both = header(w, "IDL:Cycles/Both:1.0");
            header(w, "IDL:Cycles/Node:1.0");
            w.write_string("n")?;
            w.write_u32(1);
            w.write_i32(1);
            back_to(w, both);
            w.write_i32(5);
            Ok(())
        });
        assert_eq!(
            (e.kind, e.minor),
            (K::Marshal, minor::MARSHAL_NO_VALUE_FACTORY),
            "{e:?}"
        );
        // The same Both with the edge back to the Node itself is fine.
        let both = ValueRef::new(Both::new(node("n", &[1]).into(), 5));
        let n = both.n.get().unwrap();
        n.edges[0].target.set(n.clone()).unwrap();
        assert_eq!(obj.tag_of(&both.into()).unwrap(), 5);
    });
}
