//! 100,000 activated objects behind one server, called through one client
//! connection: every object answers, deactivated ones (stale keys, even
//! after their slot is reused) are OBJECT_NOT_EXIST. Functional, not
//! timed (the figures are in examples/million.rs and docs/PERFORMANCE.md).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use peregrine_orb::{Orb, SystemException, SystemExceptionKind as K};
use peregrine_orb_tests::{bounded, Counter, CounterRef, CounterSkeleton};

/// `Test::Counter`: returns its value, then increments it.
struct CounterImpl(AtomicU32);

impl Counter for CounterImpl {
    fn next(&self) -> Result<u32, SystemException> {
        Ok(self.0.fetch_add(1, Ordering::Relaxed))
    }
}

fn counter(start: u32) -> Arc<CounterSkeleton<CounterImpl>> {
    Arc::new(CounterSkeleton::new(CounterImpl(AtomicU32::new(start))))
}

#[test]
fn a_hundred_thousand_objects_through_one_connection() {
    bounded(300, || {
        const N: usize = 100_000;
        let server = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
        let root = server.root_poa();
        root.manager().activate().unwrap();
        let ids: Vec<Vec<u8>> = (0..N)
            .map(|i| root.activate_object(counter(i as u32 * 10)).unwrap())
            .collect();
        assert_eq!(root.active_objects(), N);
        let client = Orb::builder().build().unwrap();
        let refs: Vec<CounterRef> = ids
            .iter()
            .map(|id| {
                let r = root.id_to_reference(id).unwrap();
                CounterRef::unchecked_narrow(client.object_from_ior(r.ior().clone()).unwrap())
            })
            .collect();
        for (i, r) in refs.iter().enumerate() {
            assert_eq!(r.next().unwrap(), i as u32 * 10, "object {i}");
        }
        assert_eq!(client.client_connections(), 1);
        // Deactivate every 10th object: its key goes stale.
        for id in ids.iter().step_by(10) {
            root.deactivate_object(id).unwrap();
        }
        // Reuse the freed slots with new servants: the old keys must not
        // reach them (the generation differs).
        for _ in 0..N / 10 {
            root.activate_object(counter(u32::MAX)).unwrap();
        }
        for (i, r) in refs.iter().enumerate() {
            match r.next() {
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
