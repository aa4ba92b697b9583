//! Resource limits applied while decoding and reassembling messages.
//!
//! Every size read from the wire is checked against these before anything
//! is allocated for it, so a hostile peer cannot make the ORB reserve
//! memory that it has not actually sent (or is not allowed to send).

/// Limits on what a peer may send; [`Limits::default`] is sane for a
/// general-purpose ORB, and the `with_*` methods adjust it builder-style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest `message_size` accepted in a header, and largest message
    /// that fragment reassembly may produce.
    pub max_message_size: u32,
    /// Total bytes that all partially reassembled messages may hold at once.
    pub max_fragments_bytes: usize,
    /// Most fragmented messages that may be in reassembly at once.
    pub max_partial_messages: usize,
    /// Most Fragment messages that one message may be split into.
    pub max_fragments_per_message: usize,
    /// Most entries in a service context list.
    pub max_service_contexts: u32,
}

impl Limits {
    /// 64 MiB messages, 64 MiB of partial messages in 64 concurrent
    /// reassemblies of at most 65 536 fragments, 64 service contexts.
    pub const DEFAULT: Limits = Limits {
        max_message_size: 64 << 20,
        max_fragments_bytes: 64 << 20,
        max_partial_messages: 64,
        max_fragments_per_message: 65_536,
        max_service_contexts: 64,
    };

    /// Sets [`Limits::max_message_size`].
    #[must_use]
    pub fn with_max_message_size(mut self, n: u32) -> Self {
        self.max_message_size = n;
        self
    }

    /// Sets [`Limits::max_fragments_bytes`].
    #[must_use]
    pub fn with_max_fragments_bytes(mut self, n: usize) -> Self {
        self.max_fragments_bytes = n;
        self
    }

    /// Sets [`Limits::max_partial_messages`].
    #[must_use]
    pub fn with_max_partial_messages(mut self, n: usize) -> Self {
        self.max_partial_messages = n;
        self
    }

    /// Sets [`Limits::max_fragments_per_message`].
    #[must_use]
    pub fn with_max_fragments_per_message(mut self, n: usize) -> Self {
        self.max_fragments_per_message = n;
        self
    }

    /// Sets [`Limits::max_service_contexts`].
    #[must_use]
    pub fn with_max_service_contexts(mut self, n: u32) -> Self {
        self.max_service_contexts = n;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}
