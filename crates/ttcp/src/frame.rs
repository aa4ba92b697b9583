//! Reading whole GIOP messages off a byte stream with as few `read`
//! calls as the kernel allows: one large buffer, complete messages handed
//! out in place, the remainder moved to the front when it runs out.

use std::io::{self, Read};

use peregrine_giop::HEADER_LEN;

use crate::wire_size;

/// Largest message accepted; a header announcing more closes the
/// connection.
pub const MAX_MESSAGE: usize = 64 << 20;

/// Splits a stream into GIOP messages (header included).
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// An `InvalidData` error.
pub fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// The message size announced by a GIOP header (checked magic), total
/// length with the header.
pub fn frame_len(header: &[u8]) -> io::Result<usize> {
    if header.len() < HEADER_LEN || &header[..4] != b"GIOP" {
        return Err(invalid("not a GIOP message"));
    }
    let size: [u8; 4] = [header[8], header[9], header[10], header[11]];
    let size = if header[6] & 1 == 1 {
        u32::from_le_bytes(size)
    } else {
        u32::from_be_bytes(size)
    } as usize;
    let total = HEADER_LEN + size;
    if total > MAX_MESSAGE {
        return Err(invalid("GIOP message too large"));
    }
    Ok(total)
}

/// The `u32` at offset `at` of message `m`, in the byte order its GIOP
/// header gives (`little`); a message too short is an error.
pub fn u32_at(m: &[u8], at: usize, little: bool) -> io::Result<u32> {
    let b: [u8; 4] = m
        .get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| invalid("truncated message"))?;
    Ok(if little {
        u32::from_le_bytes(b)
    } else {
        u32::from_be_bytes(b)
    })
}

/// Checks that `m` (a whole message) is a GIOP 1.2 `NO_EXCEPTION` reply
/// to request `id`.
pub fn check_reply(m: &[u8], id: u32) -> io::Result<()> {
    if m.get(7) != Some(&1) {
        return Err(invalid("expected a reply"));
    }
    if m.get(4..6) != Some(&[1, 2][..]) {
        return Err(invalid("not a GIOP 1.2 reply"));
    }
    let little = m[6] & 1 == 1;
    if u32_at(m, wire_size::REQUEST_ID_AT, little)? != id {
        return Err(invalid("reply to another request"));
    }
    if u32_at(m, wire_size::REPLY_STATUS_AT, little)? != 0 {
        return Err(invalid("exception reply"));
    }
    Ok(())
}

impl<R: Read> FrameReader<R> {
    /// A reader with a buffer of `capacity` bytes (grown for larger
    /// messages).
    pub fn new(inner: R, capacity: usize) -> Self {
        FrameReader {
            inner,
            buf: vec![0; capacity.max(HEADER_LEN)],
            start: 0,
            end: 0,
        }
    }

    /// The next complete message; `None` at end of stream between
    /// messages. Bad headers and truncated messages are errors.
    pub fn next_frame(&mut self) -> io::Result<Option<&[u8]>> {
        let total = loop {
            let avail = self.end - self.start;
            let need = if avail >= HEADER_LEN {
                let total = frame_len(&self.buf[self.start..self.end])?;
                if avail >= total {
                    break total;
                }
                total
            } else {
                HEADER_LEN
            };
            if self.start == self.end {
                self.start = 0;
                self.end = 0;
            } else if self.start + need > self.buf.len() {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if need > self.buf.len() {
                self.buf.resize(need, 0);
            }
            let n = loop {
                match self.inner.read(&mut self.buf[self.end..]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    r => break r?,
                }
            };
            if n == 0 {
                return if avail == 0 {
                    Ok(None)
                } else {
                    Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "connection closed inside a message",
                    ))
                };
            }
            self.end += n;
        };
        let s = self.start;
        self.start += total;
        Ok(Some(&self.buf[s..s + total]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire_size;

    /// A reader that hands out at most `step` bytes per read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn splits_messages_whatever_the_read_sizes() {
        let a = wire_size::reply(1, None);
        let b = wire_size::reply(2, Some(7));
        let c = wire_size::request(3, 0, "x", true, wire_size::Args::ULong(5));
        let all = [a.clone(), b.clone(), c.clone()].concat();
        for step in [1, 3, 12, 13, 1000] {
            for cap in [12, 16, 4096] {
                let mut r = FrameReader::new(Trickle { data: &all, step }, cap);
                assert_eq!(r.next_frame().unwrap().unwrap(), &a[..]);
                assert_eq!(r.next_frame().unwrap().unwrap(), &b[..]);
                assert_eq!(r.next_frame().unwrap().unwrap(), &c[..]);
                assert!(r.next_frame().unwrap().is_none());
            }
        }
    }

    #[test]
    fn replies_are_checked() {
        let m = wire_size::reply(9, None);
        check_reply(&m, 9).unwrap();
        assert!(check_reply(&m, 8).is_err(), "another request id");
        assert!(check_reply(&m[..14], 9).is_err(), "truncated");
        let mut exc = m.clone();
        exc[wire_size::REPLY_STATUS_AT..wire_size::REPLY_STATUS_AT + 4]
            .copy_from_slice(&2u32.to_ne_bytes());
        assert!(check_reply(&exc, 9).is_err(), "system exception");
        let req = wire_size::request(9, 0, "x", true, wire_size::Args::None);
        assert!(check_reply(&req, 9).is_err(), "a request");
        let mut old = m.clone();
        old[5] = 0;
        assert!(check_reply(&old, 9).is_err(), "GIOP 1.0");
        assert_eq!(u32_at(&m, 12, cfg!(target_endian = "little")).unwrap(), 9);
    }

    #[test]
    fn garbage_and_truncation_are_errors() {
        let mut r = FrameReader::new(&b"HTTP/1.1 200 OK\r\n"[..], 64);
        assert!(r.next_frame().is_err());
        let m = wire_size::reply(1, None);
        let mut r = FrameReader::new(&m[..m.len() - 1], 64);
        assert!(r.next_frame().is_err());
        let mut huge = m.clone();
        huge[8..12].copy_from_slice(&[0xff; 4]);
        let mut r = FrameReader::new(&huge[..], 64);
        assert!(r.next_frame().is_err());
    }
}
