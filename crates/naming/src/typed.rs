//! The bound of [`NamingClient::resolve_as`](crate::NamingClient::resolve_as):
//! what a generated typed reference (`XRef`) offers, as a trait.
//!
//! Generated code gives every `XRef` an inherent `REPOSITORY_ID` and
//! `unchecked_narrow`, but no trait that a generic function could name,
//! so this crate declares the smallest one that does the job and
//! [`typed_ref!`](crate::typed_ref) implements it from those inherent
//! items. Its two members are those of the reference trait the ORB's
//! runtime is growing; when generated references implement that one,
//! this trait becomes an alias of it and `typed_ref!` is no longer needed.

use peregrine::ObjectRef;

/// A typed object reference: the repository id it stands for, and how to
/// wrap an untyped reference already known to support it.
///
/// Implemented here for [`ObjectRef`] (any object) and the CosNaming
/// references; implement it for the references generated from your own
/// IDL with [`typed_ref!`](crate::typed_ref).
pub trait TypedRef: Sized {
    /// The interface's repository id (`IDL:Module/Interface:1.0`), asked
    /// with `_is_a` before wrapping.
    const REPOSITORY_ID: &'static str;

    /// Wraps `obj` without checking its type (the caller has).
    fn from_object_ref(obj: ObjectRef) -> Self;
}

impl TypedRef for ObjectRef {
    const REPOSITORY_ID: &'static str = "IDL:omg.org/CORBA/Object:1.0";

    fn from_object_ref(obj: ObjectRef) -> Self {
        obj
    }
}

/// Implements [`TypedRef`] for references generated from IDL, from their
/// inherent `REPOSITORY_ID` and `unchecked_narrow`, so that
/// [`NamingClient::resolve_as`](crate::NamingClient::resolve_as) can
/// return them.
///
/// ```
/// # use peregrine::ObjectRef;
/// # mod idl { pub mod hello {
/// #     use peregrine::ObjectRef;
/// #     pub struct GreeterRef(ObjectRef);
/// #     impl GreeterRef {
/// #         pub const REPOSITORY_ID: &'static str = "IDL:Hello/Greeter:1.0";
/// #         pub fn unchecked_narrow(obj: ObjectRef) -> Self { Self(obj) }
/// #     }
/// # } }
/// // In a crate with `mod idl { peregrine::include_idl!(); }`:
/// peregrine_naming::typed_ref!(idl::hello::GreeterRef);
///
/// use peregrine_naming::TypedRef;
/// assert_eq!(
///     <idl::hello::GreeterRef as TypedRef>::REPOSITORY_ID,
///     "IDL:Hello/Greeter:1.0"
/// );
/// ```
#[macro_export]
macro_rules! typed_ref {
    ($($t:ty),+ $(,)?) => {
        $(
            impl $crate::TypedRef for $t {
                const REPOSITORY_ID: &'static str = <$t>::REPOSITORY_ID;

                fn from_object_ref(obj: $crate::__private::ObjectRef) -> Self {
                    <$t>::unchecked_narrow(obj)
                }
            }
        )+
    };
}

typed_ref!(
    crate::NamingContextRef,
    crate::NamingContextExtRef,
    crate::BindingIteratorRef,
);
