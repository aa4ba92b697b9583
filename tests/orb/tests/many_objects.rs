//! 100,000 activated objects behind one server, called through one client
//! connection: every object answers, deactivated ones (stale keys, even
//! after their slot is reused) are OBJECT_NOT_EXIST. Functional, not
//! timed (the figures are in examples/million.rs and docs/PERFORMANCE.md).

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use common::bounded;
use peregrine_orb::{
    CompletionStatus, ObjectRef, Orb, Servant, ServerRequest, SystemException,
    SystemExceptionKind as K,
};

const ID: &str = "IDL:Test/Counter:1.0";

struct Counter(AtomicU32);

impl Servant for Counter {
    fn repository_id(&self) -> &'static str {
        ID
    }
    fn is_a(&self, id: &str) -> bool {
        id == ID
    }
    fn dispatch(&self, req: &mut ServerRequest<'_>) -> Result<(), SystemException> {
        match req.operation() {
            "next" => {
                let v = self.0.fetch_add(1, Ordering::Relaxed);
                req.reply().write_u32(v);
                Ok(())
            }
            _ => Err(SystemException::new(
                K::BadOperation,
                0,
                CompletionStatus::No,
            )),
        }
    }
}

fn next(o: &ObjectRef) -> Result<u32, SystemException> {
    o.invoke(
        "next",
        |_| Ok(()),
        |r| r.read_u32(),
        |_, _| None::<peregrine_cdr::Result<SystemException>>,
    )
}

#[test]
fn a_hundred_thousand_objects_through_one_connection() {
    bounded(300, || {
        const N: usize = 100_000;
        let server = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
        let root = server.root_poa();
        root.manager().activate().unwrap();
        let ids: Vec<Vec<u8>> = (0..N)
            .map(|i| {
                root.activate_object(Arc::new(Counter(AtomicU32::new(i as u32 * 10))))
                    .unwrap()
            })
            .collect();
        assert_eq!(root.active_objects(), N);
        let client = Orb::builder().build().unwrap();
        let refs: Vec<ObjectRef> = ids
            .iter()
            .map(|id| {
                let r = root.id_to_reference(id).unwrap();
                client.object_from_ior(r.ior().clone()).unwrap()
            })
            .collect();
        for (i, r) in refs.iter().enumerate() {
            assert_eq!(next(r).unwrap(), i as u32 * 10, "object {i}");
        }
        assert_eq!(client.client_connections(), 1);
        // Deactivate every 10th object: its key goes stale.
        for id in ids.iter().step_by(10) {
            root.deactivate_object(id).unwrap();
        }
        // Reuse the freed slots with new servants: the old keys must not
        // reach them (the generation differs).
        for _ in 0..N / 10 {
            root.activate_object(Arc::new(Counter(AtomicU32::new(u32::MAX))))
                .unwrap();
        }
        for (i, r) in refs.iter().enumerate() {
            match next(r) {
                Ok(v) => {
                    assert!(i % 10 != 0, "stale object {i} answered");
                    assert_eq!(v, i as u32 * 10 + 1);
                }
                Err(e) => {
                    assert_eq!(i % 10, 0, "live object {i} failed: {e:?}");
                    assert_eq!(e.kind, K::ObjectNotExist);
                }
            }
        }
        assert_eq!(root.active_objects(), N);
        server.shutdown(true);
    });
}
