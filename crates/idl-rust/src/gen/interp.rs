//! Interpreted stubs and skeletons (`Marshal::Interpreted`).
//!
//! The public API is the compiled form's (same servant trait, `IRef`
//! methods, `ISkeleton`); only the bodies differ. Per interface, the
//! module of the interface (beside its skeleton handlers) gets one static
//! `peregrine_orb::interp::OpDesc` per interpreted operation (`OP_<NAME>`:
//! name, result, parameter names, modes and types, user exceptions) and
//! one `TypeDesc` per type used (`TY_<NAME>`). A stub method builds an
//! argument array (`In(&s1)`, `InOut(s2)`, `Out` slots on its stack) and
//! calls `interp::call`; a handler decodes into `interp::Val` slots with
//! `interp::read_args`, calls the servant and replies with
//! `interp::write_results`. Marshaling is shared by all operations,
//! reached through one vtable per Rust type: the types' `Encode`/`Decode`
//! for plain types (`In`, `InOut`, `Out`, `Val`), and for types that need
//! structural rules (bounded strings and sequences, wide strings, object
//! references, types holding references) the engine's typed entries
//! `interp::Put`/`interp::Take` (`TIn`, `TInOut`, `TOut`, `TVal`,
//! `RefIn`) driven by the table's `TypeDesc::kind`, which carries the
//! bounds and element descriptors. Named types get `Put`/`Take` impls
//! (through their `Encode`/`Decode`/`decode_in`) and interface references
//! an `interp::Reference` impl when any interface is interpreted (the
//! holders of abstract interfaces an `interp::Nullable` impl, so they
//! travel as references do).
//! Valuetypes and value boxes (`ValueSlot<T>`) are plain: their
//! `ValueType` code writes to the request's one writer and reads from
//! the reply's one reader, so sharing spans the arguments as in the
//! compiled form (the engine's `Put`/`Take` cover them as elements of
//! bounded sequences).
//!
//! `ValueBase` slots (`ValueSlot<dyn ValueObject>`) are typed: their
//! descriptor is `Kind::ValueBase`, carrying the generated
//! `idl_rt::VALUE_BASE` reader as a function. Slots of abstract
//! valuetype `V` (`ValueSlot<dyn V>`) are typed too: their descriptor is
//! `Kind::AbstractValue`, and the generated code gives `dyn V` the
//! engine's `interp::SlotValue` entry, which reads through `V`'s
//! `__VALUES` (a `cdr::Polymorphic`).
//!
//! Only operations using `long double` inside a bounded or
//! reference-holding sequence/array (no typed entry) keep the compiled
//! form.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use peregrine_idl::{BasicType, DefId, ParamDir, Type};

use super::{lit_str, tuple, Gen, OpInfo};
use crate::names::{bare, camel, out_locals, screaming, snake};

/// How an interface's stubs and skeletons marshal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Marshal {
    /// Per-operation generated code (the default).
    #[default]
    Compiled,
    /// Table-driven: per-operation tables walked by one generic routine
    /// (`peregrine_orb::interp`); smaller code, the same bytes.
    Interpreted,
}

impl Marshal {
    /// Parses `compiled` or `interpreted`.
    pub fn from_name(s: &str) -> Option<Marshal> {
        match s {
            "compiled" => Some(Marshal::Compiled),
            "interpreted" => Some(Marshal::Interpreted),
            _ => None,
        }
    }
}

/// `TY_` + the IDL text in screaming snake case (`::StrSeq` ->
/// `TY_STR_SEQ`, `sequence<long>` -> `TY_SEQUENCE_LONG`).
fn ty_static(idl: &str) -> String {
    let mut s = String::from("TY");
    for word in idl.split(|c: char| !c.is_ascii_alphanumeric()) {
        if !word.is_empty() {
            s.push('_');
            s.push_str(&screaming(word));
        }
    }
    s
}

impl Gen<'_> {
    /// The marshaling form of the operations declared in `iface`.
    pub(super) fn marshal_of(&self, iface: DefId) -> Marshal {
        let scoped = &self.def(iface).scoped_name;
        self.o
            .interface_marshal
            .iter()
            .find(|(n, _)| {
                n == scoped || n.trim_start_matches("::") == scoped.trim_start_matches("::")
            })
            .map(|(_, m)| *m)
            .unwrap_or(self.o.marshal)
    }

    /// True if any interface of this generation is interpreted: named
    /// types then get the engine's typed entries (`interp::Put`/`Take`)
    /// and references `interp::Reference`.
    pub(super) fn any_interp(&self) -> bool {
        self.o.marshal == Marshal::Interpreted
            || self
                .o
                .interface_marshal
                .iter()
                .any(|(_, m)| *m == Marshal::Interpreted)
    }

    /// True if `op` is generated in the interpreted form: its interface
    /// asks for it and every type it marshals has an engine entry.
    pub(super) fn interpreted(&mut self, op: &OpInfo) -> bool {
        if self.marshal_of(op.iface) != Marshal::Interpreted {
            return false;
        }
        let mut types: Vec<Type> = op.params.iter().map(|p| p.ty.clone()).collect();
        types.push(op.result.clone());
        types.extend(op.raises.iter().map(|e| Type::Named(*e)));
        types.iter().all(|t| self.interp_ok(t))
    }

    /// Marshaled through the typed entries (`Put`/`Take`, descriptor
    /// driven) rather than the Rust type's `Encode`/`Decode`.
    pub(super) fn typed(&mut self, ty: &Type) -> bool {
        self.custom(ty) || self.needs_orb(ty)
    }

    /// The engine has entries for `ty`.
    fn interp_ok(&mut self, ty: &Type) -> bool {
        match self.resolve_owned(ty) {
            Type::Fixed(None) => false,
            _ if !self.typed(ty) => true,
            Type::Sequence(e, _) | Type::Array(e, _) => self.elem_ok(&e),
            _ => true,
        }
    }

    /// An element of a typed sequence or array has a typed entry.
    fn elem_ok(&mut self, ty: &Type) -> bool {
        match self.resolve_owned(ty) {
            Type::Fixed(None) | Type::Basic(BasicType::LongDouble) => false,
            Type::Sequence(e, _) | Type::Array(e, _) => self.elem_ok(&e),
            _ => true,
        }
    }

    /// `interp::Put`/`interp::Take` impls of the named type `id` (Rust
    /// `name`), through its `Encode` and `Decode` (or `decode_in` when it
    /// holds references), bulk element copies included.
    pub(super) fn interp_entries(&mut self, id: DefId, name: &str) -> String {
        if !self.any_interp() {
            return String::new();
        }
        let orb = &self.o.orb;
        let cdr = &self.o.cdr;
        let ip = format!("{orb}::interp");
        let put = format!(
            "impl {ip}::Put for {name} {{
    #[inline]
    fn put(&self, _ty: &{ip}::TypeDesc, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {{
        {cdr}::Encode::encode(self, w)
    }}
    #[inline]
    fn put_elems(items: &[Self], _ty: &{ip}::TypeDesc, w: &mut {cdr}::Writer) -> {cdr}::Result<()> {{
        <Self as {cdr}::Encode>::encode_slice(items, w)
    }}
}}
"
        );
        let take = if self.needs_orb(&Type::Named(id)) {
            format!(
                "impl<'de> {ip}::Take<'de> for {name} {{
    #[inline]
    fn take(_ty: &{ip}::TypeDesc, cx: &{ip}::Cx<'_>, r: &mut {cdr}::Reader<'de>) -> {cdr}::Result<Self> {{
        Self::decode_in(r, cx.orb())
    }}
}}
"
            )
        } else {
            format!(
                "impl<'de> {ip}::Take<'de> for {name} {{
    #[inline]
    fn take(_ty: &{ip}::TypeDesc, _cx: &{ip}::Cx<'_>, r: &mut {cdr}::Reader<'de>) -> {cdr}::Result<Self> {{
        <Self as {cdr}::Decode<'de>>::decode(r)
    }}
    #[inline]
    fn take_vec(_ty: &{ip}::TypeDesc, _cx: &{ip}::Cx<'_>, r: &mut {cdr}::Reader<'de>, n: usize) -> {cdr}::Result<Vec<Self>> {{
        <Self as {cdr}::Decode<'de>>::decode_vec(r, n)
    }}
}}
"
            )
        };
        put + &take
    }

    /// The IDL text of `ty` for a `TypeDesc`.
    fn idl_text(&self, ty: &Type) -> String {
        match ty {
            Type::Basic(b) => b.idl_name().into(),
            Type::TypeCode => "TypeCode".into(),
            Type::String(None) => "string".into(),
            Type::String(Some(n)) => format!("string<{n}>"),
            Type::WString(None) => "wstring".into(),
            Type::WString(Some(n)) => format!("wstring<{n}>"),
            Type::Fixed(Some((d, s))) => format!("fixed<{d}, {s}>"),
            Type::Fixed(None) => "fixed".into(),
            Type::Sequence(t, None) => format!("sequence<{}>", self.idl_text(t)),
            Type::Sequence(t, Some(n)) => format!("sequence<{}, {n}>", self.idl_text(t)),
            Type::Array(t, dims) => {
                let mut s = self.idl_text(t);
                for d in dims {
                    let _ = write!(s, "[{d}]");
                }
                s
            }
            Type::Named(id) => format!("::{}", self.def(*id).scoped_name.trim_start_matches("::")),
        }
    }

    /// An expression of type `fn() -> TypeCode` for `ty` seen from `cur`
    /// (the generated `tc_<name>` functions for named types).
    fn desc_tc(&self, ty: &Type, cur: &[String]) -> String {
        let e = self.desc_tc_call(ty, cur);
        match e.strip_suffix("()") {
            Some(path) if !path.contains('(') => path.to_string(),
            _ => format!("|| {e}"),
        }
    }

    fn desc_tc_call(&self, ty: &Type, cur: &[String]) -> String {
        let dy = &self.o.dynamic;
        match ty {
            Type::Basic(BasicType::Object) => {
                format!("{dy}::TypeCode::objref_tc(\"IDL:omg.org/CORBA/Object:1.0\", \"Object\")")
            }
            Type::Basic(b) => {
                let f = match b {
                    BasicType::LongLong => "longlong".to_string(),
                    BasicType::UShort => "ushort".to_string(),
                    BasicType::ULong => "ulong".to_string(),
                    BasicType::ULongLong => "ulonglong".to_string(),
                    BasicType::LongDouble => "longdouble".to_string(),
                    BasicType::WChar => "wchar".to_string(),
                    BasicType::ValueBase => "value_base".to_string(),
                    other => other.idl_name().to_string(),
                };
                format!("{dy}::TypeCode::{f}()")
            }
            Type::TypeCode => format!("{dy}::TypeCode::tc_typecode()"),
            Type::String(b) => format!("{dy}::TypeCode::string_tc({})", b.unwrap_or(0)),
            Type::WString(b) => format!("{dy}::TypeCode::wstring_tc({})", b.unwrap_or(0)),
            Type::Fixed(Some((d, s))) => format!("{dy}::TypeCode::fixed_tc({d}, {s})"),
            Type::Fixed(None) => format!("{dy}::TypeCode::null()"),
            Type::Sequence(t, b) => format!(
                "{dy}::TypeCode::sequence_tc({}, {})",
                b.unwrap_or(0),
                self.desc_tc_call(t, cur)
            ),
            Type::Array(t, dims) => {
                let mut s = self.desc_tc_call(t, cur);
                for d in dims.iter().rev() {
                    s = format!("{dy}::TypeCode::array_tc({d}, {s})");
                }
                s
            }
            Type::Named(id) => {
                let f = format!("tc_{}", bare(&snake(&self.def(*id).name)));
                format!("{}()", Self::rel(cur, &self.mod_path(*id), &f))
            }
        }
    }

    /// Name of the table static of `op`.
    fn op_static(op: &OpInfo) -> String {
        format!("OP_{}", screaming(bare(&op.method)))
    }

    /// Registers the descriptor of `ty` (and of its elements) in `types`
    /// and returns its static's name.
    fn ty_reg(
        &mut self,
        ty: &Type,
        cur: &[String],
        types: &mut BTreeMap<String, (String, String, String)>,
    ) -> String {
        let orb = self.o.orb.clone();
        let idl = self.idl_text(ty);
        let name = ty_static(&idl);
        if types.contains_key(&name) {
            return name;
        }
        let max = |b: Option<u32>| b.map_or_else(|| "u32::MAX".to_string(), |n| n.to_string());
        let kind = match self.resolve_owned(ty) {
            Type::String(b) => format!("String({})", max(b)),
            Type::WString(b) => format!("WString({})", max(b)),
            Type::Basic(BasicType::Object) => "Object".into(),
            Type::Basic(BasicType::ValueBase) => {
                // The generated reader of `ValueBase` slots, as a `fn`.
                let read = self
                    .dec_abstract(&Type::Basic(BasicType::ValueBase), cur)
                    .map(|d| d.expr())
                    .unwrap_or_default();
                // The ORB goes to the reader first when some value of
                // the build holds references (a constant).
                let rt = self.rt(cur);
                format!(
                    "ValueBase(|r, orb| {{ if {rt}::VALUES_NEED_ORB {{ {rt}::bind_values(r, orb); }} {read} }})"
                )
            }
            Type::Named(id) if self.is_iface(&Type::Named(id)).is_some() => "Object".into(),
            Type::Named(id) if self.abstract_vt(&Type::Named(id)).is_some() => {
                "AbstractValue".into()
            }
            Type::Sequence(e, b) => {
                let e = self.ty_reg(&e, cur, types);
                format!("Sequence({}, &{e})", max(b))
            }
            Type::Array(e, dims) => {
                let elem = if dims.len() > 1 {
                    Type::Array(e, dims[1..].to_vec())
                } else {
                    *e
                };
                let e = self.ty_reg(&elem, cur, types);
                format!("Array(&{e})")
            }
            _ => "Plain".into(),
        };
        let tc = self.desc_tc(ty, cur);
        types.insert(
            name.clone(),
            (idl, tc, format!("{orb}::interp::Kind::{kind}")),
        );
        name
    }

    /// The tables of the interpreted operations `ops` (declared in one
    /// interface), for its inner module: one `TypeDesc` per type (and per
    /// element type of a sequence or array), one `OpDesc` per operation.
    pub(super) fn interp_tables(&mut self, ops: &[&OpInfo], cur: &[String]) -> String {
        if ops.is_empty() {
            return String::new();
        }
        let orb = self.o.orb.clone();
        let mut types = BTreeMap::new();
        let mut tables = String::new();
        for op in ops {
            let result = if op.result == Type::Basic(BasicType::Void) {
                "None".to_string()
            } else {
                format!("Some(&{})", self.ty_reg(&op.result, cur, &mut types))
            };
            let mut params = String::new();
            for p in &op.params {
                let mode = match p.dir {
                    ParamDir::In => "In",
                    ParamDir::InOut => "InOut",
                    ParamDir::Out => "Out",
                };
                let ty = self.ty_reg(&p.ty, cur, &mut types);
                let _ = write!(
                    params,
                    "{orb}::interp::ParamDesc {{ name: {}, mode: {orb}::interp::Mode::{mode}, ty: &{ty} }},",
                    lit_str(&p.name),
                );
            }
            let raises = op
                .raises
                .iter()
                .map(|e| lit_str(&self.def(*e).repo_id))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = write!(
                tables,
                "/// Operation table of `{wire}` (interpreted stub and skeleton).
#[doc(hidden)]
pub static {name}: {orb}::interp::OpDesc = {orb}::interp::OpDesc {{
    name: {wire_lit},
    oneway: {oneway},
    result: {result},
    params: &[{params}],
    raises: &[{raises}],
    contexts: &[{contexts}],
}};
",
                wire = op.wire,
                contexts = op
                    .contexts
                    .iter()
                    .map(|c| lit_str(c))
                    .collect::<Vec<_>>()
                    .join(", "),
                name = Self::op_static(op),
                wire_lit = lit_str(&op.wire),
                oneway = op.oneway,
            );
        }
        let mut s = String::new();
        for (name, (idl, tc, kind)) in types {
            let _ = write!(
                s,
                "/// Type descriptor of `{idl}` (interpreted tables).
#[doc(hidden)]
pub static {name}: {orb}::interp::TypeDesc = {orb}::interp::TypeDesc {{ idl: {}, type_code: Some({tc}), kind: {kind} }};
",
                lit_str(&idl)
            );
        }
        s + &tables
    }

    /// The user-exception decoders of `op` as an `ExcDesc` array
    /// expression.
    fn interp_raises(&mut self, op: &OpInfo, cur: &[String]) -> String {
        if op.raises.is_empty() {
            return "&[]".into();
        }
        let orb = self.o.orb.clone();
        let et = self.err_ty(op, cur);
        let mut seen = std::collections::HashSet::new();
        let mut items = Vec::new();
        for e in &op.raises {
            let ed = self.def(*e);
            let mut v = camel(&ed.name);
            if !seen.insert(v.clone()) {
                v = camel(&ed.scoped_name.replace("::", "_"));
            }
            let p = self.path(cur, *e, "");
            let dec = self.dec(&Type::Named(*e), cur).expr();
            let decode = if self.needs_orb(&Type::Named(*e)) {
                format!("|r, cx| {{ let orb = cx.orb(); {dec}.map({et}::{v}) }}")
            } else {
                format!("|r, _| {dec}.map({et}::{v})")
            };
            items.push(format!(
                "{orb}::interp::ExcDesc {{ id: {p}::REPOSITORY_ID, decode: {decode} }}"
            ));
        }
        format!("&[{}]", items.join(", "))
    }

    /// An interpreted stub method: the argument array and one call.
    pub(super) fn interp_stub_method(&mut self, op: &OpInfo, cur: &[String]) -> String {
        let orb = self.o.orb.clone();
        let ip = format!("{orb}::interp");
        let table = format!("{}::{}", self.inner_mod(cur, op.iface), Self::op_static(op));
        let mut s = self.op_doc(op);
        let sig = self.sig(op, cur);
        let _ = writeln!(s, "#[inline(never)]\npub {sig} {{");
        let mut slots = String::new();
        let mut args = Vec::new();
        let mut outs = Vec::new();
        if op.result != Type::Basic(BasicType::Void) {
            let t = if self.typed(&op.result) { "T" } else { "" };
            slots.push_str(&format!("let mut ret = {ip}::{t}Out::new();\n"));
            args.push("&mut ret".to_string());
            outs.push("ret.value()".to_string());
        }
        let rust = op.rust_params();
        let locals = out_locals(
            &op.params
                .iter()
                .zip(&rust)
                .map(|(p, n)| (n.clone(), p.dir == ParamDir::Out))
                .collect::<Vec<_>>(),
        );
        for ((p, n), local) in op.params.iter().zip(&rust).zip(locals) {
            let t = if self.typed(&p.ty) { "T" } else { "" };
            match p.dir {
                ParamDir::In => {
                    if self.is_iface(&p.ty).is_some()
                        || matches!(self.resolve_owned(&p.ty), Type::Basic(BasicType::Object))
                    {
                        args.push(format!("&mut {ip}::RefIn({n})"));
                    } else if self.by_value(&p.ty) {
                        args.push(format!("&mut {ip}::{t}In(&{n})"));
                    } else {
                        args.push(format!("&mut {ip}::{t}In({n})"));
                    }
                }
                ParamDir::InOut => args.push(format!("&mut {ip}::{t}InOut({n})")),
                ParamDir::Out => {
                    // `out_locals` names every `out` parameter's local.
                    let v = local.unwrap_or_default();
                    let _ = writeln!(slots, "let mut {v} = {ip}::{t}Out::new();");
                    args.push(format!("&mut {v}"));
                    outs.push(format!("{v}.value()"));
                }
            }
        }
        // With a `context` clause, the caller's properties go too.
        let (in_context, ctx_arg) = match op.context_param() {
            Some(c) => ("_in_context", format!(", Some({c})")),
            None => ("", String::new()),
        };
        if op.oneway {
            let _ = writeln!(
                s,
                "{ip}::call_oneway{in_context}(&self.0, &{table}, &[{}]{ctx_arg})\n}}\n",
                args.join(", ")
            );
            return s;
        }
        let raises = self.interp_raises(op, cur);
        let et = self.err_ty(op, cur);
        let _ = writeln!(
            s,
            "{slots}{ip}::call{in_context}::<{et}>(&self.0, &{table}, {raises}, &mut [{}]{ctx_arg})?;\nOk({})\n}}\n",
            args.join(", "),
            tuple(&outs)
        );
        s
    }

    /// An interpreted skeleton handler (`__handle_<op>`), in the
    /// interface's inner module.
    pub(super) fn interp_handler(&mut self, op: &OpInfo, cur: &[String]) -> String {
        let orb = self.o.orb.clone();
        let ip = format!("{orb}::interp");
        let tpath = self.path(cur, op.iface, "");
        let table = Self::op_static(op);
        let mut slots = String::new();
        let mut refs = Vec::new();
        let mut args = Vec::new();
        let rust = op.rust_params();
        for (p, n) in op.params.iter().zip(&rust) {
            if p.dir == ParamDir::Out {
                continue;
            }
            let v = format!("a_{}", bare(n));
            let resolved = self.resolve_owned(&p.ty);
            let t = if self.typed(&p.ty) { "TVal" } else { "Val" };
            let slot_ty = match (&resolved, p.dir) {
                (Type::String(_), ParamDir::In) => "std::borrow::Cow<'_, str>".to_string(),
                (Type::Sequence(t, _), ParamDir::In)
                    if matches!(self.resolve_owned(t), Type::Basic(BasicType::Octet)) =>
                {
                    "&[u8]".to_string()
                }
                _ => self.rty(&p.ty, cur),
            };
            let _ = writeln!(slots, "let mut {v} = {ip}::{t}::<{slot_ty}>::empty();");
            refs.push(format!("&mut {v}"));
            if p.dir == ParamDir::InOut {
                args.push(format!("{v}.get_mut()"));
            } else {
                let octets = matches!(&resolved, Type::Sequence(t, _)
                    if matches!(self.resolve_owned(t), Type::Basic(BasicType::Octet)));
                if self.is_iface(&p.ty).is_some()
                    || matches!(resolved, Type::Basic(BasicType::Object))
                {
                    args.push(format!("{v}.get().as_ref()"));
                } else if self.by_value(&p.ty) {
                    args.push(format!("*{v}.get()"));
                } else if octets {
                    // `&&[u8]` auto-derefs to the servant's `&[u8]`.
                    args.push(format!("{v}.get()"));
                } else {
                    args.push(format!("{v}.get()"));
                }
            }
        }
        let mut read = if refs.is_empty() {
            String::new()
        } else {
            format!(
                "{slots}{ip}::read_args(req, &{table}, &mut [{}])?;\n",
                refs.join(", ")
            )
        };
        if !op.contexts.is_empty() {
            // The caller's properties follow the arguments.
            let _ = writeln!(read, "let ctx = {ip}::read_context(req)?;");
            args.push("&ctx".into());
        }
        let call = format!("{tpath}::{}(servant, {})", op.method, args.join(", "));
        let mut s = format!(
            "/// Skeleton handler of `{}` (interpreted).\n#[doc(hidden)]\n#[inline(never)]\npub fn __handle_{}<S: {tpath} + ?Sized>(servant: &S, req: &mut {orb}::ServerRequest<'_>) -> Result<(), {orb}::SystemException> {{\n{read}",
            op.wire,
            bare(&op.method)
        );
        if op.oneway {
            let unused = if read.is_empty() {
                "let _ = req;\n"
            } else {
                ""
            };
            let _ = writeln!(s, "{unused}{call}\n}}\n");
            return s;
        }
        // Results are held in `Val`s (one shared drop per type) while the
        // reply is written.
        let mut pat = Vec::new();
        let mut vals = Vec::new();
        let mut hold = String::new();
        // Plain values are passed as `&T` (`Encode`), typed ones as
        // `&TVal<T>` (`Put`, driven by the table).
        if op.result != Type::Basic(BasicType::Void) {
            pat.push("ret".to_string());
            if self.typed(&op.result) {
                vals.push("&ret".to_string());
                let _ = writeln!(hold, "let ret = {ip}::TVal::new(ret);");
            } else {
                vals.push("ret.get()".to_string());
                let _ = writeln!(hold, "let ret = {ip}::Val::new(ret);");
            }
        }
        for (p, n) in op.params.iter().zip(&rust) {
            let n = bare(n);
            let typed = self.typed(&p.ty);
            match p.dir {
                ParamDir::InOut if typed => vals.push(format!("&a_{n}")),
                ParamDir::InOut => vals.push(format!("a_{n}.get()")),
                ParamDir::Out => {
                    pat.push(format!("o_{n}"));
                    let t = if typed { "TVal" } else { "Val" };
                    vals.push(if typed {
                        format!("&o_{n}")
                    } else {
                        format!("o_{n}.get()")
                    });
                    let _ = writeln!(hold, "let o_{n} = {ip}::{t}::new(o_{n});");
                }
                ParamDir::In => {}
            }
        }
        let mut exc_arms = String::new();
        if !op.raises.is_empty() {
            let et = self.err_ty(op, cur);
            let mut seen = std::collections::HashSet::new();
            for e in &op.raises {
                let ed = self.def(*e);
                let mut v = camel(&ed.name);
                if !seen.insert(v.clone()) {
                    v = camel(&ed.scoped_name.replace("::", "_"));
                }
                let p = self.path(cur, *e, "");
                let _ = writeln!(
                    exc_arms,
                    "Err({et}::{v}(e)) => {ip}::write_user_exception(req, {p}::REPOSITORY_ID, &e),"
                );
            }
            let _ = writeln!(exc_arms, "Err({et}::System(e)) => Err(e),");
        } else {
            exc_arms.push_str("Err(e) => Err(e),\n");
        }
        let _ = writeln!(
            s,
            "match {call} {{\nOk({}) => {{ {hold}{ip}::write_results(req, &{table}, &[{}]) }}\n{exc_arms}}}\n}}\n",
            tuple(&pat),
            vals.join(", ")
        );
        s
    }
}
