//! The raw-TCP baseline: plain sockets with `TCP_NODELAY`, carrying the
//! very GIOP messages of [`crate::wire_size`]. The client sends prebuilt
//! messages, patching only the request id and object index; the server
//! reads fixed offsets, finds the object with one index into a `Vec`,
//! counts sequence payload for `sync()` and answers twoways with
//! prebuilt replies. Anything unexpected closes the connection.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;

use peregrine_giop::HEADER_LEN;

use crate::frame::{check_reply, frame_len, invalid, u32_at, FrameReader};
use crate::transport::{Orb, OrbKind, TtcpClient};
use crate::types::{DataType, SeqData};
use crate::wire_size::{self, Args};

/// Most objects a raw server will size its table for.
pub const MAX_OBJECTS: u32 = 1 << 24;
/// Read buffer of the client (replies are small).
const READ_BUFFER: usize = 64 << 10;
/// Read buffer of the server.
const SERVER_BUFFER: usize = 64 << 10;

/// The raw-TCP implementation of [`Orb`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RawOrb;

impl Orb for RawOrb {
    fn kind(&self) -> OrbKind {
        OrbKind::Raw
    }

    fn available(&self) -> Result<(), String> {
        Ok(())
    }

    fn serve(&self, bind: SocketAddr) -> io::Result<String> {
        let listener = TcpListener::bind(bind)?;
        let addr = listener.local_addr()?;
        thread::Builder::new()
            .name("raw-accept".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let _ = thread::Builder::new()
                        .name("raw-conn".into())
                        .spawn(move || serve_connection(stream));
                }
            })?;
        Ok(addr.to_string())
    }

    fn remote_endpoint(&self, host: &str, port: u16) -> String {
        if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        }
    }

    fn connect(&self, endpoint: &str) -> io::Result<Box<dyn TtcpClient>> {
        Ok(Box::new(RawClient::connect(endpoint)?))
    }
}

/// Bytes of a request the raw server looks at (the header fields and the
/// first argument bytes); the rest of a message is read and dropped.
const PREFIX: usize = 256;

/// A request as the raw server sees it.
#[derive(Debug, PartialEq, Eq)]
struct RawRequest<'a> {
    request_id: u32,
    response: bool,
    object: usize,
    op: &'a [u8],
    /// The start of the arguments (as far as the prefix goes).
    body: &'a [u8],
    /// Length of the whole argument body.
    body_len: usize,
    little: bool,
}

/// Reads the fixed-offset fields of a GIOP 1.2 request from a raw client:
/// `m` holds the first bytes of a message of `total` bytes.
fn parse_request(m: &[u8], total: usize) -> io::Result<RawRequest<'_>> {
    if m.get(4..8)
        .is_none_or(|v| v[0] != 1 || v[1] != 2 || v[3] != 0)
    {
        return Err(invalid("not a GIOP 1.2 request"));
    }
    let little = m[6] & 1 == 1;
    let request_id = u32_at(m, wire_size::REQUEST_ID_AT, little)?;
    let response = match m.get(wire_size::RESPONSE_FLAGS_AT) {
        Some(0) => false,
        Some(3) => true,
        _ => return Err(invalid("bad response flags")),
    };
    let key_len = u32_at(m, wire_size::KEY_LEN_AT, little)? as usize;
    if key_len != wire_size::OBJECT_KEY_LEN
        || m.get(wire_size::KEY_AT..wire_size::KEY_AT + 4) != Some(&wire_size::KEY_MAGIC[..])
    {
        return Err(invalid("unknown object key"));
    }
    let object = u32_at(m, wire_size::KEY_INDEX_AT, false)? as usize;
    let op_len = u32_at(m, wire_size::OPERATION_AT, little)? as usize;
    let op_at = wire_size::OPERATION_AT + 4;
    let op = match op_len
        .checked_sub(1)
        .and_then(|n| m.get(op_at..op_at + n + 1))
    {
        Some([op @ .., 0]) => op,
        _ => return Err(invalid("bad operation name")),
    };
    let sc_at = (op_at + op_len).next_multiple_of(4);
    if u32_at(m, sc_at, little)? != 0 {
        return Err(invalid("unexpected service contexts"));
    }
    let body_at = (sc_at + 4).next_multiple_of(8).min(total);
    Ok(RawRequest {
        request_id,
        response,
        object,
        op,
        body: m.get(body_at..).unwrap_or_default(),
        body_len: total - body_at,
        little,
    })
}

/// Serves one raw client until it closes or misbehaves.
fn serve_connection(stream: TcpStream) {
    let _ = run_connection(stream);
}

/// What to answer once a request has been read to its end.
#[derive(Debug, Clone, Copy)]
enum Answer {
    None,
    Void(u32),
    Sync(u32, u64),
}

/// Per-connection server state: the object table and the payload count.
struct Conn {
    out: TcpStream,
    objects: Vec<u64>,
    received: u64,
    void_reply: Vec<u8>,
    sync_reply: Vec<u8>,
}

impl Conn {
    /// Dispatches a request (seen through its prefix); returns the answer
    /// due when its last byte has arrived.
    fn dispatch(&mut self, req: &RawRequest<'_>) -> io::Result<Answer> {
        let slot = self
            .objects
            .get_mut(req.object)
            .ok_or_else(|| invalid("no such object"))?;
        *slot += 1;
        if req.op == wire_size::SYNC.as_bytes() {
            let n = std::mem::take(&mut self.received);
            return Ok(Answer::Sync(req.request_id, n));
        }
        if req.op == wire_size::ACTIVATE.as_bytes() {
            let count = u32_at(req.body, 0, req.little)?;
            if count > MAX_OBJECTS {
                return Err(invalid("too many objects"));
            }
            self.objects = vec![0; count.max(1) as usize];
        } else if let Some(ty) = DataType::from_op(req.op) {
            let len = u32_at(req.body, 0, req.little)? as u64;
            let bytes = len * ty.size() as u64;
            if bytes > req.body_len as u64 {
                return Err(invalid("sequence longer than its message"));
            }
            self.received += bytes;
        }
        Ok(if req.response {
            Answer::Void(req.request_id)
        } else {
            Answer::None
        })
    }

    fn answer(&mut self, a: Answer) -> io::Result<()> {
        let at = wire_size::REQUEST_ID_AT;
        match a {
            Answer::None => Ok(()),
            Answer::Void(id) => {
                self.void_reply[at..at + 4].copy_from_slice(&id.to_ne_bytes());
                self.out.write_all(&self.void_reply)
            }
            Answer::Sync(id, n) => {
                let len = self.sync_reply.len();
                self.sync_reply[at..at + 4].copy_from_slice(&id.to_ne_bytes());
                self.sync_reply[len - 8..].copy_from_slice(&n.to_ne_bytes());
                self.out.write_all(&self.sync_reply)
            }
        }
    }
}

/// The server loop, as close to a plain TTCP receiver as framing allows:
/// one fixed buffer, only each message's first [`PREFIX`] bytes are
/// looked at, the rest is read and dropped without copying.
fn run_connection(stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut conn = Conn {
        out: stream.try_clone()?,
        objects: vec![0; 1],
        received: 0,
        void_reply: wire_size::reply(0, None),
        sync_reply: wire_size::reply(0, Some(0)),
    };
    let mut input = stream;
    let mut buf = vec![0u8; SERVER_BUFFER];
    let (mut start, mut end) = (0usize, 0usize);
    // Bytes of the current message still to drop, and its answer.
    let mut skip = 0usize;
    let mut pending = Answer::None;
    loop {
        if skip > 0 {
            let n = skip.min(end - start);
            start += n;
            skip -= n;
            if skip == 0 {
                conn.answer(std::mem::replace(&mut pending, Answer::None))?;
            }
        }
        let avail = end - start;
        if skip == 0 && avail >= HEADER_LEN {
            let total = frame_len(&buf[start..end])?;
            let need = total.min(PREFIX);
            if avail >= need {
                let req = parse_request(&buf[start..start + need], total)?;
                let answer = conn.dispatch(&req)?;
                let have = avail.min(total);
                start += have;
                skip = total - have;
                if skip == 0 {
                    conn.answer(answer)?;
                } else {
                    pending = answer;
                }
                continue;
            }
        }
        if start == end {
            start = 0;
            end = 0;
        } else if buf.len() - start < PREFIX {
            buf.copy_within(start..end, 0);
            end -= start;
            start = 0;
        }
        let n = match input.read(&mut buf[end..]) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => r?,
        };
        if n == 0 {
            return if start == end && skip == 0 {
                Ok(())
            } else {
                Err(invalid("connection closed inside a message"))
            };
        }
        end += n;
    }
}

/// A raw-TCP client: prebuilt messages, patched and written whole.
#[derive(Debug)]
pub struct RawClient {
    out: TcpStream,
    frames: FrameReader<TcpStream>,
    next_id: u32,
    /// The last sequence message built: (type, elements, twoway) and bytes.
    seq: Option<((DataType, usize, bool), Vec<u8>)>,
    no_params_2way: Vec<u8>,
    no_params_1way: Vec<u8>,
    sync: Vec<u8>,
    demux: Vec<Vec<u8>>,
}

impl RawClient {
    /// Connects to `endpoint` (`host:port`).
    pub fn connect(endpoint: &str) -> io::Result<RawClient> {
        let stream = TcpStream::connect(endpoint)?;
        stream.set_nodelay(true)?;
        let out = stream.try_clone()?;
        Ok(RawClient {
            out,
            frames: FrameReader::new(stream, READ_BUFFER),
            next_id: 1,
            seq: None,
            no_params_2way: wire_size::request(0, 0, wire_size::NO_PARAMS_2WAY, true, Args::None),
            no_params_1way: wire_size::request(0, 0, wire_size::NO_PARAMS_1WAY, false, Args::None),
            sync: wire_size::request(0, 0, wire_size::SYNC, true, Args::None),
            demux: (0..wire_size::DEMUX_OPERATIONS)
                .map(|i| wire_size::request(0, 0, &wire_size::demux_op(i), true, Args::None))
                .collect(),
        })
    }

    fn id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        id
    }

    /// Writes `msg` with a fresh request id (and `object` when given).
    fn send(out: &mut TcpStream, msg: &mut [u8], id: u32, object: Option<u32>) -> io::Result<()> {
        let at = wire_size::REQUEST_ID_AT;
        msg[at..at + 4].copy_from_slice(&id.to_ne_bytes());
        if let Some(o) = object {
            let at = wire_size::KEY_INDEX_AT;
            msg[at..at + 4].copy_from_slice(&o.to_be_bytes());
        }
        out.write_all(msg)
    }

    /// Reads the reply to `id`; returns the whole message.
    fn reply(&mut self, id: u32) -> io::Result<&[u8]> {
        let m = self
            .frames
            .next_frame()?
            .ok_or_else(|| invalid("server closed the connection"))?;
        check_reply(m, id)?;
        Ok(m)
    }

    /// Builds the sequence message for `data` unless the last one fits.
    fn prepare_seq(&mut self, data: &SeqData, twoway: bool) {
        let key = (data.data_type(), data.len(), twoway);
        if self.seq.as_ref().is_none_or(|(k, _)| *k != key) {
            let ty = data.data_type();
            let op = if twoway {
                ty.twoway_op().unwrap_or(ty.oneway_op())
            } else {
                ty.oneway_op()
            };
            let msg = wire_size::request(0, 0, op, twoway, Args::Seq(data));
            self.seq = Some((key, msg));
        }
    }

    fn twoway(&mut self, which: Which, object: Option<u32>) -> io::Result<()> {
        let id = self.id();
        let msg = match which {
            Which::NoParams => &mut self.no_params_2way,
            Which::Demux(i) => self
                .demux
                .get_mut(i)
                .ok_or_else(|| invalid("no such demux operation"))?,
            Which::Seq => &mut self.seq.as_mut().ok_or_else(|| invalid("no data"))?.1,
        };
        Self::send(&mut self.out, msg, id, object)?;
        self.reply(id).map(|_| ())
    }
}

/// Which prebuilt twoway message to send.
#[derive(Debug, Clone, Copy)]
enum Which {
    NoParams,
    Demux(usize),
    Seq,
}

impl TtcpClient for RawClient {
    fn send_seq(&mut self, data: &SeqData) -> io::Result<()> {
        let id = self.id();
        self.prepare_seq(data, false);
        let msg = &mut self.seq.as_mut().ok_or_else(|| invalid("no data"))?.1;
        Self::send(&mut self.out, msg, id, None)
    }

    fn sync(&mut self) -> io::Result<u64> {
        let id = self.id();
        Self::send(&mut self.out, &mut self.sync, id, None)?;
        let m = self.reply(id)?;
        // The result: an unsigned long long aligned to 8 after the 24-byte
        // reply header, in the reply's byte order.
        let b: [u8; 8] = m
            .get(24..32)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| invalid("sync reply without a result"))?;
        Ok(if m[6] & 1 == 1 {
            u64::from_le_bytes(b)
        } else {
            u64::from_be_bytes(b)
        })
    }

    fn activate(&mut self, count: u32) -> io::Result<()> {
        let id = self.id();
        let mut msg = wire_size::request(id, 0, wire_size::ACTIVATE, true, Args::ULong(count));
        Self::send(&mut self.out, &mut msg, id, None)?;
        self.reply(id).map(|_| ())
    }

    fn no_params_2way(&mut self, object: u32) -> io::Result<()> {
        self.twoway(Which::NoParams, Some(object))
    }

    fn no_params_1way(&mut self, object: u32) -> io::Result<()> {
        let id = self.id();
        Self::send(&mut self.out, &mut self.no_params_1way, id, Some(object))
    }

    fn send_seq_2way(&mut self, data: &SeqData) -> io::Result<()> {
        self.prepare_seq(data, true);
        self.twoway(Which::Seq, None)
    }

    fn demux_call(&mut self, index: usize) -> io::Result<()> {
        self.twoway(Which::Demux(index), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_wire_size_builds() {
        let d = SeqData::new(DataType::Long, 10);
        let m = wire_size::request(42, 7, "sendLongSeq", false, Args::Seq(&d));
        let r = parse_request(&m, m.len()).unwrap();
        assert_eq!(r.request_id, 42);
        assert!(!r.response);
        assert_eq!(r.object, 7);
        assert_eq!(r.op, b"sendLongSeq");
        assert_eq!(r.body.len(), 4 + 40);
        assert_eq!(r.body_len, 4 + 40);
        let r = parse_request(&m[..72 + 8], m.len()).unwrap();
        assert_eq!(r.body_len, 44);
        let m = wire_size::request(1, 0, wire_size::NO_PARAMS_2WAY, true, Args::None);
        let r = parse_request(&m, m.len()).unwrap();
        assert!(r.response && r.body.is_empty());
    }

    #[test]
    fn rejects_mangled_requests_without_panicking() {
        let d = SeqData::new(DataType::Octet, 5);
        let m = wire_size::request(1, 0, "sendOctetSeq", true, Args::Seq(&d));
        for cut in 0..m.len() {
            let _ = parse_request(&m[..cut], m.len());
            let _ = parse_request(&m[..cut], cut);
        }
        for i in 0..m.len() {
            for v in [0u8, 1, 0x7f, 0xff] {
                let mut x = m.clone();
                x[i] = v;
                let _ = parse_request(&x, x.len());
            }
        }
        assert!(parse_request(b"GIOP", 4).is_err());
    }

    #[test]
    fn garbage_closes_the_connection() {
        let addr = RawOrb.serve("127.0.0.1:0".parse().unwrap()).unwrap();
        let mut s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        let mut buf = [0u8; 16];
        let n = io::Read::read(&mut s, &mut buf).unwrap_or(0);
        assert_eq!(n, 0, "server should close on garbage");
        // The server still serves others.
        let mut c = RawClient::connect(&addr).unwrap();
        c.no_params_2way(0).unwrap();
        assert!(c.no_params_2way(5).is_err(), "unknown object closes");
    }

    #[test]
    fn sync_counts_payload_bytes() {
        let addr = RawOrb.serve("127.0.0.1:0".parse().unwrap()).unwrap();
        let mut c = RawClient::connect(&addr).unwrap();
        for ty in DataType::ALL {
            for size in [1024, 100, 128 << 10, 1 << 20] {
                let d = SeqData::with_bytes(ty, size);
                for _ in 0..5 {
                    c.send_seq(&d).unwrap();
                }
                assert_eq!(c.sync().unwrap(), 5 * d.payload_bytes(), "{ty:?} {size}");
                c.send_seq_2way(&SeqData::new(DataType::Struct, size / 32 + 1))
                    .unwrap();
                assert_eq!(c.sync().unwrap(), (size / 32 + 1) as u64 * 32);
            }
        }
        c.activate(1000).unwrap();
        c.no_params_2way(999).unwrap();
        c.no_params_1way(998).unwrap();
        c.send_seq_2way(&SeqData::new(DataType::Struct, 3)).unwrap();
        c.demux_call(99).unwrap();
        assert_eq!(c.sync().unwrap(), 96);
    }
}
