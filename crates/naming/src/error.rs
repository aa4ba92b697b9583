//! One error type for every naming call: the CosNaming user exceptions
//! with their members, the client-side failures this crate adds (a
//! missing `NameService`, a binding of the wrong type) and system
//! exceptions.
//!
//! The generated stubs return one error enum per operation
//! (`naming_context::ResolveError`, `BindError`, ...); they all convert
//! into [`NamingError`], so `?` works across operations.

use std::fmt;

use peregrine::SystemException;

use crate::cos_naming::naming_context::{self as nc, NotFoundReason};
use crate::cos_naming::naming_context_ext as nce;
use crate::{to_string, Name, NamingContextRef};

/// A failed naming call.
///
/// `Display` names the exception and its members, e.g.
/// ``NotFound (missing_node) at `b/c` ``; for exceptions without members
/// the name of the call is shown when the helper that failed knew it.
///
/// ```
/// use peregrine_naming::{to_name, NamingError, NotFoundReason};
///
/// let e = NamingError::NotFound {
///     why: NotFoundReason::MissingNode,
///     rest_of_name: to_name("b/c").unwrap(),
/// };
/// assert_eq!(e.to_string(), "NotFound (missing_node) at `b/c`");
/// assert_eq!(format!("{e:?}"), e.to_string());
/// assert!(e.is_not_found());
/// ```
///
/// `Debug` prints what `Display` prints, as `SystemException`'s does, so a
/// `main` returning `Result<(), Box<dyn Error>>` reports the readable form.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub enum NamingError {
    /// `CosNaming::NamingContext::NotFound`: `rest_of_name` could not be
    /// resolved, for the reason `why` (its first component is missing, is
    /// not a context, or is not an object).
    NotFound {
        /// Why resolution stopped.
        why: NotFoundReason,
        /// The part of the name that was not resolved.
        rest_of_name: Name,
    },
    /// `CosNaming::NamingContext::CannotProceed`: the service gave up at
    /// context `cxt`, which may be able to go on with `rest_of_name`.
    CannotProceed {
        /// Where to continue, if the service said.
        cxt: Option<NamingContextRef>,
        /// The part of the name that was not resolved.
        rest_of_name: Name,
    },
    /// `CosNaming::NamingContext::InvalidName`, or a stringified name
    /// that does not parse.
    InvalidName {
        /// The stringified name, if known (empty when not).
        name: String,
    },
    /// `CosNaming::NamingContext::AlreadyBound`: `bind` of a name that is
    /// bound already.
    AlreadyBound {
        /// The stringified name, if known (empty when not).
        name: String,
    },
    /// `CosNaming::NamingContext::NotEmpty`: `destroy` of a context that
    /// still has bindings.
    NotEmpty,
    /// The name is bound to an object that is not of the interface asked
    /// for (its `_is_a` said no).
    WrongType {
        /// The stringified name, if known (empty when not).
        name: String,
        /// The repository id asked for.
        expected: &'static str,
    },
    /// The name is bound to a nil reference.
    Nil {
        /// The stringified name.
        name: String,
    },
    /// The ORB has no `NameService` initial reference
    /// ([`NamingClient::from_orb`](crate::NamingClient::from_orb)).
    NotConfigured,
    /// A CORBA system exception (`TRANSIENT` when the service does not
    /// answer, `OBJECT_NOT_EXIST`, ...).
    System(SystemException),
}

impl NamingError {
    /// Whether this is `NotFound` (for any reason).
    pub fn is_not_found(&self) -> bool {
        matches!(self, NamingError::NotFound { .. })
    }

    /// Fills in the stringified name of the call where the exception
    /// itself carries none (`InvalidName`, `AlreadyBound`, `WrongType`).
    pub(crate) fn for_name(mut self, text: &str) -> Self {
        match &mut self {
            NamingError::InvalidName { name }
            | NamingError::AlreadyBound { name }
            | NamingError::WrongType { name, .. }
            | NamingError::Nil { name }
                if name.is_empty() =>
            {
                *name = text.to_string();
            }
            _ => {}
        }
        self
    }
}

/// The IDL spelling of a `NotFoundReason`.
fn reason(why: NotFoundReason) -> &'static str {
    match why {
        NotFoundReason::MissingNode => "missing_node",
        NotFoundReason::NotContext => "not_context",
        NotFoundReason::NotObject => "not_object",
    }
}

/// `` `a/b` `` after `prefix`, or nothing for an empty name.
struct Quoted<'a>(&'a str, &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.1.is_empty() {
            Ok(())
        } else {
            write!(f, "{}`{}`", self.0, self.1)
        }
    }
}

impl fmt::Display for NamingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NamingError::NotFound { why, rest_of_name } => write!(
                f,
                "NotFound ({}){}",
                reason(*why),
                Quoted(" at ", &to_string(rest_of_name))
            ),
            NamingError::CannotProceed { rest_of_name, .. } => {
                write!(
                    f,
                    "CannotProceed{}",
                    Quoted(" at ", &to_string(rest_of_name))
                )
            }
            NamingError::InvalidName { name } => write!(f, "InvalidName{}", Quoted(" ", name)),
            NamingError::AlreadyBound { name } => {
                write!(f, "AlreadyBound{}", Quoted(" ", name))
            }
            NamingError::NotEmpty => f.write_str("NotEmpty"),
            NamingError::WrongType { name, expected } if name.is_empty() => {
                write!(f, "the object does not implement {expected}")
            }
            NamingError::WrongType { name, expected } => {
                write!(
                    f,
                    "`{name}` is bound to an object that does not implement {expected}"
                )
            }
            NamingError::Nil { name } => write!(f, "`{name}` is bound to a nil reference"),
            NamingError::NotConfigured => f.write_str(
                "no NameService initial reference: configure one with \
                 -ORBInitRef NameService=corbaloc::HOST:PORT/NameService \
                 or OrbBuilder::init_ref",
            ),
            NamingError::System(e) => write!(f, "{e}"),
        }
    }
}

impl fmt::Debug for NamingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for NamingError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NamingError::System(e) => Some(e),
            _ => None,
        }
    }
}

impl From<SystemException> for NamingError {
    fn from(e: SystemException) -> Self {
        NamingError::System(e)
    }
}

impl From<nc::NotFound> for NamingError {
    fn from(e: nc::NotFound) -> Self {
        NamingError::NotFound {
            why: e.why,
            rest_of_name: e.rest_of_name,
        }
    }
}

impl From<nc::CannotProceed> for NamingError {
    fn from(e: nc::CannotProceed) -> Self {
        NamingError::CannotProceed {
            cxt: e.cxt,
            rest_of_name: e.rest_of_name,
        }
    }
}

impl From<nc::InvalidName> for NamingError {
    fn from(_: nc::InvalidName) -> Self {
        NamingError::InvalidName {
            name: String::new(),
        }
    }
}

impl From<nc::AlreadyBound> for NamingError {
    fn from(_: nc::AlreadyBound) -> Self {
        NamingError::AlreadyBound {
            name: String::new(),
        }
    }
}

impl From<nc::NotEmpty> for NamingError {
    fn from(_: nc::NotEmpty) -> Self {
        NamingError::NotEmpty
    }
}

/// `From` for the generated per-operation error enums: each variant is
/// one of the exceptions above, or `System`.
macro_rules! from_operation_errors {
    ($($path:ident::$t:ident { $($v:ident),* }),* $(,)?) => {
        $(
            impl From<$path::$t> for NamingError {
                fn from(e: $path::$t) -> Self {
                    match e {
                        $($path::$t::$v(x) => x.into(),)*
                        $path::$t::System(e) => NamingError::System(e),
                    }
                }
            }
        )*
    };
}

from_operation_errors!(
    nc::BindError {
        NotFound,
        CannotProceed,
        InvalidName,
        AlreadyBound
    },
    nc::RebindError {
        NotFound,
        CannotProceed,
        InvalidName
    },
    nc::BindContextError {
        NotFound,
        CannotProceed,
        InvalidName,
        AlreadyBound
    },
    nc::RebindContextError {
        NotFound,
        CannotProceed,
        InvalidName
    },
    nc::ResolveError {
        NotFound,
        CannotProceed,
        InvalidName
    },
    nc::UnbindError {
        NotFound,
        CannotProceed,
        InvalidName
    },
    nc::BindNewContextError {
        NotFound,
        CannotProceed,
        InvalidName,
        AlreadyBound
    },
    nc::DestroyError { NotEmpty },
    nce::ResolveStrError {
        NotFound,
        CannotProceed,
        InvalidName
    },
    nce::ToNameError { InvalidName },
    nce::ToStringError { InvalidName },
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::to_name;

    #[test]
    fn display_names_the_exception_and_its_members() {
        let e = NamingError::from(nc::ResolveError::NotFound(nc::NotFound {
            why: NotFoundReason::NotContext,
            rest_of_name: to_name("b.k/c").unwrap(),
        }));
        assert_eq!(e.to_string(), "NotFound (not_context) at `b.k/c`");
        let e = NamingError::from(nc::BindError::AlreadyBound(nc::AlreadyBound {}));
        assert_eq!(e.to_string(), "AlreadyBound");
        assert_eq!(e.for_name("a/b").to_string(), "AlreadyBound `a/b`");
        let e = NamingError::from(nc::UnbindError::InvalidName(nc::InvalidName {}));
        assert_eq!(e.for_name("x").to_string(), "InvalidName `x`");
        let e = NamingError::from(nc::DestroyError::NotEmpty(nc::NotEmpty {}));
        assert_eq!(e.to_string(), "NotEmpty");
        let e = NamingError::CannotProceed {
            cxt: None,
            rest_of_name: to_name("z").unwrap(),
        };
        assert_eq!(e.to_string(), "CannotProceed at `z`");
    }

    #[test]
    fn a_name_already_carried_is_kept() {
        let e = NamingError::InvalidName {
            name: "a//b".into(),
        };
        assert_eq!(e.for_name("other").to_string(), "InvalidName `a//b`");
    }
}
