//! Configuration shared by both ends of a connection.

use std::time::Duration;

use peregrine_cdr::{ByteOrder, GiopVersion};

use crate::limits::Limits;
use crate::service_context::CodeSetContext;

/// How a connection machine encodes, fragments, times out and follows
/// forwards; [`Config::default`] speaks GIOP 1.2 in the native byte order
/// with no fragmentation and no idle timeout, and the `with_*` methods
/// adjust it builder-style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub(crate) version: GiopVersion,
    pub(crate) order: ByteOrder,
    pub(crate) limits: Limits,
    pub(crate) max_fragment_size: Option<usize>,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) max_forwards: u32,
    pub(crate) codesets: Option<CodeSetContext>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            version: GiopVersion::V1_2,
            order: ByteOrder::NATIVE,
            limits: Limits::DEFAULT,
            max_fragment_size: None,
            idle_timeout: None,
            max_forwards: 8,
            codesets: None,
        }
    }
}

impl Config {
    /// GIOP version of the messages this end starts (a server answers
    /// each request in the request's version).
    #[must_use]
    pub fn with_version(mut self, version: GiopVersion) -> Self {
        self.version = version;
        self
    }

    /// Byte order of the messages this end sends.
    #[must_use]
    pub fn with_byte_order(mut self, order: ByteOrder) -> Self {
        self.order = order;
        self
    }

    /// Limits on what the peer may send.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Splits outgoing Request and Reply messages (and, in GIOP 1.2,
    /// LocateRequest and LocateReply) longer than `max` bytes into
    /// fragments of at most `max` bytes (at least
    /// [`crate::fragment::MIN_FRAGMENT_LEN`]). GIOP 1.0 has no fragments,
    /// so its messages always go whole.
    #[must_use]
    pub fn with_max_fragment_size(mut self, max: usize) -> Self {
        self.max_fragment_size = Some(max);
        self
    }

    /// Closes the connection once nothing has been outstanding and nothing
    /// has moved for `timeout`.
    #[must_use]
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = Some(timeout);
        self
    }

    /// Most forwards (LOCATION_FORWARD, LOCATION_FORWARD_PERM,
    /// OBJECT_FORWARD) one call follows before it fails with `TRANSIENT`.
    #[must_use]
    pub fn with_max_forwards(mut self, n: u32) -> Self {
        self.max_forwards = n;
        self
    }

    /// The transmission code sets the client chose (from the target's
    /// code set component); sent once, in the first request's service
    /// contexts.
    #[must_use]
    pub fn with_codesets(mut self, codesets: CodeSetContext) -> Self {
        self.codesets = Some(codesets);
        self
    }

    /// The GIOP version this end starts messages in.
    pub fn version(&self) -> GiopVersion {
        self.version
    }

    /// The byte order this end sends in.
    pub fn byte_order(&self) -> ByteOrder {
        self.order
    }

    /// The limits applied to input.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }
}
