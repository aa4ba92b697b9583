//! 200 clients connecting at once, three times over: the server keeps
//! serving a regular client throughout, and afterwards holds no extra
//! threads, file descriptors or connections, and its memory does not grow
//! from round to round. Alone in its test binary, because it counts the
//! process's threads and descriptors.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use peregrine_orb_tests::*;

fn proc_status(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{field} missing from /proc/self/status"))
}

fn threads() -> u64 {
    proc_status("Threads:")
}

fn fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn rss_kib() -> u64 {
    proc_status("VmRSS:")
}

/// One raw client: connect, one request, read the whole reply, close.
fn one_raw_call(addr: SocketAddr, key: &[u8], id: u32) -> bool {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    if s.write_all(&echo_request(key, id, "burst")).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    if s.read_exact(&mut head).is_err() || &head[..4] != b"GIOP" || head[7] != 1 {
        return false;
    }
    let size = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
    let mut body = vec![0u8; size];
    s.read_exact(&mut body).is_ok()
}

#[test]
fn two_hundred_clients_at_once_leak_nothing() {
    bounded(120, || {
        let (server, _imp, obj) = server();
        let (addr, key) = address_and_key(&obj);
        let key = Arc::new(key);

        // A regular client calling throughout the bursts.
        let client = client();
        let steady = through(&client, &obj);
        assert_eq!(steady.echo_string("warm").unwrap(), "warm");
        let stop = Arc::new(AtomicBool::new(false));
        let regular = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut n = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    assert_eq!(steady.echo_string("steady").unwrap(), "steady");
                    n += 1;
                }
                n
            })
        };

        let base_threads = threads();
        let base_fds = fds();
        let mut rss_after = Vec::new();
        for round in 0..3 {
            let gate = Arc::new(std::sync::Barrier::new(200));
            let clients: Vec<_> = (0..200u32)
                .map(|i| {
                    let (gate, key) = (gate.clone(), key.clone());
                    std::thread::spawn(move || {
                        gate.wait();
                        one_raw_call(addr, &key, i)
                    })
                })
                .collect();
            let ok = clients
                .into_iter()
                .map(|h| h.join().unwrap())
                .filter(|&ok| ok)
                .count();
            assert_eq!(ok, 200, "round {round}: only {ok} of 200 clients served");
            // Every burst connection is closed again (the regular
            // client's one remains), and its thread is gone.
            assert!(
                eventually(10, || server.server_connections() == 1),
                "round {round}: {} server connections remain",
                server.server_connections()
            );
            assert!(
                eventually(10, || threads() <= base_threads),
                "round {round}: {} threads, {base_threads} before",
                threads()
            );
            assert!(
                eventually(10, || fds() <= base_fds),
                "round {round}: {} descriptors, {base_fds} before",
                fds()
            );
            rss_after.push(rss_kib());
        }
        stop.store(true, Ordering::Relaxed);
        let served = regular.join().unwrap();
        assert!(
            served > 0,
            "the regular client made no call during the bursts"
        );
        // Memory reaches a plateau after the first round (allocator pools,
        // buffers sized once); a leak of even 1 KiB per connection would
        // add 400 KiB over the next two rounds.
        let growth = rss_after[2].saturating_sub(rss_after[0]);
        assert!(
            growth < 2048,
            "RSS grew {growth} KiB from round 1 to round 3: {rss_after:?}"
        );
    });
}
