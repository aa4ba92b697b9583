//! [`NamingClient`]: a naming context used with stringified names, the
//! way programs use CosNaming, over the generated `NamingContextRef`.
//!
//! Names are parsed on the client ([`to_name`]), so every helper works
//! with any CosNaming 1.x service, `NamingContextExt` or not, and a
//! malformed name fails before any call.

use peregrine::orb::{InitialReference, ResolveError};
use peregrine::{ObjectRef, Orb};

use crate::{to_name, Bindings, NameComponent, NamingContextExtRef, NamingContextRef, NamingError};

/// A naming context and the calls a CosNaming user makes on it, with
/// stringified names (`"apps/greeter.service"`) and one error type.
///
/// Cloning is cheap (it is an object reference). The generated stub is
/// at hand through [`NamingClient::context`] for what the helpers do not
/// cover (`bind_context`, `destroy`, ...).
///
/// ```no_run
/// use peregrine::Orb;
/// use peregrine_naming::NamingClient;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let orb = Orb::builder()
///     .init_ref("NameService", "corbaloc::127.0.0.1:2809/NameService")
///     .build()?;
/// let naming = NamingClient::from_orb(&orb)?;
/// let obj = naming.resolve_str("apps/greeter.service")?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct NamingClient {
    ctx: NamingContextRef,
}

impl NamingClient {
    /// The batch size of [`NamingClient::list`]: bindings per `list` and
    /// `next_n` call.
    pub const LIST_BATCH: u32 = 100;

    /// A client of `ctx`, a [`NamingContextRef`] or a
    /// [`NamingContextExtRef`].
    ///
    /// ```no_run
    /// # fn demo(orb: &peregrine::Orb) -> Result<(), Box<dyn std::error::Error>> {
    /// use peregrine_naming::{NamingClient, NamingContextExtRef};
    ///
    /// let obj = orb.string_to_object("corbaloc::127.0.0.1:2809/NameService")?;
    /// let ext = NamingContextExtRef::narrow(obj)?.expect("a NamingContextExt");
    /// let naming = NamingClient::new(ext);
    /// # Ok(()) }
    /// ```
    pub fn new(ctx: impl Into<NamingContextRef>) -> Self {
        NamingClient { ctx: ctx.into() }
    }

    /// A client of `obj` after checking (`_is_a`, a call unless its IOR's
    /// type id says so) that it is a naming context.
    ///
    /// Fails with [`NamingError::WrongType`] if it is not, or with the
    /// system exception of the check (`TRANSIENT` when nothing answers).
    ///
    /// ```no_run
    /// # fn demo(orb: &peregrine::Orb) -> Result<(), Box<dyn std::error::Error>> {
    /// let obj = orb.string_to_object("corbaloc::127.0.0.1:2809/NameService")?;
    /// let naming = peregrine_naming::NamingClient::from_object(obj)?;
    /// # Ok(()) }
    /// ```
    pub fn from_object(obj: ObjectRef) -> Result<Self, NamingError> {
        if obj.is_a(NamingContextRef::REPOSITORY_ID)? {
            Ok(NamingClient::new(NamingContextRef::unchecked_narrow(obj)))
        } else {
            Err(NamingError::WrongType {
                name: String::new(),
                expected: NamingContextRef::REPOSITORY_ID,
            })
        }
    }

    /// The client of the ORB's `NameService` initial reference, configured
    /// with `-ORBInitRef NameService=corbaloc::host:port/NameService`
    /// (through [`OrbBuilder::args`](peregrine::OrbBuilder::args)),
    /// [`OrbBuilder::init_ref`](peregrine::OrbBuilder::init_ref) or
    /// `-ORBDefaultInitRef`, and checked as in
    /// [`NamingClient::from_object`].
    ///
    /// Fails with [`NamingError::NotConfigured`] when the ORB has no such
    /// reference.
    ///
    /// ```no_run
    /// use peregrine::Orb;
    /// use peregrine_naming::NamingClient;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut args: Vec<String> = std::env::args().collect();
    /// let orb = Orb::builder().args(&mut args).build()?;
    /// let naming = NamingClient::from_orb(&orb)?;
    /// # Ok(()) }
    /// ```
    pub fn from_orb(orb: &Orb) -> Result<Self, NamingError> {
        match orb.resolve_initial_references("NameService") {
            Ok(InitialReference::Object(obj)) => NamingClient::from_object(obj),
            // Only `RootPOA` and `POACurrent` are local objects.
            Ok(_) | Err(ResolveError::InvalidName(_)) => Err(NamingError::NotConfigured),
            Err(ResolveError::System(e)) => Err(NamingError::System(e)),
        }
    }

    /// The naming context, for the generated operations.
    pub fn context(&self) -> &NamingContextRef {
        &self.ctx
    }

    /// `resolve` of a name given as components.
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient) -> Result<(), peregrine_naming::NamingError> {
    /// use peregrine_naming::NameComponent;
    ///
    /// let obj = naming.resolve(&[NameComponent::new("greeter", "service")])?;
    /// # Ok(()) }
    /// ```
    pub fn resolve(&self, name: &[NameComponent]) -> Result<ObjectRef, NamingError> {
        match self.ctx.resolve(name) {
            Ok(Some(obj)) => Ok(obj),
            Ok(None) => Err(NamingError::Nil {
                name: crate::to_string(name),
            }),
            Err(e) => Err(NamingError::from(e).for_name(&crate::to_string(name))),
        }
    }

    /// `resolve` of a stringified name (`"apps/greeter.service"`).
    ///
    /// A name bound to a nil reference is [`NamingError::Nil`]; a missing
    /// one [`NamingError::NotFound`] with the part that was not found.
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient) -> Result<(), peregrine_naming::NamingError> {
    /// let obj = naming.resolve_str("apps/greeter.service")?;
    /// # Ok(()) }
    /// ```
    pub fn resolve_str(&self, name: &str) -> Result<ObjectRef, NamingError> {
        self.resolve(&to_name(name)?)
    }

    /// `resolve` of a stringified name, checked (`_is_a`) to be an `R`:
    /// any reference type generated from IDL (they implement
    /// [`peregrine::Reference`]), a CosNaming one or [`ObjectRef`]. An object of another interface is
    /// [`NamingError::WrongType`].
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient) -> Result<(), peregrine_naming::NamingError> {
    /// use peregrine_naming::{NamingClient, NamingContextRef};
    ///
    /// let apps: NamingContextRef = naming.resolve_as("apps")?;
    /// let apps = NamingClient::new(apps);
    /// # Ok(()) }
    /// ```
    pub fn resolve_as<R: peregrine::Reference>(&self, name: &str) -> Result<R, NamingError> {
        let obj = self.resolve_str(name)?;
        if obj.is_a(R::REPOSITORY_ID)? {
            Ok(R::from_object_ref(obj))
        } else {
            Err(NamingError::WrongType {
                name: name.to_string(),
                expected: R::REPOSITORY_ID,
            })
        }
    }

    /// The client of the context bound to `name`
    /// (`resolve_as::<NamingContextRef>`).
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient) -> Result<(), peregrine_naming::NamingError> {
    /// let apps = naming.resolve_context("apps")?;
    /// let obj = apps.resolve_str("greeter.service")?;
    /// # Ok(()) }
    /// ```
    pub fn resolve_context(&self, name: &str) -> Result<NamingClient, NamingError> {
        self.resolve_as::<NamingContextRef>(name)
            .map(NamingClient::new)
    }

    /// `bind`: binds `name` to `obj`; [`NamingError::AlreadyBound`] if it
    /// is bound already. The contexts on the way must exist (see
    /// [`NamingClient::rebind_path`]).
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient, obj: &peregrine::ObjectRef) -> Result<(), peregrine_naming::NamingError> {
    /// naming.bind_str("greeter.service", obj)?;
    /// # Ok(()) }
    /// ```
    pub fn bind_str(&self, name: &str, obj: &ObjectRef) -> Result<(), NamingError> {
        let n = to_name(name)?;
        self.ctx
            .bind(&n, Some(obj))
            .map_err(|e| NamingError::from(e).for_name(name))
    }

    /// `rebind`: binds `name` to `obj`, replacing an object bound to it.
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient, obj: &peregrine::ObjectRef) -> Result<(), peregrine_naming::NamingError> {
    /// naming.rebind_str("greeter.service", obj)?;
    /// # Ok(()) }
    /// ```
    pub fn rebind_str(&self, name: &str, obj: &ObjectRef) -> Result<(), NamingError> {
        let n = to_name(name)?;
        self.ctx
            .rebind(&n, Some(obj))
            .map_err(|e| NamingError::from(e).for_name(name))
    }

    /// `bind_new_context`: creates a context bound to `name` and returns
    /// its client; [`NamingError::AlreadyBound`] if `name` is bound.
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient) -> Result<(), peregrine_naming::NamingError> {
    /// let apps = naming.bind_new_context_str("apps")?;
    /// # Ok(()) }
    /// ```
    pub fn bind_new_context_str(&self, name: &str) -> Result<NamingClient, NamingError> {
        let n = to_name(name)?;
        match self.ctx.bind_new_context(&n) {
            Ok(Some(ctx)) => Ok(NamingClient::new(ctx)),
            Ok(None) => Err(NamingError::Nil {
                name: name.to_string(),
            }),
            Err(e) => Err(NamingError::from(e).for_name(name)),
        }
    }

    /// The context bound to `name`, creating it and every missing context
    /// on the way (`mkdir -p`). An existing binding on the way that is an
    /// object, not a context, fails with [`NamingError::NotFound`]
    /// (`not_context`) or, as the last component,
    /// [`NamingError::WrongType`].
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient) -> Result<(), peregrine_naming::NamingError> {
    /// let demo = naming.create_path("apps/demo")?;
    /// # Ok(()) }
    /// ```
    pub fn create_path(&self, name: &str) -> Result<NamingClient, NamingError> {
        let n = to_name(name)?;
        match self.create_contexts(&n, n.len(), name)? {
            Some(ctx) => Ok(NamingClient::new(ctx)),
            None => self.resolve_context(name),
        }
    }

    /// `rebind` that first creates the contexts on the way: after
    /// `rebind_path("a/b/c", obj)`, `a` and `a/b` are contexts (new or
    /// existing) and `a/b/c` is bound to `obj`.
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient, obj: &peregrine::ObjectRef) -> Result<(), peregrine_naming::NamingError> {
    /// naming.rebind_path("apps/demo/greeter.service", obj)?;
    /// assert!(naming.resolve_str("apps/demo/greeter.service")?.is_equivalent(obj));
    /// # Ok(()) }
    /// ```
    pub fn rebind_path(&self, name: &str, obj: &ObjectRef) -> Result<(), NamingError> {
        let n = to_name(name)?;
        self.create_contexts(&n, n.len() - 1, name)?;
        self.ctx
            .rebind(&n, Some(obj))
            .map_err(|e| NamingError::from(e).for_name(name))
    }

    /// Makes `name[..i]` a context for every `i` in `1..=upto`, from the
    /// root, so that the service walks the path and reports a component
    /// that is not a context as `NotFound (not_context)`. Returns the
    /// last context if this call created it (`None` if it existed).
    /// `AlreadyBound` is success: another client may be creating the
    /// same path.
    fn create_contexts(
        &self,
        name: &[NameComponent],
        upto: usize,
        text: &str,
    ) -> Result<Option<NamingContextRef>, NamingError> {
        let mut last = None;
        for i in 1..=upto {
            last = match self.ctx.bind_new_context(&name[..i]) {
                Ok(ctx) => ctx,
                Err(crate::cos_naming::naming_context::BindNewContextError::AlreadyBound(_)) => {
                    None
                }
                Err(e) => return Err(NamingError::from(e).for_name(text)),
            };
        }
        Ok(last)
    }

    /// `unbind`: removes the binding of `name` (an object or a context;
    /// a context itself is not destroyed).
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient) -> Result<(), peregrine_naming::NamingError> {
    /// naming.unbind_str("apps/demo/greeter.service")?;
    /// # Ok(()) }
    /// ```
    pub fn unbind_str(&self, name: &str) -> Result<(), NamingError> {
        let n = to_name(name)?;
        self.ctx
            .unbind(&n)
            .map_err(|e| NamingError::from(e).for_name(name))
    }

    /// The bindings of this context, [`NamingClient::LIST_BATCH`] per
    /// call (see [`Bindings`]).
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient) -> Result<(), peregrine_naming::NamingError> {
    /// for binding in naming.list()? {
    ///     let binding = binding?;
    ///     let kind = if binding.is_context() { "context" } else { "object" };
    ///     println!("{} ({kind})", binding.name());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn list(&self) -> Result<Bindings, NamingError> {
        self.list_in_batches(Self::LIST_BATCH)
    }

    /// The bindings of this context, `how_many` (at least 1) per `list`
    /// and `next_n` call.
    ///
    /// ```no_run
    /// # fn demo(naming: &peregrine_naming::NamingClient) -> Result<(), peregrine_naming::NamingError> {
    /// let count = naming.list_in_batches(10)?.count();
    /// # Ok(()) }
    /// ```
    pub fn list_in_batches(&self, how_many: u32) -> Result<Bindings, NamingError> {
        Bindings::start(&self.ctx, how_many)
    }
}

impl From<NamingContextRef> for NamingClient {
    fn from(ctx: NamingContextRef) -> Self {
        NamingClient::new(ctx)
    }
}

impl From<NamingContextExtRef> for NamingClient {
    fn from(ctx: NamingContextExtRef) -> Self {
        NamingClient::new(ctx)
    }
}
