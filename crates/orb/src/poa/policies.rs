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
    /// The RootPOA's policies (CORBA 3 §11.3.8.2).
    pub const ROOT: Policies = Policies {
        lifespan: Lifespan::Transient,
        id_assignment: IdAssignment::System,
        id_uniqueness: IdUniqueness::Unique,
        implicit_activation: ImplicitActivation::Implicit,
        servant_retention: ServantRetention::Retain,
        request_processing: RequestProcessing::ActiveObjectMapOnly,
    };

    /// Checks the combination (`POA::InvalidPolicy` otherwise).
    pub fn validate(&self) -> Result<(), PoaError> {
        if self.servant_retention == ServantRetention::NonRetain
            && self.request_processing == RequestProcessing::ActiveObjectMapOnly
        {
            return Err(PoaError::InvalidPolicy(
                "NON_RETAIN requires USE_DEFAULT_SERVANT or USE_SERVANT_MANAGER",
            ));
        }
        if self.implicit_activation == ImplicitActivation::Implicit
            && (self.id_assignment != IdAssignment::System
                || self.servant_retention != ServantRetention::Retain)
        {
            return Err(PoaError::InvalidPolicy(
                "IMPLICIT_ACTIVATION requires SYSTEM_ID and RETAIN",
            ));
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

/// The defaults for `create_POA` with no policies: as the RootPOA but
/// without implicit activation.
impl Default for Policies {
    fn default() -> Self {
        Policies {
            implicit_activation: ImplicitActivation::NoImplicit,
            ..Policies::ROOT
        }
    }
}
