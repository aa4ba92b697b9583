//! A naming context implemented in Rust through the generated skeleton
//! and served by Peregrine: what users implementing CosNaming start from,
//! and the client side's bookkeeping that a real service cannot show
//! (the binding iterator is destroyed exactly once, exhausted or not).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use peregrine::SystemExceptionKind;
use peregrine::{CompletionStatus, ObjectRef, Orb, Poa, Servant, SystemException};
use peregrine_naming::cos_naming::naming_context::{
    self as nc, BindContextError, BindError, BindNewContextError, DestroyError, RebindContextError,
    RebindError, ResolveError, UnbindError,
};
use peregrine_naming::cos_naming::{
    BindingIterator, BindingIteratorSkeleton, NamingContext, NamingContextSkeleton,
};
use peregrine_naming::{
    Binding, BindingIteratorRef, BindingList, BindingType, NameComponent, NamingClient,
    NamingContextRef, NamingError, NotFoundReason,
};

fn no_implement() -> SystemException {
    SystemException::new(SystemExceptionKind::NoImplement, 0, CompletionStatus::No)
}

fn binding(i: usize) -> Binding {
    Binding {
        binding_name: vec![NameComponent::new(format!("b{i}"), "")],
        binding_type: BindingType::Nobject,
    }
}

/// Hands out what `list` did not return; counts `destroy` calls.
struct Iter {
    rest: Mutex<Vec<Binding>>,
    destroyed: Arc<AtomicUsize>,
}

impl BindingIterator for Iter {
    fn next_one(&self) -> Result<(bool, Binding), SystemException> {
        let mut rest = self.rest.lock().unwrap();
        Ok(if rest.is_empty() {
            (false, binding(usize::MAX))
        } else {
            (true, rest.remove(0))
        })
    }

    fn next_n(&self, how_many: u32) -> Result<(bool, BindingList), SystemException> {
        let mut rest = self.rest.lock().unwrap();
        let n = rest.len().min(how_many as usize);
        let batch: Vec<Binding> = rest.drain(..n).collect();
        Ok((!batch.is_empty(), batch))
    }

    fn destroy(&self) -> Result<(), SystemException> {
        self.destroyed.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// A read-only context of `size` bindings `b0`, `b1`, ...; `resolve`
/// raises `NotFound` for every name.
struct Context {
    poa: Poa,
    size: usize,
    destroyed: Arc<AtomicUsize>,
}

impl NamingContext for Context {
    fn bind(&self, _: &[NameComponent], _: Option<&ObjectRef>) -> Result<(), BindError> {
        Err(no_implement().into())
    }
    fn rebind(&self, _: &[NameComponent], _: Option<&ObjectRef>) -> Result<(), RebindError> {
        Err(no_implement().into())
    }
    fn bind_context(
        &self,
        _: &[NameComponent],
        _: Option<&NamingContextRef>,
    ) -> Result<(), BindContextError> {
        Err(no_implement().into())
    }
    fn rebind_context(
        &self,
        _: &[NameComponent],
        _: Option<&NamingContextRef>,
    ) -> Result<(), RebindContextError> {
        Err(no_implement().into())
    }
    fn resolve(&self, n: &[NameComponent]) -> Result<Option<ObjectRef>, ResolveError> {
        Err(nc::NotFound {
            why: NotFoundReason::MissingNode,
            rest_of_name: n.to_vec(),
        }
        .into())
    }
    fn unbind(&self, _: &[NameComponent]) -> Result<(), UnbindError> {
        Err(no_implement().into())
    }
    fn new_context(&self) -> Result<Option<NamingContextRef>, SystemException> {
        Err(no_implement())
    }
    fn bind_new_context(
        &self,
        _: &[NameComponent],
    ) -> Result<Option<NamingContextRef>, BindNewContextError> {
        Err(no_implement().into())
    }
    fn destroy(&self) -> Result<(), DestroyError> {
        Err(nc::NotEmpty {}.into())
    }
    fn list(
        &self,
        how_many: u32,
    ) -> Result<(BindingList, Option<BindingIteratorRef>), SystemException> {
        let mut all: Vec<Binding> = (0..self.size).map(binding).collect();
        let rest = all.split_off(all.len().min(how_many as usize));
        if rest.is_empty() {
            return Ok((all, None));
        }
        let iter: Arc<dyn Servant> = Arc::new(BindingIteratorSkeleton::new(Iter {
            rest: Mutex::new(rest),
            destroyed: self.destroyed.clone(),
        }));
        let obj = self
            .poa
            .servant_to_object(&iter)
            .map_err(|_| no_implement())?;
        Ok((all, Some(BindingIteratorRef::unchecked_narrow(obj))))
    }
}

/// A server ORB serving one `Context`, and a client of it.
struct Fixture {
    server: Orb,
    naming: NamingClient,
    destroyed: Arc<AtomicUsize>,
}

impl Fixture {
    fn new(size: usize) -> Fixture {
        let server = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
        let poa = server.root_poa();
        poa.manager().activate().unwrap();
        let destroyed = Arc::new(AtomicUsize::new(0));
        let ctx: Arc<dyn Servant> = Arc::new(NamingContextSkeleton::new(Context {
            poa: poa.clone(),
            size,
            destroyed: destroyed.clone(),
        }));
        let ior = server.object_to_string(&poa.servant_to_object(&ctx).unwrap());
        let client = Orb::builder()
            .call_timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        let obj = client.string_to_object(&ior).unwrap();
        let naming = NamingClient::from_object(obj).unwrap();
        Fixture {
            server,
            naming,
            destroyed,
        }
    }

    fn destroyed(&self) -> usize {
        self.destroyed.load(Ordering::SeqCst)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.server.shutdown(true);
    }
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("b{i}")).collect()
}

#[test]
fn an_exhausted_listing_destroys_its_iterator_once() {
    let f = Fixture::new(7);
    let got: Vec<String> = f
        .naming
        .list_in_batches(2)
        .unwrap()
        .map(|b| b.unwrap().name())
        .collect();
    assert_eq!(got, names(7));
    assert_eq!(f.destroyed(), 1);
}

#[test]
fn an_abandoned_listing_destroys_its_iterator_on_drop() {
    let f = Fixture::new(7);
    let mut it = f.naming.list_in_batches(3).unwrap();
    assert_eq!(it.next().unwrap().unwrap().name(), "b0");
    assert_eq!(f.destroyed(), 0);
    drop(it);
    assert_eq!(f.destroyed(), 1);
}

#[test]
fn a_listing_that_fits_the_first_batch_has_no_iterator() {
    let f = Fixture::new(5);
    let got: Vec<String> = f
        .naming
        .list()
        .unwrap()
        .map(|b| b.unwrap().name())
        .collect();
    assert_eq!(got, names(5));
    assert_eq!(f.destroyed(), 0);
    assert_eq!(f.naming.list_in_batches(5).unwrap().count(), 5);
    assert_eq!(f.naming.list_in_batches(0).unwrap().count(), 5);
    assert_eq!(
        f.destroyed(),
        1,
        "batch 0 is 1: four bindings came by next_n"
    );
}

#[test]
fn user_exceptions_raised_by_a_rust_servant_reach_the_client_typed() {
    let f = Fixture::new(0);
    match f.naming.resolve_str("x/y.z") {
        Err(NamingError::NotFound { why, rest_of_name }) => {
            assert_eq!(why, NotFoundReason::MissingNode);
            assert_eq!(peregrine_naming::to_string(&rest_of_name), "x/y.z");
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    let e = f.naming.context().destroy().unwrap_err();
    assert_eq!(NamingError::from(e), NamingError::NotEmpty);
    match f.naming.bind_str("a", f.naming.context().object()) {
        Err(NamingError::System(e)) => {
            assert_eq!(e.kind, SystemExceptionKind::NoImplement)
        }
        other => panic!("expected NO_IMPLEMENT, got {other:?}"),
    }
}
