//! The ORB: lifecycle, configuration, initial references.

use std::sync::Arc;

use peregrine_giop::Ior;

use crate::runtime::ObjectRef;

/// The ORB (cheap to clone: `Arc` inside).
#[derive(Clone)]
pub struct Orb {
    #[allow(dead_code)]
    inner: Arc<OrbInner>,
}

struct OrbInner {}

impl Orb {
    /// A reference for `ior` through this ORB; `None` for a nil IOR.
    pub fn object_from_ior(&self, ior: Ior) -> Option<ObjectRef> {
        if ior.is_nil() {
            None
        } else {
            Some(ObjectRef::from_ior(self, ior))
        }
    }
}
