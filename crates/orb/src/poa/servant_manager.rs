//! Servant managers: [`ServantActivator`] (RETAIN: incarnate on the first
//! request, etherealize on deactivation) and [`ServantLocator`]
//! (NON_RETAIN: preinvoke/postinvoke around every request).

use std::any::Any;
use std::sync::Arc;

use super::Poa;
use crate::runtime::{ObjectRef, Servant, SystemException};

/// What `incarnate`/`preinvoke` may raise: `PortableServer::ForwardRequest`
/// (the client gets a `LOCATION_FORWARD` reply to `forward_reference` and
/// re-sends there) or a system exception (sent to the client).
#[derive(Debug, Clone)]
pub enum ServantManagerError {
    /// `ForwardRequest { forward_reference }`.
    ForwardRequest(ObjectRef),
    /// A system exception.
    System(SystemException),
}

impl From<SystemException> for ServantManagerError {
    fn from(e: SystemException) -> Self {
        ServantManagerError::System(e)
    }
}

/// `PortableServer::ServantActivator`, for RETAIN POAs with
/// USE_SERVANT_MANAGER. No POA lock is held while these run: they may
/// call back into the POA (activate, create references, ...).
pub trait ServantActivator: Send + Sync + 'static {
    /// Makes a servant for `oid`, on the first request for an object not
    /// in the active object map. The POA puts the servant in the map.
    /// Requests for the same id wait meanwhile (one incarnation per id).
    fn incarnate(&self, oid: &[u8], adapter: &Poa)
        -> Result<Arc<dyn Servant>, ServantManagerError>;

    /// Called once `servant` no longer incarnates `oid` (after
    /// `deactivate_object`, or `destroy` with `etherealize_objects`) and
    /// the requests in progress on it have finished.
    /// `cleanup_in_progress` is true when the POA is being destroyed;
    /// `remaining_activations` when the servant still incarnates other
    /// ids of this POA (MULTIPLE_ID).
    fn etherealize(
        &self,
        oid: &[u8],
        adapter: &Poa,
        servant: Arc<dyn Servant>,
        cleanup_in_progress: bool,
        remaining_activations: bool,
    );
}

/// The value `preinvoke` hands to the matching `postinvoke`
/// (`PortableServer::ServantLocator::Cookie`).
pub type Cookie = Box<dyn Any + Send>;

/// `PortableServer::ServantLocator`, for NON_RETAIN POAs with
/// USE_SERVANT_MANAGER.
pub trait ServantLocator: Send + Sync + 'static {
    /// Finds the servant for one request on `oid`, plus a cookie for
    /// `postinvoke`.
    fn preinvoke(
        &self,
        oid: &[u8],
        adapter: &Poa,
        operation: &str,
    ) -> Result<(Arc<dyn Servant>, Cookie), ServantManagerError>;

    /// Runs after the servant's upcall (also when it failed), with the
    /// cookie from `preinvoke`. An error replaces the reply.
    fn postinvoke(
        &self,
        oid: &[u8],
        adapter: &Poa,
        operation: &str,
        cookie: Cookie,
        servant: Arc<dyn Servant>,
    ) -> Result<(), SystemException>;
}

/// `PortableServer::ServantManager`: one of the two kinds.
#[derive(Clone)]
pub enum ServantManager {
    /// For RETAIN POAs.
    Activator(Arc<dyn ServantActivator>),
    /// For NON_RETAIN POAs.
    Locator(Arc<dyn ServantLocator>),
}

impl std::fmt::Debug for ServantManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ServantManager::Activator(_) => "ServantManager::Activator",
            ServantManager::Locator(_) => "ServantManager::Locator",
        })
    }
}
