//! Text of the `idl_rt` support module that every output directory's
//! `_include.rs` carries: helpers the generated code calls for bounds,
//! wide strings, object references and replies.

/// The support module; `{cdr}` and `{orb}` are replaced by the crate paths.
const CORE: &str = r#"
/// Support code for the generated modules (bounds checks, wide strings,
/// `long double`, object references, replies).
#[allow(dead_code)]
pub mod idl_rt {
    /// IDL `long double`: the 16 bytes of an IEEE 754 binary128 value,
    /// most significant first (Rust has no `f128` on stable).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct LongDouble(pub [u8; 16]);

    impl LongDouble {
        /// The binary128 value equal to `v` (exact: every `f64` is representable).
        pub fn from_f64(v: f64) -> Self {
            let bits = v.to_bits();
            let sign = (bits >> 63) as u128;
            let exp = ((bits >> 52) & 0x7ff) as i64;
            let frac = (bits & ((1u64 << 52) - 1)) as u128;
            let (e, f) = if exp == 0 && frac == 0 {
                (0u128, 0u128)
            } else if exp == 0x7ff {
                (0x7fff, frac << 60)
            } else if exp == 0 {
                // Subnormal double: frac * 2^-1074, normalized.
                let p = 63 - (frac as u64).leading_zeros() as i64;
                let f = (frac & ((1u128 << p) - 1)) << (112 - p);
                ((p - 1074 + 16383) as u128, f)
            } else {
                ((exp - 1023 + 16383) as u128, frac << 60)
            };
            Self(((sign << 127) | (e << 112) | f).to_be_bytes())
        }

        /// The nearest `f64` (truncating extra fraction bits).
        pub fn to_f64(self) -> f64 {
            let bits = u128::from_be_bytes(self.0);
            let sign = ((bits >> 127) as u64) << 63;
            let exp = ((bits >> 112) & 0x7fff) as i64;
            let frac = ((bits >> 60) & ((1u128 << 52) - 1)) as u64;
            if exp == 0 {
                return f64::from_bits(sign);
            }
            if exp == 0x7fff {
                return f64::from_bits(sign | (0x7ff << 52) | frac);
            }
            let e = exp - 16383 + 1023;
            if e >= 0x7ff {
                f64::from_bits(sign | (0x7ff << 52))
            } else if e <= 0 {
                // Subnormal in f64 (or zero when too small).
                let shift = 1 - e;
                let m = if shift < 64 { ((1u64 << 52) | frac) >> shift } else { 0 };
                f64::from_bits(sign | m)
            } else {
                f64::from_bits(sign | ((e as u64) << 52) | frac)
            }
        }
    }

    impl {cdr}::Encode for LongDouble {
        fn encode(&self, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {
            w.write_long_double(self.0);
            Ok(())
        }
    }

    impl<'de> {cdr}::Decode<'de> for LongDouble {
        fn decode(r: &mut {cdr}::Reader<'de>) -> {cdr}::Result<Self> {
            Ok(Self(r.read_long_double()?))
        }
    }

    /// Fails with `BoundExceeded` when `len` is over `bound`.
    #[inline]
    pub fn check_bound(len: usize, bound: u32) -> {cdr}::Result<()> {
        if len as u64 > u64::from(bound) {
            Err({cdr}::CdrError::BoundExceeded { bound, len: len as u64 })
        } else {
            Ok(())
        }
    }

    /// A bounded `string` (the bound counts octets of the UTF-8 text).
    pub fn encode_bounded_string(s: &str, bound: u32, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {
        check_bound(s.len(), bound)?;
        w.write_string(s)
    }

    /// Reads a bounded `string`.
    pub fn decode_bounded_string(r: &mut {cdr}::Reader<'_>, bound: u32) -> {cdr}::Result<String> {
        let s = r.read_string()?;
        check_bound(s.len(), bound)?;
        Ok(s)
    }

    /// Reads a `string` borrowed from the input where the code set allows.
    pub fn decode_str<'de>(r: &mut {cdr}::Reader<'de>, bound: u32) -> {cdr}::Result<std::borrow::Cow<'de, str>> {
        let s = r.read_str()?;
        check_bound(s.len(), bound)?;
        Ok(s)
    }

    /// A `wstring` (the bound counts characters).
    pub fn encode_wstring(s: &str, bound: u32, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {
        if bound != u32::MAX {
            check_bound(s.chars().count(), bound)?;
        }
        w.write_wstring(s)
    }

    /// Reads a `wstring`.
    pub fn decode_wstring(r: &mut {cdr}::Reader<'_>, bound: u32) -> {cdr}::Result<String> {
        let s = r.read_wstring()?;
        if bound != u32::MAX {
            check_bound(s.chars().count(), bound)?;
        }
        Ok(s)
    }

    /// Reads a `sequence<octet>` borrowed from the input.
    pub fn decode_octets<'de>(r: &mut {cdr}::Reader<'de>, bound: u32) -> {cdr}::Result<&'de [u8]> {
        let b = r.read_octet_seq()?;
        check_bound(b.len(), bound)?;
        Ok(b)
    }

    /// Reads an `in` sequence of integers or floats, borrowed from the
    /// request buffer when it is in native order and memory-aligned.
    pub fn decode_prim_slice<'de, T: {cdr}::Primitive>(r: &mut {cdr}::Reader<'de>, bound: u32) -> {cdr}::Result<std::borrow::Cow<'de, [T]>> {
        let s = r.read_primitive_slice::<T>()?;
        check_bound(s.len(), bound)?;
        Ok(s)
    }

    /// Reads an `in` sequence of plain structs, borrowed from the request
    /// buffer when its layout is native (the first element, off the
    /// struct's alignment after the length, rewritten in place by the
    /// server's exclusive reader), decoded into a vector otherwise.
    // The closure is not redundant: `read_plain_slice` needs a decoder
    // for every reader lifetime, which `<T as Decode<'de>>::decode` is not.
    #[allow(clippy::redundant_closure)]
    pub fn decode_plain_slice<'de, T>(r: &mut {cdr}::Reader<'de>, bound: u32) -> {cdr}::Result<std::borrow::Cow<'de, [T]>>
    where
        T: {cdr}::PlainData + for<'x> {cdr}::Decode<'x>,
    {
        let s = r.read_plain_slice::<T>(|r| T::decode(r))?;
        check_bound(s.len(), bound)?;
        Ok(s)
    }

    /// A sequence whose elements need generated code.
    pub fn encode_seq<T>(
        items: &[T],
        bound: u32,
        w: &mut {cdr}::Writer,
        mut f: impl FnMut(&T, &mut {cdr}::Writer) -> {cdr}::Result<()>,
    ) -> {cdr}::Result<()> {
        check_bound(items.len(), bound)?;
        w.write_len(items.len())?;
        items.iter().try_for_each(|x| f(x, w))
    }

    /// Reads a sequence whose elements need generated code; the length is
    /// checked against the bound and the input before anything is reserved.
    pub fn decode_seq<'de, T>(
        r: &mut {cdr}::Reader<'de>,
        bound: u32,
        mut f: impl FnMut(&mut {cdr}::Reader<'de>) -> {cdr}::Result<T>,
    ) -> {cdr}::Result<Vec<T>> {
        let n = r.read_u32()?;
        check_bound(n as usize, bound)?;
        let n = r.check_len(n, 1)?;
        let mut v = Vec::with_capacity(n.min(r.remaining() / core::mem::size_of::<T>().max(1)));
        for _ in 0..n {
            v.push(f(r)?);
        }
        Ok(v)
    }

    /// Reads an array whose elements need generated code.
    pub fn decode_array<'de, T, const N: usize>(
        r: &mut {cdr}::Reader<'de>,
        mut f: impl FnMut(&mut {cdr}::Reader<'de>) -> {cdr}::Result<T>,
    ) -> {cdr}::Result<[T; N]> {
        let mut v = Vec::with_capacity(N);
        for _ in 0..N {
            v.push(f(r)?);
        }
        v.try_into().map_err(|_| {cdr}::CdrError::Truncated { needed: N, remaining: 0 })
    }
"#;

const ORB: &str = r#"
    /// Object reference types: `ObjectRef` and every generated `IRef`
    /// (the ORB runtime's one reference trait).
    pub use {orb}::Reference as ObjRef;

    /// A possibly nil reference (`None` is the nil IOR).
    pub fn encode_ref<R: ObjRef>(v: Option<&R>, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {
        {orb}::ObjectRef::encode_opt(v.map(ObjRef::object_ref), w)
    }

    /// Reads a possibly nil reference bound to `orb`.
    pub fn decode_ref<R: ObjRef>(r: &mut {cdr}::Reader<'_>, orb: &{orb}::Orb) -> {cdr}::Result<Option<R>> {
        Ok({orb}::ObjectRef::decode(r, orb)?.map(R::from_object_ref))
    }

    /// Reads a value (or something holding values) whose state holds
    /// object references: the reader gets `orb` as the context value
    /// states bind references to (`value_orb`), unless it has one.
    pub fn decode_value_in<'de, T: {cdr}::Decode<'de>>(r: &mut {cdr}::Reader<'de>, orb: &{orb}::Orb) -> {cdr}::Result<T> {
        bind_values(r, orb);
        T::decode(r)
    }

    /// Hands `orb` to the states of the values `r` reads from here on
    /// (before a `ValueBase` or abstract valuetype slot that may hold a
    /// value with references).
    pub fn bind_values(r: &mut {cdr}::Reader<'_>, orb: &{orb}::Orb) {
        r.set_value_context(|| std::sync::Arc::new(orb.clone()));
    }

    /// The ORB a value's state binds its references to: the reader's
    /// value context (`MARSHAL` when the decode started without one).
    pub fn value_orb(r: &{cdr}::Reader<'_>) -> {cdr}::Result<std::sync::Arc<{orb}::Orb>> {
        r.value_context()
            .and_then(|c| c.clone().downcast::<{orb}::Orb>().ok())
            .ok_or({cdr}::CdrError::NoValueContext)
    }

    /// Writes a reply body; an encoding failure after the servant ran is
    /// a system exception with `COMPLETED_YES`.
    pub fn write_reply(
        w: &mut {cdr}::Writer,
        f: impl FnOnce(&mut {cdr}::Writer) -> {cdr}::Result<()>,
    ) -> Result<(), {orb}::SystemException> {
        f(w).map_err(|e| {orb}::SystemException::from_cdr(&e, {orb}::CompletionStatus::Yes))
    }
"#;

/// The `idl_rt` module source; `values` (when some code has `ValueBase`
/// slots) are the paths, from the generated root, of the concrete
/// valuetypes and value boxes that such a slot reads, and of their
/// TypeCode functions.
pub fn support_module(
    cdr: &str,
    orb: &str,
    dynamic: &str,
    with_orb: bool,
    values_need_orb: bool,
    values: Option<&[(String, String, bool)]>,
) -> String {
    let mut s = CORE.to_string();
    if with_orb {
        s.push_str(ORB);
        s.push_str(&format!(
            "\n    /// Whether a generated value holds object references in its state:\n    /// decoders of `ValueBase` and abstract valuetype slots then hand\n    /// the ORB to the reader (`bind_values`).\n    pub const VALUES_NEED_ORB: bool = {values_need_orb};\n"
        ));
    }
    if let Some(values) = values {
        s.push_str(&value_base(values));
    }
    s.push_str("}\n");
    s.replace("{cdr}", cdr)
        .replace("{orb}", orb)
        .replace("{dy}", dynamic)
}

/// `VALUE_BASE`, the reader of `ValueBase` slots: a registered factory
/// first (by the most derived id), then the generated types by the ids of
/// the header (truncating a chunked value to a base listed there). The
/// value read becomes a `ValueObject` by a downcast to its generated
/// type; a factory's value of another Rust type is refused like an
/// unknown id (`MARSHAL`, no value factory).
fn value_base(values: &[(String, String, bool)]) -> String {
    let mut arms = String::new();
    let mut casts = String::new();
    let mut tcs = String::new();
    let mut customs = String::new();
    for (v, tc, custom) in values {
        tcs.push_str(&format!("            super::{tc}(),\n"));
        if *custom {
            customs.push_str(&format!(
                "            {{dy}}::register_custom_value::<super::{v}>();\n"
            ));
        }
        arms.push_str(&format!(
            "            super::{v}::REPOSITORY_ID => Some(<super::{v} as {{cdr}}::ValueType>::read_state(r, info).map({{cdr}}::ValueRef::into_any)),\n"
        ));
        casts.push_str(&format!(
            "        let v = match v.downcast::<super::{v}>() {{ Ok(t) => return Ok(t.upcast()), Err(v) => v }};\n"
        ));
    }
    let read_body = if arms.is_empty() {
        "        let _ = (id, r, info);\n        None\n".to_string()
    } else {
        format!("        match id {{\n{arms}            _ => None,\n        }}\n")
    };
    let n = values.len();
    format!(
        r#"
    /// Reads the values of `ValueBase` slots: any concrete valuetype or
    /// value box of the generated code (a registered factory first).
    pub const VALUE_BASE: {{cdr}}::Polymorphic<dyn {{cdr}}::ValueObject> =
        {{cdr}}::Polymorphic {{ read: read_value_base, cast: cast_value_base }};

    fn read_value_base(
        id: &str,
        r: &mut {{cdr}}::Reader<'_>,
        info: &{{cdr}}::ValueInfo<'_>,
    ) -> Option<{{cdr}}::Result<{{cdr}}::AnyValue>> {{
{read_body}    }}

    fn cast_value_base(
        v: {{cdr}}::AnyValue,
    ) -> Result<{{cdr}}::ValueRef<dyn {{cdr}}::ValueObject>, {{cdr}}::AnyValue> {{
{casts}        Err(v)
    }}

    /// Registers the TypeCodes of the generated valuetypes and value boxes
    /// with the dynamic layer (once; an id registered before keeps its
    /// TypeCode), and the compiled `custom` valuetypes as the readers of
    /// their values, so that the interpreter reads them in `ValueBase`
    /// slots: what putting a `ValueBase` into an `Any` needs. The
    /// generated `Any` support calls it; DII and DSI code building its
    /// own `Any`s may too.
    pub fn register_value_types() {{
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {{
            let tcs: [{{dy}}::TypeCode; {n}] = [
{tcs}            ];
            for tc in tcs {{
                if let Ok(id) = tc.id() {{
                    if {{dy}}::valuetype::lookup_value_type(id).is_none() {{
                        let _ = {{dy}}::register_value_type(tc.clone());
                    }}
                }}
            }}
{customs}        }});
    }}
"#
    )
}
