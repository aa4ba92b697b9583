//! Stringified names (`a.kind/b`): CosNaming's `to_name` and `to_string`
//! done locally, with the Interoperable Naming Service's escaping rules.
//!
//! The rules are implemented once, in `peregrine::orb::naming` (which
//! `corbaname:` URLs need inside the ORB); this module only converts
//! between its name components and the generated ones.

use peregrine::orb::naming as rules;

use crate::{Binding, BindingType, Name, NameComponent, NamingError};

/// Parses a stringified name into its components (CosNaming's
/// `NamingContextExt::to_name`, without a call): components separated by
/// `/`, each `id.kind` (`id` alone when the kind is empty, `.kind` when
/// the id is, `.` for both empty), and `\` escaping `/`, `.` and `\`.
///
/// An empty string, an empty component (`a//b`), a second unescaped `.`
/// in a component or a dangling `\` is [`NamingError::InvalidName`].
///
/// ```
/// use peregrine_naming::{to_name, NameComponent};
///
/// let name = to_name("apps/greeter.service").unwrap();
/// assert_eq!(
///     name,
///     [NameComponent::new("apps", ""), NameComponent::new("greeter", "service")]
/// );
/// // `\` escapes the separators.
/// assert_eq!(to_name(r"a\/b\.c")?, [NameComponent::new("a/b.c", "")]);
/// assert!(to_name("a//b").is_err());
/// # Ok::<(), peregrine_naming::NamingError>(())
/// ```
pub fn to_name(s: &str) -> Result<Name, NamingError> {
    match rules::parse_name(s) {
        Some(components) => Ok(components.into_iter().map(NameComponent::from).collect()),
        None => Err(NamingError::InvalidName {
            name: s.to_string(),
        }),
    }
}

/// The stringified form of `name` (CosNaming's
/// `NamingContextExt::to_string`, without a call), the inverse of
/// [`to_name`]: `/`, `.` and `\` inside an id or kind are escaped with
/// `\`. An empty name gives the empty string.
///
/// ```
/// use peregrine_naming::{to_name, to_string, NameComponent};
///
/// let name = [NameComponent::new("a/b", ""), NameComponent::new("c", "kind")];
/// assert_eq!(to_string(&name), r"a\/b/c.kind");
/// assert_eq!(to_name(&to_string(&name)).unwrap(), name);
/// ```
pub fn to_string(name: &[NameComponent]) -> String {
    rules::format_name(name.iter().map(|c| (c.id.as_str(), c.kind.as_str())))
}

impl NameComponent {
    /// A component from its `id` and `kind` (either may be empty).
    ///
    /// ```
    /// let c = peregrine_naming::NameComponent::new("greeter", "service");
    /// assert_eq!((c.id.as_str(), c.kind.as_str()), ("greeter", "service"));
    /// ```
    pub fn new(id: impl Into<String>, kind: impl Into<String>) -> Self {
        NameComponent {
            id: id.into(),
            kind: kind.into(),
        }
    }
}

/// The ORB's own name component (what `corbaname:` parsing yields) as the
/// generated one: the same two strings.
impl From<rules::NameComponent> for NameComponent {
    fn from(c: rules::NameComponent) -> Self {
        NameComponent {
            id: c.id,
            kind: c.kind,
        }
    }
}

impl Binding {
    /// The bound name, stringified (its one component, for the bindings
    /// a context lists).
    ///
    /// ```
    /// use peregrine_naming::{Binding, BindingType, NameComponent};
    ///
    /// let b = Binding {
    ///     binding_name: vec![NameComponent::new("greeter", "service")],
    ///     binding_type: BindingType::Nobject,
    /// };
    /// assert_eq!(b.name(), "greeter.service");
    /// assert!(!b.is_context());
    /// ```
    pub fn name(&self) -> String {
        to_string(&self.binding_name)
    }

    /// Whether the name is bound to a naming context (`ncontext`) rather
    /// than an object.
    pub fn is_context(&self) -> bool {
        self.binding_type == BindingType::Ncontext
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_the_orbs_rules() {
        for text in ["a", "a.b/c", ".", ".k", r"d\/e/x\.y.z\\", "a/b/c/d"] {
            let name = to_name(text).unwrap();
            assert_eq!(to_string(&name), text);
        }
        assert_eq!(
            to_name("a.b/c").unwrap(),
            [NameComponent::new("a", "b"), NameComponent::new("c", "")]
        );
    }

    #[test]
    fn malformed_names_are_invalid_name_with_the_text() {
        for text in ["", "a//b", "/a", "a/", "a.b.c", "a\\"] {
            match to_name(text) {
                Err(NamingError::InvalidName { name }) => assert_eq!(name, text),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }
}
