//! Listing a context: the first batch from `NamingContext::list`, then
//! the rest from its `BindingIterator`, `how_many` at a time, as one
//! Rust iterator that destroys the remote iterator when done.

use std::collections::VecDeque;
use std::iter::FusedIterator;

use crate::{Binding, BindingIteratorRef, NamingContextRef, NamingError};

/// The bindings of a naming context, fetched in batches
/// ([`NamingClient::list`](crate::NamingClient::list)).
///
/// Each item is a [`Binding`] or the error of the `next_n` call that
/// should have brought it (after which the iteration ends). The
/// service's `BindingIterator`, if it made one, is destroyed when the
/// last binding has been read or when this value is dropped, so an
/// abandoned listing does not leave an object behind in the service.
///
/// ```no_run
/// # fn demo(naming: &peregrine_naming::NamingClient) -> Result<(), peregrine_naming::NamingError> {
/// let names: Vec<String> = naming
///     .list()?
///     .map(|b| b.map(|b| b.name()))
///     .collect::<Result<_, _>>()?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Bindings {
    batch: VecDeque<Binding>,
    iterator: Option<BindingIteratorRef>,
    how_many: u32,
}

impl Bindings {
    /// Calls `list(how_many)` on `ctx`; `how_many` is at least 1 (a
    /// `next_n(0)` is `BAD_PARAM`).
    pub(crate) fn start(ctx: &NamingContextRef, how_many: u32) -> Result<Self, NamingError> {
        let how_many = how_many.max(1);
        let (first, iterator) = ctx.list(how_many)?;
        Ok(Bindings {
            batch: first.into(),
            iterator,
            how_many,
        })
    }

    /// Destroys the remote iterator, once. Its failure is ignored: the
    /// service may already have reclaimed an exhausted iterator, and
    /// nothing the caller could do follows from it.
    fn finish(&mut self) {
        if let Some(it) = self.iterator.take() {
            let _ = it.destroy();
        }
    }
}

impl Iterator for Bindings {
    type Item = Result<Binding, NamingError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(b) = self.batch.pop_front() {
                return Some(Ok(b));
            }
            let it = self.iterator.as_ref()?;
            match it.next_n(self.how_many) {
                // A service that says "more" but sends nothing would make
                // this loop forever: treat it as the end.
                Ok((true, more)) if !more.is_empty() => self.batch.extend(more),
                Ok((_, rest)) => {
                    self.batch.extend(rest);
                    self.finish();
                }
                Err(e) => {
                    self.finish();
                    return Some(Err(e.into()));
                }
            }
        }
    }
}

impl FusedIterator for Bindings {}

impl Drop for Bindings {
    fn drop(&mut self) {
        self.finish();
    }
}
