//! Abstract interfaces and abstract-valuetype slots as generated code
//! reads them: a boolean discriminator, then an IOR (`TRUE`) or a value
//! read through `peregrine_cdr::Polymorphic` (`FALSE`), whose concrete type
//! the header's repository id picks among a plain value, a truncatable
//! chunked one with a member of the abstract type (cycles, truncation),
//! one with a sequence of the abstract type (cycles through elements),
//! and a type that does not implement the trait (refused after reading).
//! Errors are fine; panics, hangs and allocations the input does not
//! justify are not. What decodes re-encodes to octets that decode again
//! to as many instances.
//!
//! Decoded cycles are strong references, so this target runs with leak
//! detection off (see run.sh).
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_cdr::{
    write_value_object, ByteOrder, Decode, Encode, Polymorphic, Reader, Result, ValueInfo,
    ValueObject, ValueRef, ValueSlot, ValueType, Writer,
};
use peregrine_giop::Ior;

/// The abstract type (an abstract valuetype, or an abstract interface's
/// values).
trait Shape: ValueObject {}

impl<T: Shape> peregrine_cdr::Upcast<T> for dyn Shape {
    fn upcast(v: &T) -> &Self {
        v
    }
}

struct Square(f64);

impl ValueType for Square {
    const REPO_ID: &'static str = "IDL:F/Square:1.0";
    const IDS: &'static [&'static str] = &["IDL:F/Square:1.0"];
    const CHUNKED: bool = false;
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        w.write_f64(self.0);
        Ok(())
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
        let x = r.read_f64()?;
        Ok(r.new_value(Square(x)))
    }
}

impl Shape for Square {}

/// Truncatable to `Square`'s sibling base `Group`, with a member of the
/// abstract type that may close a cycle.
struct Group {
    name: String,
    next: ValueSlot<dyn Shape>,
}

impl ValueType for Group {
    const REPO_ID: &'static str = "IDL:F/Group:1.0";
    const IDS: &'static [&'static str] = &["IDL:F/Group:1.0", "IDL:F/Base:1.0"];
    const CHUNKED: bool = true;
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        w.write_string(&self.name)?;
        write_value_object(w, self.next.get())
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
        let name = r.read_string()?;
        let next = SHAPES.read_value(r)?;
        let g = r.new_value(Group {
            name,
            next: next.slot(),
        });
        SHAPES.fixup(next, r, &g, |g| &g.next);
        Ok(g)
    }
}

impl Shape for Group {}

/// A sequence of the abstract type (at most 16): an element may close
/// a cycle back to the bundle or to a value around it.
struct Bundle {
    parts: Vec<ValueSlot<dyn Shape>>,
}

impl ValueType for Bundle {
    const REPO_ID: &'static str = "IDL:F/Bundle:1.0";
    const IDS: &'static [&'static str] = &["IDL:F/Bundle:1.0"];
    const CHUNKED: bool = false;
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        w.write_u32(self.parts.len() as u32);
        self.parts
            .iter()
            .try_for_each(|p| write_value_object(w, p.get()))
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
        let mut parts = SHAPES.read_values(r, 16)?;
        let b = r.new_value(Bundle {
            parts: parts.take(),
        });
        SHAPES.fixup_values(parts, r, &b, |b| &b.parts[..]);
        Ok(b)
    }
}

impl Shape for Bundle {}

/// Known to the reader, but not a `Shape`.
struct Other(i32);

impl ValueType for Other {
    const REPO_ID: &'static str = "IDL:F/Other:1.0";
    const IDS: &'static [&'static str] = &["IDL:F/Other:1.0"];
    const CHUNKED: bool = false;
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        w.write_i32(self.0);
        Ok(())
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
        let x = r.read_i32()?;
        Ok(r.new_value(Other(x)))
    }
}

const SHAPES: Polymorphic<dyn Shape> = Polymorphic {
    read: |id, r, info| match id {
        Square::REPO_ID => Some(Square::read_state(r, info).map(ValueRef::into_any)),
        Group::REPO_ID => Some(Group::read_state(r, info).map(ValueRef::into_any)),
        Bundle::REPO_ID => Some(Bundle::read_state(r, info).map(ValueRef::into_any)),
        Other::REPO_ID => Some(Other::read_state(r, info).map(ValueRef::into_any)),
        _ => None,
    },
    cast: |v| {
        let v = match v.downcast::<Square>() {
            Ok(s) => return Ok(s.upcast()),
            Err(v) => v,
        };
        let v = match v.downcast::<Group>() {
            Ok(g) => return Ok(g.upcast()),
            Err(v) => v,
        };
        v.downcast::<Bundle>().map(ValueRef::upcast)
    },
};

/// One abstract interface instance.
enum Instance {
    Object(Box<Ior>),
    Value(Option<ValueRef<dyn Shape>>),
}

fn decode_all(bytes: &[u8], order: ByteOrder, depth: u16) -> Option<Vec<Instance>> {
    let mut r = Reader::new(bytes, order);
    r.set_max_depth(depth);
    let mut out = Vec::new();
    while !r.is_empty() && out.len() < 64 {
        let one = match r.read_bool() {
            Ok(true) => Ior::decode(&mut r).map(|i| Instance::Object(Box::new(i))),
            Ok(false) => SHAPES
                .read_value(&mut r)
                .and_then(|v| v.ready())
                .map(Instance::Value),
            Err(e) => Err(e),
        };
        out.push(one.ok()?);
    }
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, input)) = data.split_first() else {
        return;
    };
    let order = ByteOrder::from_flag(ctl & 1 != 0);
    let depth = u16::from(ctl >> 1).max(1);
    let Some(all) = decode_all(input, order, depth) else {
        return;
    };
    let mut w = Writer::new(order);
    for i in &all {
        match i {
            Instance::Object(ior) => {
                w.write_bool(true);
                ior.encode(&mut w).expect("a decoded IOR encodes");
            }
            Instance::Value(v) => {
                w.write_bool(false);
                write_value_object(&mut w, v.as_ref()).expect("a decoded value encodes");
            }
        }
    }
    let again = decode_all(w.as_slice(), order, depth).expect("a re-encoded instance decodes");
    assert_eq!(again.len(), all.len());
});
