//! Reading across chunk boundaries.
//!
//! While a chunked value is open the reader's input is narrowed to the
//! end of the current chunk, so the fast paths of every read stay as they
//! are: only a read that runs past the narrowed end lands here, and moves
//! on to the next chunk when the current one is used up.

use super::VALUE_TAG_MIN;
use crate::reader::truncated;
use crate::{ByteOrder, CdrError, Reader, Result};

impl<'a> Reader<'a> {
    /// True while reading a chunked value's state.
    #[inline]
    pub(crate) fn in_chunked_value(&self) -> bool {
        self.values.as_ref().is_some_and(|v| v.level > 0)
    }

    /// The end of the whole input (the narrowed length is the chunk's).
    pub(crate) fn input_end(&self) -> usize {
        match &self.values {
            Some(v) => v.real_len,
            None => self.buf.len(),
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn align_slow(&mut self, n: usize) -> Result<()> {
        loop {
            let pad = self.position().wrapping_neg() & (n - 1);
            if pad <= self.remaining() {
                self.pos += pad;
                return Ok(());
            }
            if !self.in_chunked_value() {
                return Err(truncated(pad, self.remaining()));
            }
            // What is left of the chunk is shorter than the padding: it
            // is padding, and the data starts in the next chunk.
            self.pos = self.buf.len();
            self.next_chunk()?;
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn read_bytes_slow(&mut self, n: usize) -> Result<&'a [u8]> {
        if !self.in_chunked_value() {
            return Err(truncated(n, self.remaining()));
        }
        if self.remaining() > 0 {
            // Primitives, strings and arrays of primitives never cross
            // a chunk's end.
            return Err(CdrError::BadChunk);
        }
        self.next_chunk()?;
        if n > self.remaining() {
            return Err(CdrError::BadChunk);
        }
        self.read_bytes(n)
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn read_u8_slow(&mut self) -> Result<u8> {
        Ok(self.read_bytes_slow(1)?[0])
    }

    /// A count checked against what remains of the whole input: the
    /// elements of a sequence may spread over several chunks.
    #[cold]
    #[inline(never)]
    pub(crate) fn check_len_slow(&self, len: u32, need: u64) -> Result<usize> {
        let remaining = self.input_end() - self.pos;
        if self.in_chunked_value() && need <= remaining as u64 {
            return Ok(len as usize);
        }
        Err(CdrError::LengthExceedsInput {
            len: u64::from(len),
            remaining: self.remaining(),
        })
    }

    /// At the end of the current chunk inside a chunked value's state:
    /// reads the next chunk's length and narrows the input to it.
    pub(crate) fn next_chunk(&mut self) -> Result<()> {
        if self
            .values
            .as_ref()
            .is_some_and(|v| v.pending_end.is_some())
        {
            // An end tag already closed this value.
            return Err(CdrError::BadChunk);
        }
        let len = self.read_outside_long()?;
        if len == 0 {
            return Err(CdrError::BadChunk);
        }
        if len >= VALUE_TAG_MIN {
            // Values nested in this one are read as values, not as data.
            return Err(CdrError::BadValueTag(len));
        }
        self.enter_chunk(len)
    }

    /// Narrows the input to a chunk of `len` bytes starting here.
    pub(crate) fn enter_chunk(&mut self, len: u32) -> Result<()> {
        let end = self
            .pos
            .checked_add(len as usize)
            .filter(|&end| end <= self.input_end())
            .ok_or(CdrError::BadChunk)?;
        self.buf.set_len(end);
        Ok(())
    }

    /// Reads an aligned `long` outside any chunk (a chunk length, a tag),
    /// leaving the input widened to its whole length.
    pub(crate) fn read_outside_long(&mut self) -> Result<u32> {
        let end = self.input_end();
        self.buf.set_len(end);
        let pad = self.position().wrapping_neg() & 3;
        if pad + 4 > self.remaining() {
            return Err(truncated(pad + 4, self.remaining()));
        }
        self.pos += pad;
        let b = self.buf.slice(self.pos, self.pos + 4);
        self.pos += 4;
        let a = [b[0], b[1], b[2], b[3]];
        Ok(match self.order() {
            ByteOrder::Big => u32::from_be_bytes(a),
            ByteOrder::Little => u32::from_le_bytes(a),
        })
    }
}
