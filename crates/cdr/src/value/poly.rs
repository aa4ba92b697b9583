//! Values held through a trait object: members, parameters and results
//! whose IDL type is an abstract valuetype or an abstract interface, where
//! any concrete value derived from (or supporting) the formal type may
//! stand.
//!
//! Writing needs only what [`ValueObject`] offers (the header's ids and
//! the state), which every [`ValueType`] has. Reading cannot name the
//! Rust type in advance: the header's repository id picks it, from the
//! factory registry first and then from the concrete types the generated
//! code knows to derive from the formal type; the value read is then
//! turned into the trait object by a cast the generated code supplies.

use super::ValueRef;

use super::graph::{lookup_value_factory, ReadValue, ReadValues, ValueType};
use super::slot::ValueSlot;
use super::{AnyValue, ValueInfo, ValueStart};
use crate::{CdrError, Reader, Result, Writer};

/// A value seen through a trait object: what writing it needs. Every
/// [`ValueType`] implements it; generated abstract valuetype traits have
/// it as a supertrait, so that `ValueRef<dyn Shape>` can be marshaled.
pub trait ValueObject: core::any::Any + Send + Sync {
    /// The repository ids its header carries ([`ValueType::IDS`]).
    fn value_ids(&self) -> &'static [&'static str];
    /// Whether its state is chunked ([`ValueType::CHUNKED`]).
    fn value_chunked(&self) -> bool;
    /// Writes its state ([`ValueType::write_state`]).
    fn write_value_state(&self, w: &mut Writer) -> Result<()>;
    /// The same value, type-erased (what an indirection to it hands out;
    /// [`ValueRef::into_any_value`] takes a reference there).
    fn as_any_value(&self) -> &(dyn core::any::Any + Send + Sync);
}

impl<T: ValueType> super::vref::Upcast<T> for dyn ValueObject {
    fn upcast(v: &T) -> &Self {
        v
    }
}

impl<T: ?Sized + ValueObject> ValueRef<T> {
    /// The same value, type-erased (what an indirection to it hands out).
    pub fn into_any_value(self) -> AnyValue {
        ValueRef::map(self, |v| v.as_any_value())
    }
}

impl<T: ValueType> ValueObject for T {
    #[inline]
    fn value_ids(&self) -> &'static [&'static str] {
        T::IDS
    }
    #[inline]
    fn value_chunked(&self) -> bool {
        T::CHUNKED
    }
    #[inline]
    fn write_value_state(&self, w: &mut Writer) -> Result<()> {
        self.write_state(w)
    }
    fn as_any_value(&self) -> &(dyn core::any::Any + Send + Sync) {
        self
    }
}

/// Writes `v`, held through a trait object (null, an indirection when
/// already written, or header and state).
pub fn write_value_object<T: ?Sized + ValueObject>(
    w: &mut Writer,
    v: Option<&ValueRef<T>>,
) -> Result<()> {
    match v {
        None => {
            w.write_null_value();
            Ok(())
        }
        // The data address, as for `write_value`: a value shared between
        // a typed slot and a trait-object slot is written once.
        Some(v) => w.write_value(
            ValueRef::as_ptr(v).cast::<()>(),
            v.value_ids(),
            v.value_chunked(),
            |w| v.write_value_state(w),
        ),
    }
}

/// How a slot of abstract type `T` reads values: the generated code's
/// knowledge of the concrete types that may fill it.
pub struct Polymorphic<T: ?Sized> {
    /// Reads the state of a value of a concrete type derived from `T`
    /// whose repository id is the argument (`None` for an id it does not
    /// know).
    pub read: fn(&str, &mut Reader<'_>, &ValueInfo<'_>) -> Option<Result<AnyValue>>,
    /// Turns a value read (or met again) into a `T`, giving it back when
    /// its type is not one.
    pub cast: fn(AnyValue) -> core::result::Result<ValueRef<T>, AnyValue>,
}

impl<T: ?Sized> Clone for Polymorphic<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for Polymorphic<T> {}

impl<T: ?Sized + Send + Sync + 'static> Polymorphic<T> {
    /// Reads a value for a slot of type `T`: null, an indirection to a
    /// value read before, or a new value of the most derived type the
    /// header names that a registered factory or `read` knows (truncating
    /// a chunked value to a base listed in its header when needed).
    pub fn read_value(&self, r: &mut Reader<'_>) -> Result<ReadValue<T>> {
        let info = match r.read_value_start()? {
            ValueStart::Null => return Ok(ReadValue::Ready(None)),
            ValueStart::Shared(v) => {
                return (self.cast)(v)
                    .map(|v| ReadValue::Ready(Some(v)))
                    .map_err(|_| CdrError::NoValueFactory)
            }
            ValueStart::Cycle(at) => return Ok(ReadValue::Cycle(at)),
            ValueStart::New(info) => info,
        };
        let v = self.read_state(r, &info)?;
        r.finish_shared(&info, &v)?;
        (self.cast)(v)
            .map(|v| ReadValue::Ready(Some(v)))
            .map_err(|_| CdrError::NoValueFactory)
    }

    /// Reads a `sequence` of values for slots of type `T`, with at most
    /// `bound` elements, for a valuetype's state member: elements that
    /// point back to a value whose state is still being read (a cycle
    /// through the sequence) are completed by
    /// [`Polymorphic::fixup_values`] once the owner exists.
    pub fn read_values(&self, r: &mut Reader<'_>, bound: u32) -> Result<ReadValues<T>> {
        // Generated value types, the usual ones, are made in the arena.
        ReadValues::read_with(r, bound, true, |r| self.read_value(r))
    }

    /// Reads an array of `n` values for slots of type `T` (no length on
    /// the wire), for a valuetype's state member: as
    /// [`Polymorphic::read_values`].
    pub fn read_value_array(&self, r: &mut Reader<'_>, n: usize) -> Result<ReadValues<T>> {
        ReadValues::read_n(r, n, true, |r| self.read_value(r))
    }

    /// Has the reader fill the elements of `field(owner)` that close a
    /// cycle ([`Polymorphic::read_values`]) once the values they point to
    /// are complete (cast to `T`).
    pub fn fixup_values<S: Send + Sync + 'static>(
        &self,
        v: ReadValues<T>,
        r: &mut Reader<'_>,
        owner: &ValueRef<S>,
        field: fn(&S) -> &[ValueSlot<T>],
    ) {
        v.defer(r, owner, field, self.cast);
    }

    fn read_state(&self, r: &mut Reader<'_>, info: &ValueInfo<'_>) -> Result<AnyValue> {
        // An abstract type has no instances: a header without ids names
        // no type to read.
        let ids = info.ids.as_slice();
        if let Some(f) = ids.first().and_then(|id| lookup_value_factory(id)) {
            return r.without_value_scope(|r| f.read_state(r, info));
        }
        for (i, id) in ids.iter().enumerate() {
            // Only a chunked state can be cut down to a base's.
            if i > 0 && !info.chunked {
                break;
            }
            if let Some(v) = (self.read)(id, r, info) {
                return v;
            }
        }
        Err(CdrError::NoValueFactory)
    }

    /// For a cycle, has the reader fill `field(owner)` once the value it
    /// points to is complete (cast to `T`).
    pub fn fixup<S: Send + Sync + 'static>(
        &self,
        v: ReadValue<T>,
        r: &mut Reader<'_>,
        owner: &ValueRef<S>,
        field: fn(&S) -> &ValueSlot<T>,
    ) {
        if let ReadValue::Cycle(at) = v {
            let owner = owner.clone();
            let cast = self.cast;
            r.defer_value(
                at,
                Box::new(move |v| {
                    let v = cast(v.clone()).map_err(|_| CdrError::NoValueFactory)?;
                    let _ = field(&owner).set(v);
                    Ok(())
                }),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ByteOrder;

    trait Shape: ValueObject {
        fn area(&self) -> i32;
    }

    impl<T: Shape> crate::Upcast<T> for dyn Shape {
        fn upcast(v: &T) -> &Self {
            v
        }
    }

    struct Square(i32);
    struct Circle(i32);

    impl ValueType for Square {
        const REPO_ID: &'static str = "IDL:t/Square:1.0";
        const IDS: &'static [&'static str] = &["IDL:t/Square:1.0"];
        const CHUNKED: bool = false;
        fn write_state(&self, w: &mut Writer) -> Result<()> {
            w.write_i32(self.0);
            Ok(())
        }
        fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
            let v = r.read_i32()?;
            Ok(r.new_value(Self(v)))
        }
    }

    impl ValueType for Circle {
        const REPO_ID: &'static str = "IDL:t/Circle:1.0";
        const IDS: &'static [&'static str] = &["IDL:t/Circle:1.0"];
        const CHUNKED: bool = false;
        fn write_state(&self, w: &mut Writer) -> Result<()> {
            w.write_i32(self.0);
            Ok(())
        }
        fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
            let v = r.read_i32()?;
            Ok(r.new_value(Self(v)))
        }
    }

    impl Shape for Square {
        fn area(&self) -> i32 {
            self.0 * self.0
        }
    }

    impl Shape for Circle {
        fn area(&self) -> i32 {
            3 * self.0 * self.0
        }
    }

    /// What generated code supplies for `Shape`: both concrete types.
    const SHAPES: Polymorphic<dyn Shape> = Polymorphic {
        read: |id, r, info| match id {
            Square::REPO_ID => Some(Square::read_state(r, info).map(ValueRef::into_any)),
            Circle::REPO_ID => Some(Circle::read_state(r, info).map(ValueRef::into_any)),
            _ => None,
        },
        cast: |v| {
            let v = match v.downcast::<Square>() {
                Ok(s) => return Ok(s.upcast()),
                Err(v) => v,
            };
            v.downcast::<Circle>()
                .map(|c| ValueRef::map(c, |c| c as &dyn Shape))
        },
    };

    #[test]
    fn concrete_types_shared_and_null_round_trip() {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let c: ValueRef<dyn Shape> = ValueRef::new(Circle(2)).upcast();
            let s: ValueRef<dyn Shape> = ValueRef::new(Square(3)).upcast();
            let mut w = Writer::new(order);
            for v in [Some(&c), Some(&s), None, Some(&c)] {
                write_value_object(&mut w, v).unwrap();
            }
            let bytes = w.as_slice().to_vec();
            let mut r = Reader::new(&bytes, order);
            let got: Vec<Option<ValueRef<dyn Shape>>> = (0..4)
                .map(|_| SHAPES.read_value(&mut r).unwrap().ready().unwrap())
                .collect();
            let areas: Vec<Option<i32>> =
                got.iter().map(|v| v.as_ref().map(|v| v.area())).collect();
            assert_eq!(areas, [Some(12), Some(9), None, Some(12)]);
            // The indirection hands out the value read first.
            assert!(ValueRef::ptr_eq(
                got[0].as_ref().unwrap(),
                got[3].as_ref().unwrap()
            ));
            assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn unknown_or_missing_type_is_no_factory() {
        struct Other;
        impl ValueType for Other {
            const REPO_ID: &'static str = "IDL:t/Other:1.0";
            const IDS: &'static [&'static str] = &["IDL:t/Other:1.0"];
            const CHUNKED: bool = false;
            fn write_state(&self, _: &mut Writer) -> Result<()> {
                Ok(())
            }
            fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
                Ok(r.new_value(Other))
            }
        }
        let mut w = Writer::new(ByteOrder::Big);
        crate::write_value(&mut w, Some(&ValueRef::new(Other))).unwrap();
        let bytes = w.as_slice().to_vec();
        let e = SHAPES.read_value(&mut Reader::new(&bytes, ByteOrder::Big));
        assert_eq!(e.err(), Some(CdrError::NoValueFactory));
        // A header without repository ids: an abstract slot cannot know
        // the type.
        let bytes = [0x7f, 0xff, 0xff, 0x00, 0, 0, 0, 1];
        let e = SHAPES.read_value(&mut Reader::new(&bytes, ByteOrder::Big));
        assert_eq!(e.err(), Some(CdrError::NoValueFactory));
    }

    /// A value whose state is a `sequence<ValueBase>` (`Bag`) or a
    /// `sequence<Shape>` (`Pen`): either may list itself, closing a
    /// cycle through the sequence.
    struct Bag(Vec<ValueSlot<dyn ValueObject>>);
    struct Pen(Vec<ValueSlot<dyn Shape>>);

    impl ValueType for Bag {
        const REPO_ID: &'static str = "IDL:t/Bag:1.0";
        const IDS: &'static [&'static str] = &["IDL:t/Bag:1.0"];
        const CHUNKED: bool = false;
        fn write_state(&self, w: &mut Writer) -> Result<()> {
            w.write_u32(self.0.len() as u32);
            self.0
                .iter()
                .try_for_each(|v| write_value_object(w, v.get()))
        }
        fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
            let mut items = ANY.read_values(r, 3)?;
            let v = r.new_value(Self(items.take()));
            ANY.fixup_values(items, r, &v, |s| &s.0[..]);
            Ok(v)
        }
    }

    impl ValueType for Pen {
        const REPO_ID: &'static str = "IDL:t/Pen:1.0";
        const IDS: &'static [&'static str] = &["IDL:t/Pen:1.0"];
        const CHUNKED: bool = false;
        fn write_state(&self, w: &mut Writer) -> Result<()> {
            w.write_u32(self.0.len() as u32);
            self.0
                .iter()
                .try_for_each(|v| write_value_object(w, v.get()))
        }
        fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
            let mut items = SHAPES.read_values(r, u32::MAX)?;
            let v = r.new_value(Self(items.take()));
            SHAPES.fixup_values(items, r, &v, |s| &s.0[..]);
            Ok(v)
        }
    }

    /// A `ValueBase` reader knowing `Bag`, `Pen` and `Square`.
    const ANY: Polymorphic<dyn ValueObject> = Polymorphic {
        read: |id, r, info| match id {
            Bag::REPO_ID => Some(Bag::read_state(r, info).map(ValueRef::into_any)),
            Pen::REPO_ID => Some(Pen::read_state(r, info).map(ValueRef::into_any)),
            Square::REPO_ID => Some(Square::read_state(r, info).map(ValueRef::into_any)),
            _ => None,
        },
        cast: |v| {
            let v = match v.downcast::<Bag>() {
                Ok(b) => return Ok(b.upcast()),
                Err(v) => v,
            };
            let v = match v.downcast::<Pen>() {
                Ok(p) => return Ok(p.upcast()),
                Err(v) => v,
            };
            v.downcast::<Square>()
                .map(|s| ValueRef::map(s, |s| s as &dyn ValueObject))
        },
    };

    fn addr<T: ?Sized>(v: &ValueRef<T>) -> *const () {
        ValueRef::as_ptr(v).cast()
    }

    /// `Bag` holding `[Square(3), itself, Square(3)]`.
    fn self_bag() -> ValueRef<Bag> {
        let sq: ValueRef<dyn ValueObject> = ValueRef::new(Square(3)).upcast();
        let bag = ValueRef::new(Bag(vec![
            ValueSlot::new(sq.clone()),
            ValueSlot::null(),
            ValueSlot::new(sq),
        ]));
        bag.0[1].set(bag.clone().upcast()).ok().unwrap();
        bag
    }

    #[test]
    fn cycle_through_a_value_base_sequence_hand_checked() {
        let bag = self_bag();
        let mut w = Writer::new(ByteOrder::Big);
        crate::write_value(&mut w, Some(&bag)).unwrap();
        let mut e: Vec<u8> = Vec::new();
        let long = |e: &mut Vec<u8>, v: u32| e.extend_from_slice(&v.to_be_bytes());
        let string = |e: &mut Vec<u8>, s: &str| {
            e.extend_from_slice(&(s.len() as u32 + 1).to_be_bytes());
            e.extend_from_slice(s.as_bytes());
            e.push(0);
            while e.len() % 4 != 0 {
                e.push(0);
            }
        };
        long(&mut e, 0x7fff_ff02);
        string(&mut e, Bag::REPO_ID);
        long(&mut e, 3);
        let sq_at = e.len();
        long(&mut e, 0x7fff_ff02);
        string(&mut e, Square::REPO_ID);
        long(&mut e, 3);
        // Back to the bag (at 0) and on to the square, as indirections.
        long(&mut e, 0xffff_ffff);
        let at = e.len() as i32;
        long(&mut e, (-at) as u32);
        long(&mut e, 0xffff_ffff);
        let at = e.len() as i32;
        long(&mut e, (sq_at as i32 - at) as u32);
        assert_eq!(w.as_slice(), e);

        let back = crate::read_value::<Bag>(&mut Reader::new(&e, ByteOrder::Big))
            .unwrap()
            .ready()
            .unwrap()
            .unwrap();
        assert_eq!(back.0.len(), 3);
        // The element closing the cycle is the bag itself, the square
        // met twice one value.
        assert_eq!(addr(back.0[1].get().unwrap()), addr(&back));
        let (a, b) = (back.0[0].get().unwrap(), back.0[2].get().unwrap());
        assert!(ValueRef::ptr_eq(a, b));
        assert!(a.clone().into_any_value().downcast::<Square>().is_ok());
    }

    #[test]
    fn cycle_through_a_value_base_sequence_round_trips_both_orders() {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            // Sent from inside: a `ValueBase` slot holding the bag, the
            // bag reaching back to itself.
            let bag = self_bag();
            let any: ValueRef<dyn ValueObject> = bag.clone().upcast();
            let mut w = Writer::new(order);
            write_value_object(&mut w, Some(&any)).unwrap();
            let bytes = w.as_slice().to_vec();
            let mut r = Reader::new(&bytes, order);
            let back = ANY.read_value(&mut r).unwrap().ready().unwrap().unwrap();
            assert_eq!(r.remaining(), 0);
            let bag = back.into_any_value().downcast::<Bag>().ok().unwrap();
            assert_eq!(addr(bag.0[1].get().unwrap()), addr(&bag));
        }
    }

    #[test]
    fn cycle_through_an_abstract_sequence_and_a_foreign_back_edge() {
        // A `Pen` cannot be a `Shape`: a `sequence<Shape>` pointing back
        // to the pen being read is refused when the cycle completes.
        let pen = ValueRef::new(Pen(vec![ValueSlot::null()]));
        let mut w = Writer::new(ByteOrder::Big);
        w.write_value(ValueRef::as_ptr(&pen).cast(), Pen::IDS, false, |w| {
            w.write_u32(1);
            let again: ValueRef<dyn ValueObject> = pen.clone().upcast();
            write_value_object(w, Some(&again))
        })
        .unwrap();
        let bytes = w.as_slice().to_vec();
        let e = crate::read_value::<Pen>(&mut Reader::new(&bytes, ByteOrder::Big));
        assert_eq!(e.err(), Some(CdrError::NoValueFactory));
    }

    #[test]
    fn value_sequence_length_is_bounded_and_checked_against_the_input() {
        // `Bag` allows 3 elements.
        let mut bytes = vec![0x7f, 0xff, 0xff, 0x02, 0, 0, 0, 14];
        bytes.extend_from_slice(b"IDL:t/Bag:1.0\0\0\0");
        bytes.extend_from_slice(&4u32.to_be_bytes());
        let e = crate::read_value::<Bag>(&mut Reader::new(&bytes, ByteOrder::Big));
        assert!(matches!(
            e.err(),
            Some(CdrError::BoundExceeded { bound: 3, len: 4 })
        ));
        // A huge count with no bytes behind it allocates nothing.
        let e = SHAPES.read_values(
            &mut Reader::new(&0x4000_0000u32.to_be_bytes(), ByteOrder::Big),
            u32::MAX,
        );
        assert!(e.is_err());
    }

    /// A concrete value with an array of two of its own type.
    struct Pair([ValueSlot<Pair>; 2]);

    impl ValueType for Pair {
        const REPO_ID: &'static str = "IDL:t/Pair:1.0";
        const IDS: &'static [&'static str] = &["IDL:t/Pair:1.0"];
        const CHUNKED: bool = false;
        fn write_state(&self, w: &mut Writer) -> Result<()> {
            self.0
                .iter()
                .try_for_each(|v| crate::write_value(w, v.get()))
        }
        fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
            let mut both = crate::read_value_array::<Pair>(r, 2)?;
            let v = r.new_value(Self(both.take_array()?));
            both.fixup(r, &v, |s| &s.0[..]);
            Ok(v)
        }
    }

    #[test]
    fn cycle_through_arrays_of_values() {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            // A pair holding itself twice: the second element is an
            // indirection to the first, both back to the pair.
            let p = ValueRef::new(Pair([ValueSlot::null(), ValueSlot::null()]));
            p.0[0].set(p.clone()).ok().unwrap();
            p.0[1].set(p.clone()).ok().unwrap();
            let mut w = Writer::new(order);
            crate::write_value(&mut w, Some(&p)).unwrap();
            let bytes = w.as_slice().to_vec();
            // Tag, id (4 + 15 octets, padded), two indirections.
            assert_eq!(bytes.len(), 4 + 20 + 8 + 8);
            let mut r = Reader::new(&bytes, order);
            let back = crate::read_value::<Pair>(&mut r)
                .unwrap()
                .ready()
                .unwrap()
                .unwrap();
            assert!(r.is_empty());
            assert!(ValueRef::ptr_eq(back.0[0].get().unwrap(), &back));
            assert!(ValueRef::ptr_eq(back.0[1].get().unwrap(), &back));
            // The same through a `ValueBase` array.
            let sq: ValueRef<dyn ValueObject> = ValueRef::new(Square(1)).upcast();
            let mut w = Writer::new(order);
            write_value_object(&mut w, Some(&sq)).unwrap();
            write_value_object(&mut w, Some(&sq)).unwrap();
            let bytes = w.as_slice().to_vec();
            let mut r = Reader::new(&bytes, order);
            let mut two = ANY.read_value_array(&mut r, 2).unwrap();
            let two: [ValueSlot<dyn ValueObject>; 2] = two.take_array().unwrap();
            assert!(ValueRef::ptr_eq(
                two[0].get().unwrap(),
                two[1].get().unwrap()
            ));
            // A length other than the one read is an error, not a panic.
            let mut r = Reader::new(&bytes, order);
            let mut one = ANY.read_value_array(&mut r, 1).unwrap();
            assert!(one.take_array::<2>().is_err());
        }
    }
}
