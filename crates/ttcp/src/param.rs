//! The Param_Test interface (T5, T6; seed 004 section IV-D) in both
//! marshaling forms: `compiled` and `interpreted` are the same IDL
//! (`idl/param_test.idl`) generated twice by build.rs, so each has its own
//! types, stubs, skeletons and tables, and the binary holds both (which is
//! also what the footprint suite measures).
//!
//! The servant copies every `in` argument into `inout`, `out` and the
//! return value; the client sends the seed's values (strings of 128
//! characters, sequences of 9) and verifies every result.

/// The operations, in IDL order (the `op` of the JSON lines).
pub const OPS: [&str; 7] = [
    "test_short",
    "test_unbounded_string",
    "test_fixed_struct",
    "test_strseq",
    "test_var_struct",
    "test_nested_struct",
    "test_struct_seq",
];

/// Object id of the Param_Test object with the compiled skeleton.
pub const COMPILED_ID: &[u8] = b"param-compiled";
/// Object id of the Param_Test object with the interpreted skeleton.
pub const INTERPRETED_ID: &[u8] = b"param-interpreted";
/// Repository id of Param_Test.
pub const REPOSITORY_ID: &str = "IDL:Param_Test:1.0";

/// A string of 128 characters, varied by `seed`.
fn text(seed: usize) -> String {
    (0..128)
        .map(|i| char::from(b'a' + ((i + seed) % 26) as u8))
        .collect()
}

/// One form's generated code, servant, argument values and client calls.
macro_rules! param_form {
    ($form:ident, $dir:literal) => {
        /// Param_Test generated in this form.
        pub mod $form {
            /// The generated Rust of `idl/param_test.idl`.
            #[allow(missing_docs, dead_code)]
            pub mod idl {
                include!(concat!(env!("OUT_DIR"), "/", $dir, "/_include.rs"));
            }

            use idl::{FixedStruct, NestedStruct, ParamTestRef, StrSeq, StructSeq, VarStruct};
            use peregrine_orb::SystemException;

            /// Copies `in` into `inout`, `out` and the return value.
            pub struct Servant;

            // Not inlined into the skeletons, so that the footprint suite
            // measures the generated code alone.
            impl idl::ParamTest for Servant {
                #[inline(never)]
                fn test_short(&self, s1: i16, s2: &mut i16) -> Result<(i16, i16), SystemException> {
                    *s2 = s1;
                    Ok((s1, s1))
                }
                #[inline(never)]
                fn test_unbounded_string(
                    &self,
                    s1: &str,
                    s2: &mut String,
                ) -> Result<(String, String), SystemException> {
                    s1.clone_into(s2);
                    Ok((s1.to_owned(), s1.to_owned()))
                }
                #[inline(never)]
                fn test_fixed_struct(
                    &self,
                    s1: &FixedStruct,
                    s2: &mut FixedStruct,
                ) -> Result<(FixedStruct, FixedStruct), SystemException> {
                    s2.clone_from(s1);
                    Ok((s1.clone(), s1.clone()))
                }
                #[inline(never)]
                fn test_strseq(
                    &self,
                    s1: &[String],
                    s2: &mut StrSeq,
                ) -> Result<(StrSeq, StrSeq), SystemException> {
                    s2.clone_from_slice_or_vec(s1);
                    Ok((s1.to_vec(), s1.to_vec()))
                }
                #[inline(never)]
                fn test_var_struct(
                    &self,
                    s1: &VarStruct,
                    s2: &mut VarStruct,
                ) -> Result<(VarStruct, VarStruct), SystemException> {
                    s2.clone_from(s1);
                    Ok((s1.clone(), s1.clone()))
                }
                #[inline(never)]
                fn test_nested_struct(
                    &self,
                    s1: &NestedStruct,
                    s2: &mut NestedStruct,
                ) -> Result<(NestedStruct, NestedStruct), SystemException> {
                    s2.clone_from(s1);
                    Ok((s1.clone(), s1.clone()))
                }
                #[inline(never)]
                fn test_struct_seq(
                    &self,
                    s1: &[VarStruct],
                    s2: &mut StructSeq,
                ) -> Result<(StructSeq, StructSeq), SystemException> {
                    s2.clone_from_slice_or_vec(s1);
                    Ok((s1.to_vec(), s1.to_vec()))
                }
            }

            /// `clone_from` for a `Vec` from a slice (reuses the
            /// elements' buffers).
            trait CloneFromSlice<T> {
                fn clone_from_slice_or_vec(&mut self, s: &[T]);
            }

            impl<T: Clone> CloneFromSlice<T> for Vec<T> {
                fn clone_from_slice_or_vec(&mut self, s: &[T]) {
                    self.truncate(s.len());
                    let n = self.len();
                    self.clone_from_slice(&s[..n]);
                    self.extend_from_slice(&s[n..]);
                }
            }

            /// The arguments of every operation.
            #[derive(Debug, Clone, PartialEq)]
            pub struct Values {
                short: i16,
                string: String,
                fixed: FixedStruct,
                strseq: StrSeq,
                var: VarStruct,
                nested: NestedStruct,
                structseq: StructSeq,
            }

            fn var_struct(seed: usize) -> VarStruct {
                VarStruct {
                    dbl: 3.25 + seed as f64,
                    dummy1: super::text(seed),
                    boole: seed % 2 == 0,
                    dummy2: super::text(seed + 7),
                    shrt: seed as i16,
                    seq: (0..9).map(|i| super::text(seed + i)).collect(),
                }
            }

            impl Values {
                /// The seed's sizes: strings of 128 characters, sequences
                /// of 9.
                pub fn new() -> Values {
                    Values {
                        short: 4242,
                        string: super::text(0),
                        fixed: FixedStruct {
                            l: -7_000_000,
                            c: b'x',
                            s: -12,
                            o: 0xa5,
                            f: 1.5,
                            b: true,
                            d: -2.75,
                        },
                        strseq: (0..9).map(super::text).collect(),
                        var: var_struct(1),
                        nested: NestedStruct { vs: var_struct(2) },
                        structseq: (0..9).map(var_struct).collect(),
                    }
                }
            }

            impl Default for Values {
                fn default() -> Self {
                    Values::new()
                }
            }

            /// A client of one Param_Test object through this form's stub.
            pub struct Client {
                r: ParamTestRef,
                ins: Values,
                inouts: Values,
            }

            fn check(ok: bool, op: &str) -> Result<(), String> {
                if ok {
                    Ok(())
                } else {
                    Err(format!("{op}: a result differs from the argument"))
                }
            }

            impl Client {
                /// A client of `obj`.
                pub fn new(obj: peregrine_orb::ObjectRef) -> Client {
                    Client {
                        r: ParamTestRef::unchecked_narrow(obj),
                        ins: Values::new(),
                        inouts: Values::new(),
                    }
                }

                /// Calls operation `op` (index into [`super::OPS`]) and
                /// verifies the return value, `inout` and `out`.
                pub fn call(&mut self, op: usize) -> Result<(), String> {
                    let (i, io) = (&self.ins, &mut self.inouts);
                    let name = super::OPS.get(op).copied().unwrap_or("?");
                    let e = |e: SystemException| format!("{name}: {e}");
                    match op {
                        0 => {
                            let (ret, out) =
                                self.r.test_short(i.short, &mut io.short).map_err(e)?;
                            check(
                                ret == i.short && io.short == i.short && out == i.short,
                                name,
                            )
                        }
                        1 => {
                            let (ret, out) = self
                                .r
                                .test_unbounded_string(&i.string, &mut io.string)
                                .map_err(e)?;
                            check(
                                ret == i.string && io.string == i.string && out == i.string,
                                name,
                            )
                        }
                        2 => {
                            let (ret, out) = self
                                .r
                                .test_fixed_struct(&i.fixed, &mut io.fixed)
                                .map_err(e)?;
                            check(
                                ret == i.fixed && io.fixed == i.fixed && out == i.fixed,
                                name,
                            )
                        }
                        3 => {
                            let (ret, out) =
                                self.r.test_strseq(&i.strseq, &mut io.strseq).map_err(e)?;
                            check(
                                ret == i.strseq && io.strseq == i.strseq && out == i.strseq,
                                name,
                            )
                        }
                        4 => {
                            let (ret, out) =
                                self.r.test_var_struct(&i.var, &mut io.var).map_err(e)?;
                            check(ret == i.var && io.var == i.var && out == i.var, name)
                        }
                        5 => {
                            let (ret, out) = self
                                .r
                                .test_nested_struct(&i.nested, &mut io.nested)
                                .map_err(e)?;
                            check(
                                ret == i.nested && io.nested == i.nested && out == i.nested,
                                name,
                            )
                        }
                        6 => {
                            let (ret, out) = self
                                .r
                                .test_struct_seq(&i.structseq, &mut io.structseq)
                                .map_err(e)?;
                            check(
                                ret == i.structseq
                                    && io.structseq == i.structseq
                                    && out == i.structseq,
                                name,
                            )
                        }
                        _ => Err(format!("no Param_Test operation {op}")),
                    }
                }
            }
        }
    };
}

param_form!(compiled, "param_compiled");
param_form!(interpreted, "param_interpreted");

/// The operation tables of the interpreted form, in [`OPS`] order.
pub fn interpreted_tables() -> [&'static peregrine_orb::interp::OpDesc; 7] {
    use interpreted::idl::param_test as m;
    [
        &m::OP_TEST_SHORT,
        &m::OP_TEST_UNBOUNDED_STRING,
        &m::OP_TEST_FIXED_STRUCT,
        &m::OP_TEST_STRSEQ,
        &m::OP_TEST_VAR_STRUCT,
        &m::OP_TEST_NESTED_STRUCT,
        &m::OP_TEST_STRUCT_SEQ,
    ]
}
