//! The context a value's state is decoded in.
//!
//! A valuetype whose state holds object references cannot decode them
//! from the bytes alone: a reference is bound to an ORB, and this crate
//! knows none. The code that starts decoding such a value (generated
//! code that has the ORB at hand) hands the reader an opaque context;
//! the value's generated `read_state` takes it back and downcasts it to
//! the ORB's type. The context lives in the value bookkeeping that the
//! first value allocates anyway, so readers and values without
//! references neither carry nor look at it.

use alloc::sync::Arc;
use core::any::Any;

use crate::Reader;

/// An opaque context for value states that need more than the bytes
/// (an ORB to bind object references to), downcast by whoever reads it.
pub type ValueContext = Arc<dyn Any + Send + Sync>;

impl Reader<'_> {
    /// Sets the context the states of values read from here on are
    /// decoded in, unless one is set already (the outermost decoder,
    /// which started the message, knows best).
    pub fn set_value_context(&mut self, context: impl FnOnce() -> ValueContext) {
        let st = self.vstate();
        if st.context.is_none() {
            st.context = Some(context());
        }
    }

    /// The context set by [`Reader::set_value_context`], if any.
    pub fn value_context(&self) -> Option<&ValueContext> {
        self.values.as_ref().and_then(|v| v.context.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use alloc::sync::Arc;

    use crate::{ByteOrder, Reader};

    #[test]
    fn the_first_context_stays_and_clones_share_it() {
        let mut r = Reader::new(&[], ByteOrder::Big);
        assert!(r.value_context().is_none());
        r.set_value_context(|| Arc::new(7u32));
        r.set_value_context(|| unreachable!("set already"));
        let c = r.clone();
        for r in [&r, &c] {
            let got = r.value_context().expect("set").clone();
            assert_eq!(*got.downcast::<u32>().expect("a u32"), 7);
        }
    }
}
