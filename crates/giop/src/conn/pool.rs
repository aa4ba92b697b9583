//! Message buffers handed back by the driver, reused for the next
//! message this end writes or receives: a connection in steady use then
//! allocates nothing per message (an allocation and a free cost more than
//! the rest of a null call's protocol work).

/// Buffers kept at most: one per message in flight each way is plenty.
const MAX_SPARE: usize = 4;
/// Larger buffers are freed, not kept: one large message must not pin
/// its memory for the life of the connection.
const MAX_SPARE_CAPACITY: usize = 64 << 10;

/// Spare message buffers, empty, with their capacity.
#[derive(Debug, Default)]
pub(crate) struct BufPool {
    spare: Vec<Vec<u8>>,
}

impl BufPool {
    /// An empty buffer with room for at least `len` bytes.
    #[inline(always)]
    pub(crate) fn take(&mut self, len: usize) -> Vec<u8> {
        // A buffer large enough, else any (grown): a small reply's
        // buffer must not be picked for a large request while the
        // request's own buffer waits.
        if self.spare.last().is_some_and(|b| b.capacity() >= len) {
            return self.spare.pop().unwrap_or_default();
        }
        let fits = self.spare.iter().rposition(|b| b.capacity() >= len);
        match fits.or_else(|| self.spare.len().checked_sub(1)) {
            Some(i) => {
                let mut buf = self.spare.swap_remove(i);
                buf.reserve(len);
                buf
            }
            None => Vec::with_capacity(len),
        }
    }

    /// Keeps `buf` for a later message, if it is worth keeping.
    #[inline(always)]
    pub(crate) fn put(&mut self, mut buf: Vec<u8>) {
        let cap = buf.capacity();
        if cap != 0 && cap <= MAX_SPARE_CAPACITY && self.spare.len() < MAX_SPARE {
            buf.clear();
            self.spare.push(buf);
        }
    }

    /// Frees every spare buffer (the connection closed).
    pub(crate) fn clear(&mut self) {
        self.spare = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_what_it_was_given() {
        let mut p = BufPool::default();
        let mut b = Vec::with_capacity(100);
        b.extend_from_slice(b"old bytes");
        let ptr = b.as_ptr();
        p.put(b);
        let again = p.take(50);
        assert_eq!(again.as_ptr(), ptr);
        assert!(again.is_empty());
        assert!(p.take(10).capacity() >= 10);
    }

    #[test]
    fn prefers_a_buffer_that_fits() {
        let mut p = BufPool::default();
        let big = Vec::with_capacity(200);
        let ptr = big.as_ptr();
        p.put(big);
        p.put(Vec::with_capacity(16));
        let fits = p.take(100);
        assert_eq!(fits.as_ptr(), ptr);
        assert!(p.take(100).capacity() >= 100);
    }

    #[test]
    fn keeps_few_and_small_buffers() {
        let mut p = BufPool::default();
        p.put(Vec::with_capacity(MAX_SPARE_CAPACITY + 1));
        p.put(Vec::new());
        assert!(p.spare.is_empty());
        for _ in 0..MAX_SPARE + 3 {
            p.put(Vec::with_capacity(8));
        }
        assert_eq!(p.spare.len(), MAX_SPARE);
    }
}
