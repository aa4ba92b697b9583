//! `CORBA::TCKind`: the kind of a TypeCode and its wire value.

use core::fmt;

macro_rules! kinds {
    ($($variant:ident = $v:literal $name:literal;)*) => {
        /// The kind of a [`crate::TypeCode`] (`CORBA::TCKind`); the
        /// discriminant is the value sent on the wire.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u32)]
        pub enum TcKind {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant = $v,
            )*
        }

        impl TcKind {
            /// The kind for a wire value, `None` for unknown values
            /// (and for the `0xffffffff` indirection marker).
            pub fn from_u32(v: u32) -> Option<Self> {
                match v {
                    $($v => Some(Self::$variant),)*
                    _ => None,
                }
            }

            /// The IDL name, e.g. `tk_struct`.
            pub fn name(self) -> &'static str {
                match self { $(Self::$variant => $name,)* }
            }
        }
    };
}

kinds! {
    Null = 0 "tk_null";
    Void = 1 "tk_void";
    Short = 2 "tk_short";
    Long = 3 "tk_long";
    UShort = 4 "tk_ushort";
    ULong = 5 "tk_ulong";
    Float = 6 "tk_float";
    Double = 7 "tk_double";
    Boolean = 8 "tk_boolean";
    Char = 9 "tk_char";
    Octet = 10 "tk_octet";
    Any = 11 "tk_any";
    TypeCode = 12 "tk_TypeCode";
    Principal = 13 "tk_Principal";
    ObjRef = 14 "tk_objref";
    Struct = 15 "tk_struct";
    Union = 16 "tk_union";
    Enum = 17 "tk_enum";
    String = 18 "tk_string";
    Sequence = 19 "tk_sequence";
    Array = 20 "tk_array";
    Alias = 21 "tk_alias";
    Except = 22 "tk_except";
    LongLong = 23 "tk_longlong";
    ULongLong = 24 "tk_ulonglong";
    LongDouble = 25 "tk_longdouble";
    WChar = 26 "tk_wchar";
    WString = 27 "tk_wstring";
    Fixed = 28 "tk_fixed";
    Value = 29 "tk_value";
    ValueBox = 30 "tk_value_box";
    Native = 31 "tk_native";
    AbstractInterface = 32 "tk_abstract_interface";
    LocalInterface = 33 "tk_local_interface";
}

impl TcKind {
    /// Kinds whose TypeCode has no parameters at all on the wire
    /// ("simple" with an empty parameter list).
    pub fn has_no_params(self) -> bool {
        use TcKind::*;
        matches!(
            self,
            Null | Void
                | Short
                | Long
                | UShort
                | ULong
                | Float
                | Double
                | Boolean
                | Char
                | Octet
                | Any
                | TypeCode
                | Principal
                | LongLong
                | ULongLong
                | LongDouble
                | WChar
        )
    }

    /// Kinds whose parameters travel in an encapsulation ("complex").
    pub fn is_complex(self) -> bool {
        !self.has_no_params() && !matches!(self, TcKind::String | TcKind::WString | TcKind::Fixed)
    }

    /// Kinds that carry a repository id and a name.
    pub fn has_id(self) -> bool {
        use TcKind::*;
        matches!(
            self,
            ObjRef
                | Struct
                | Union
                | Enum
                | Alias
                | Except
                | Value
                | ValueBox
                | Native
                | AbstractInterface
                | LocalInterface
        )
    }

    /// Kinds legal as a union discriminator.
    pub fn is_discriminator(self) -> bool {
        use TcKind::*;
        matches!(
            self,
            Short | Long | UShort | ULong | LongLong | ULongLong | Boolean | Char | WChar | Enum
        )
    }
}

impl fmt::Display for TcKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
