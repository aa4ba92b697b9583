//! GIOP protocol engine.

pub mod component;
pub mod corbaloc;
pub mod iiop;
pub mod ior;

pub use component::{CodeSetComponent, CodeSetComponentInfo, TaggedComponent};
pub use corbaloc::{Corbaloc, CorbalocError, CorbalocErrorKind, Corbaname, ObjectUrl, ObjectUrlError};
pub use iiop::{Endpoint, IiopProfile, IiopVersion};
pub use ior::{Ior, IorBuilder, IorError, TaggedProfile};
