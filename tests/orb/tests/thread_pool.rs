//! The thread-pool server model: requests on one connection run
//! concurrently on the workers; results, exceptions and oneways are
//! intact; shutdown closes every connection.

use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_orb::{Orb, SystemExceptionKind as K, ThreadModel};
use peregrine_orb_tests::*;

fn pool_server(n: usize) -> (Orb, EchoRef) {
    let orb = Orb::builder()
        .listen("127.0.0.1", 0)
        .thread_model(ThreadModel::ThreadPool(n))
        .build()
        .unwrap();
    let root = orb.root_poa();
    root.manager().activate().unwrap();
    let s = Arc::new(EchoSkeleton::new(EchoImpl::default()));
    let obj = root.servant_to_reference(&s).unwrap();
    (orb, obj)
}

#[test]
fn requests_on_one_connection_run_concurrently() {
    bounded(60, || {
        let (server, obj) = pool_server(4);
        let client = client();
        let e = through(&client, &obj);
        assert_eq!(e.echo_string("pool").unwrap(), "pool");
        // A slow call and a quick one share the client's one connection:
        // with workers the quick one does not wait for the slow one.
        let slow = e.clone();
        let h = std::thread::spawn(move || slow.sleep_ms(800));
        std::thread::sleep(Duration::from_millis(100));
        let t = Instant::now();
        assert_eq!(e.echo_string("quick").unwrap(), "quick");
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "the quick call waited {:?}",
            t.elapsed()
        );
        h.join().unwrap().unwrap();
        assert_eq!(client.client_connections(), 1);
        // Many threads, many calls, user and system exceptions intact.
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let e = e.clone();
                std::thread::spawn(move || {
                    for j in 0..200 {
                        let s = format!("{i}-{j}");
                        assert_eq!(e.echo_string(&s).unwrap(), s);
                    }
                    assert!(matches!(e.fail(0), Err(FailError::Oops(_))));
                    assert!(
                        matches!(e.fail(1), Err(FailError::System(x)) if x.kind == K::BadParam)
                    );
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        // Oneways are delivered too.
        for _ in 0..10 {
            e.note("n").unwrap();
        }
        let t = Instant::now();
        while e.notes().unwrap() < 10 && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(e.notes().unwrap(), 10);
        server.shutdown(true);
        assert_eq!(server.server_connections(), 0);
        assert!(e.echo_string("after").is_err());
    });
}
