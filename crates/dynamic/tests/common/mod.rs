//! Param_Test's types written the way the IDL compiler generates them
//! (compiled `Encode`/`Decode`), their TypeCodes, and conversions to the
//! interpreter's value tree: the two sides of the byte-identity tests and
//! of the benchmark.
#![allow(dead_code, missing_docs)]

#[path = "../../../cdr/tests/common/binstruct.rs"]
mod binstruct;

pub use binstruct::BinStruct;
use peregrine_cdr::{Decode, Encode, Reader, Result, Writer};
use peregrine_dynamic::{DynValue, Packed, TypeCode};

/// `struct Fixed_Struct { long l; char c; short s; octet o; float f; boolean b; double d; }`
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FixedStruct {
    pub l: i32,
    pub c: u8,
    pub s: i16,
    pub o: u8,
    pub f: f32,
    pub b: bool,
    pub d: f64,
}

impl Encode for FixedStruct {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        self.l.encode(w)?;
        w.write_char(self.c);
        self.s.encode(w)?;
        self.o.encode(w)?;
        self.f.encode(w)?;
        self.b.encode(w)?;
        self.d.encode(w)?;
        Ok(())
    }
}

impl<'de> Decode<'de> for FixedStruct {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        Ok(Self {
            l: Decode::decode(r)?,
            c: r.read_char()?,
            s: Decode::decode(r)?,
            o: Decode::decode(r)?,
            f: Decode::decode(r)?,
            b: Decode::decode(r)?,
            d: Decode::decode(r)?,
        })
    }
}

/// `struct Var_Struct { double dbl; string dummy1; boolean boole; string dummy2; short shrt; StrSeq seq; }`
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VarStruct {
    pub dbl: f64,
    pub dummy1: String,
    pub boole: bool,
    pub dummy2: String,
    pub shrt: i16,
    pub seq: Vec<String>,
}

impl Encode for VarStruct {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        self.dbl.encode(w)?;
        self.dummy1.encode(w)?;
        self.boole.encode(w)?;
        self.dummy2.encode(w)?;
        self.shrt.encode(w)?;
        self.seq.encode(w)?;
        Ok(())
    }
}

impl<'de> Decode<'de> for VarStruct {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        Ok(Self {
            dbl: Decode::decode(r)?,
            dummy1: Decode::decode(r)?,
            boole: Decode::decode(r)?,
            dummy2: Decode::decode(r)?,
            shrt: Decode::decode(r)?,
            seq: Decode::decode(r)?,
        })
    }
}

/// `struct Nested_Struct { Var_Struct vs; }`
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NestedStruct {
    pub vs: VarStruct,
}

impl Encode for NestedStruct {
    fn encode(&self, w: &mut Writer) -> Result<()> {
        self.vs.encode(w)
    }
}

impl<'de> Decode<'de> for NestedStruct {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        Ok(Self {
            vs: Decode::decode(r)?,
        })
    }
}

pub fn binstruct_tc() -> TypeCode {
    TypeCode::struct_tc(
        "IDL:ttcp_sequence/BinStruct:1.0",
        "BinStruct",
        [
            ("s", TypeCode::short()),
            ("c", TypeCode::char()),
            ("l", TypeCode::long()),
            ("o", TypeCode::octet()),
            ("d", TypeCode::double()),
            ("pad", TypeCode::array_tc(8, TypeCode::octet())),
        ],
    )
}

pub fn fixed_struct_tc() -> TypeCode {
    TypeCode::struct_tc(
        "IDL:Fixed_Struct:1.0",
        "Fixed_Struct",
        [
            ("l", TypeCode::long()),
            ("c", TypeCode::char()),
            ("s", TypeCode::short()),
            ("o", TypeCode::octet()),
            ("f", TypeCode::float()),
            ("b", TypeCode::boolean()),
            ("d", TypeCode::double()),
        ],
    )
}

pub fn strseq_tc() -> TypeCode {
    TypeCode::alias_tc(
        "IDL:StrSeq:1.0",
        "StrSeq",
        TypeCode::sequence_tc(0, TypeCode::string_tc(0)),
    )
}

pub fn var_struct_tc() -> TypeCode {
    TypeCode::struct_tc(
        "IDL:Var_Struct:1.0",
        "Var_Struct",
        [
            ("dbl", TypeCode::double()),
            ("dummy1", TypeCode::string_tc(0)),
            ("boole", TypeCode::boolean()),
            ("dummy2", TypeCode::string_tc(0)),
            ("shrt", TypeCode::short()),
            ("seq", strseq_tc()),
        ],
    )
}

pub fn nested_struct_tc() -> TypeCode {
    TypeCode::struct_tc(
        "IDL:Nested_Struct:1.0",
        "Nested_Struct",
        [("vs", var_struct_tc())],
    )
}

pub fn struct_seq_tc() -> TypeCode {
    TypeCode::alias_tc(
        "IDL:StructSeq:1.0",
        "StructSeq",
        TypeCode::sequence_tc(0, var_struct_tc()),
    )
}

pub fn binstruct_seq_tc() -> TypeCode {
    TypeCode::sequence_tc(0, binstruct_tc())
}

pub fn fixed_dyn(v: &FixedStruct) -> DynValue {
    DynValue::Struct(vec![
        DynValue::Long(v.l),
        DynValue::Char(v.c),
        DynValue::Short(v.s),
        DynValue::Octet(v.o),
        DynValue::Float(v.f),
        DynValue::Boolean(v.b),
        DynValue::Double(v.d),
    ])
}

pub fn strings_dyn(v: &[String]) -> DynValue {
    DynValue::Sequence(v.iter().cloned().map(DynValue::String).collect())
}

pub fn var_dyn(v: &VarStruct) -> DynValue {
    DynValue::Struct(vec![
        DynValue::Double(v.dbl),
        DynValue::String(v.dummy1.clone()),
        DynValue::Boolean(v.boole),
        DynValue::String(v.dummy2.clone()),
        DynValue::Short(v.shrt),
        strings_dyn(&v.seq),
    ])
}

pub fn nested_dyn(v: &NestedStruct) -> DynValue {
    DynValue::Struct(vec![var_dyn(&v.vs)])
}

pub fn struct_seq_dyn(v: &[VarStruct]) -> DynValue {
    DynValue::Sequence(v.iter().map(var_dyn).collect())
}

/// The packed native-order image of BinStructs, as the decoder builds it.
pub fn binstructs_dyn(v: &[BinStruct]) -> DynValue {
    let mut bytes = Vec::with_capacity(v.len() * 32);
    for b in v {
        let mut e = [0u8; 32];
        e[0..2].copy_from_slice(&b.s.to_ne_bytes());
        e[2] = b.c;
        e[4..8].copy_from_slice(&b.l.to_ne_bytes());
        e[8] = b.o;
        e[16..24].copy_from_slice(&b.d.to_ne_bytes());
        e[24..32].copy_from_slice(&b.pad);
        bytes.extend_from_slice(&e);
    }
    DynValue::Packed(Packed {
        count: v.len() as u32,
        bytes,
    })
}

/// BinStructs element by element (the generic form encode also accepts).
pub fn binstructs_generic(v: &[BinStruct]) -> DynValue {
    DynValue::Sequence(
        v.iter()
            .map(|b| {
                DynValue::Struct(vec![
                    DynValue::Short(b.s),
                    DynValue::Char(b.c),
                    DynValue::Long(b.l),
                    DynValue::Octet(b.o),
                    DynValue::Double(b.d),
                    DynValue::Octets(b.pad.to_vec()),
                ])
            })
            .collect(),
    )
}
