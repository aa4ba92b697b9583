//! The standard POA policies and the rules on combining them.

use super::PoaError;

/// `LifespanPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifespan {
    /// References die with the POA (and with the ORB process).
    Transient,
    /// References stay valid across restarts on the same endpoint.
    Persistent,
}

/// `IdAssignmentPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdAssignment {
    /// The POA assigns ids (slot + generation: O(1) lookup).
    System,
    /// The application assigns ids (hash map lookup).
    User,
}

/// `IdUniquenessPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdUniqueness {
    /// A servant incarnates at most one object.
    Unique,
    /// A servant may incarnate several objects.
    Multiple,
}

/// `ImplicitActivationPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImplicitActivation {
    /// `servant_to_reference` activates an inactive servant.
    Implicit,
    /// It does not.
    NoImplicit,
}

/// `ServantRetentionPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServantRetention {
    /// An active object map holds the servants.
    Retain,
    /// No map: every request goes to the default servant or the servant
    /// locator.
    NonRetain,
}

/// `RequestProcessingPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestProcessing {
    /// Only objects in the active object map.
    ActiveObjectMapOnly,
    /// Objects not in the map go to the default servant.
    DefaultServant,
    /// Objects not in the map go to the servant manager: a
    /// [`ServantActivator`](super::ServantActivator) with RETAIN, a
    /// [`ServantLocator`](super::ServantLocator) with NON_RETAIN.
    ServantManager,
}

/// The policies of a POA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policies {
    /// Lifespan.
    pub lifespan: Lifespan,
    /// Id assignment.
    pub id_assignment: IdAssignment,
    /// Id uniqueness.
    pub id_uniqueness: IdUniqueness,
    /// Implicit activation.
    pub implicit_activation: ImplicitActivation,
    /// Servant retention.
    pub servant_retention: ServantRetention,
    /// Request processing.
    pub request_processing: RequestProcessing,
}

impl Policies {
    /// The RootPOA's policies (CORBA 3 §11.3.8.2): TRANSIENT, SYSTEM_ID,
    /// UNIQUE_ID, IMPLICIT_ACTIVATION, RETAIN, USE_ACTIVE_OBJECT_MAP_ONLY.
    ///
    /// Not a base to update with other values: `..Policies::ROOT` keeps
    /// IMPLICIT_ACTIVATION, which only SYSTEM_ID + RETAIN allow, so with
    /// `id_assignment: IdAssignment::User` it is `InvalidPolicy`. Start
    /// from [`Policies::default`] or a named set instead.
    pub const ROOT: Policies = Policies {
        lifespan: Lifespan::Transient,
        id_assignment: IdAssignment::System,
        id_uniqueness: IdUniqueness::Unique,
        implicit_activation: ImplicitActivation::Implicit,
        servant_retention: ServantRetention::Retain,
        request_processing: RequestProcessing::ActiveObjectMapOnly,
    };

    /// References that survive a restart, named by the application:
    /// PERSISTENT, USER_ID, UNIQUE_ID, NO_IMPLICIT_ACTIVATION, RETAIN,
    /// USE_ACTIVE_OBJECT_MAP_ONLY. Objects are activated with
    /// [`Poa::activate_object_with_id`](super::Poa::activate_object_with_id);
    /// listen on a fixed port (`OrbBuilder::listen`) so the address in
    /// the references stays valid too.
    ///
    /// ```
    /// use peregrine_orb::{Orb, Policies};
    ///
    /// let orb = Orb::builder().listen("127.0.0.1", 0).build()?;
    /// let root = orb.root_poa();
    /// let accounts = root.create_poa("Accounts", Some(&root.manager()), Policies::persistent_user_ids())?;
    /// let obj = accounts.create_reference_with_id::<peregrine_orb::ObjectRef>(b"alice")?;
    /// assert_eq!(accounts.reference_to_id(&obj)?, b"alice");
    /// # orb.shutdown(true);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn persistent_user_ids() -> Policies {
        Policies {
            lifespan: Lifespan::Persistent,
            id_assignment: IdAssignment::User,
            implicit_activation: ImplicitActivation::NoImplicit,
            ..Policies::ROOT
        }
    }

    /// References valid while this POA lives, ids chosen by the POA, and
    /// `servant_to_reference` activating a servant on first use: the
    /// RootPOA's set ([`Policies::ROOT`]), for a child POA with its own
    /// manager or name.
    ///
    /// ```
    /// use peregrine_orb::{Orb, Policies};
    ///
    /// let orb = Orb::builder().listen("127.0.0.1", 0).build()?;
    /// let root = orb.root_poa();
    /// let poa = root.create_poa("Sessions", None, Policies::transient())?;
    /// assert_eq!(poa.policies(), Policies::ROOT);
    /// # orb.shutdown(true);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn transient() -> Policies {
        Policies::ROOT
    }

    /// One servant for every object of the POA, which reads the object id
    /// of each request from [`ServerRequest::object_id`](crate::ServerRequest::object_id)
    /// or `PoaCurrent`: NON_RETAIN + USE_DEFAULT_SERVANT, with USER_ID and
    /// MULTIPLE_ID (the ids name the application's records; one servant
    /// stands for many ids), TRANSIENT, NO_IMPLICIT_ACTIVATION.
    ///
    /// CORBA allows USE_DEFAULT_SERVANT with RETAIN too (the map first,
    /// the default servant for ids not in it); NON_RETAIN is the set for
    /// "no map at all", which is what a default servant is usually for.
    /// For references that outlive the process, set
    /// `lifespan: Lifespan::Persistent` on top (any lifespan is valid).
    ///
    /// ```
    /// use peregrine_orb::{Lifespan, Orb, Policies};
    ///
    /// let orb = Orb::builder().listen("127.0.0.1", 0).build()?;
    /// let root = orb.root_poa();
    /// let p = Policies { lifespan: Lifespan::Persistent, ..Policies::default_servant() };
    /// let files = root.create_poa("Files", Some(&root.manager()), p)?;
    /// // files.set_servant(Arc::new(FileSkeleton::new(MyFiles)))? serves every id;
    /// let f = files.create_reference_with_id::<peregrine_orb::ObjectRef>(b"/etc/hosts")?;
    /// assert_eq!(files.reference_to_id(&f)?, b"/etc/hosts");
    /// # orb.shutdown(true);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub const fn default_servant() -> Policies {
        Policies {
            id_assignment: IdAssignment::User,
            id_uniqueness: IdUniqueness::Multiple,
            implicit_activation: ImplicitActivation::NoImplicit,
            servant_retention: ServantRetention::NonRetain,
            request_processing: RequestProcessing::DefaultServant,
            ..Policies::ROOT
        }
    }

    /// Checks the combination (`POA::InvalidPolicy` otherwise, whose
    /// message names the clashing policies and the fix).
    pub fn validate(&self) -> Result<(), PoaError> {
        if self.servant_retention == ServantRetention::NonRetain
            && self.request_processing == RequestProcessing::ActiveObjectMapOnly
        {
            return Err(PoaError::InvalidPolicy(
                "NON_RETAIN with USE_ACTIVE_OBJECT_MAP_ONLY: without a map every request needs \
                 USE_DEFAULT_SERVANT or USE_SERVANT_MANAGER (see Policies::default_servant())",
            ));
        }
        if self.implicit_activation == ImplicitActivation::Implicit {
            if self.id_assignment != IdAssignment::System {
                return Err(PoaError::InvalidPolicy(
                    "IMPLICIT_ACTIVATION with USER_ID: implicit activation needs SYSTEM_ID \
                     (`..Policies::ROOT` brings IMPLICIT_ACTIVATION); set \
                     `implicit_activation: ImplicitActivation::NoImplicit` or start from \
                     Policies::persistent_user_ids() or Policies::default()",
                ));
            }
            if self.servant_retention != ServantRetention::Retain {
                return Err(PoaError::InvalidPolicy(
                    "IMPLICIT_ACTIVATION with NON_RETAIN: implicit activation needs RETAIN \
                     (`..Policies::ROOT` brings IMPLICIT_ACTIVATION); set \
                     `implicit_activation: ImplicitActivation::NoImplicit` or start from \
                     Policies::default_servant() or Policies::default()",
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn retain(&self) -> bool {
        self.servant_retention == ServantRetention::Retain
    }

    pub(crate) fn unique(&self) -> bool {
        self.id_uniqueness == IdUniqueness::Unique
    }

    pub(crate) fn system_id(&self) -> bool {
        self.id_assignment == IdAssignment::System
    }
}

/// The defaults for `create_POA` with no policies (CORBA 3 §11.3.8.1):
/// TRANSIENT, SYSTEM_ID, UNIQUE_ID, NO_IMPLICIT_ACTIVATION, RETAIN,
/// USE_ACTIVE_OBJECT_MAP_ONLY, i.e. the RootPOA's set without implicit
/// activation. Every single field can be changed on top of it
/// (`Policies { id_assignment: IdAssignment::User, ..Policies::default() }`)
/// without a clash, except NON_RETAIN, which also needs a request
/// processing policy other than the map.
///
/// ```
/// use peregrine_orb::{IdAssignment, Policies};
///
/// let p = Policies { id_assignment: IdAssignment::User, ..Policies::default() };
/// assert!(p.validate().is_ok());
/// ```
impl Default for Policies {
    fn default() -> Self {
        Policies {
            implicit_activation: ImplicitActivation::NoImplicit,
            ..Policies::ROOT
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The named sets are valid, say what their docs say, and the
    /// `..Policies::ROOT` trap is refused with a message that names the
    /// clash and the fix.
    #[test]
    fn named_sets_and_clash_messages() {
        for p in [
            Policies::ROOT,
            Policies::default(),
            Policies::transient(),
            Policies::persistent_user_ids(),
            Policies::default_servant(),
        ] {
            p.validate().unwrap();
        }
        let p = Policies::persistent_user_ids();
        assert_eq!(
            (p.lifespan, p.id_assignment, p.implicit_activation),
            (
                Lifespan::Persistent,
                IdAssignment::User,
                ImplicitActivation::NoImplicit
            )
        );
        let d = Policies::default_servant();
        assert_eq!(
            (d.servant_retention, d.request_processing, d.id_uniqueness),
            (
                ServantRetention::NonRetain,
                RequestProcessing::DefaultServant,
                IdUniqueness::Multiple
            )
        );
        let trap = Policies {
            id_assignment: IdAssignment::User,
            ..Policies::ROOT
        };
        match trap.validate() {
            Err(PoaError::InvalidPolicy(m)) => {
                assert!(m.contains("IMPLICIT_ACTIVATION with USER_ID"), "{m}");
                assert!(m.contains("persistent_user_ids"), "{m}");
            }
            other => panic!("{other:?}"),
        }
        let trap = Policies {
            servant_retention: ServantRetention::NonRetain,
            request_processing: RequestProcessing::DefaultServant,
            ..Policies::ROOT
        };
        assert!(
            matches!(trap.validate(), Err(PoaError::InvalidPolicy(m)) if m.contains("with NON_RETAIN"))
        );
        let no_map = Policies {
            servant_retention: ServantRetention::NonRetain,
            ..Policies::default()
        };
        assert!(
            matches!(no_map.validate(), Err(PoaError::InvalidPolicy(m)) if m.contains("USE_ACTIVE_OBJECT_MAP_ONLY"))
        );
    }
}
