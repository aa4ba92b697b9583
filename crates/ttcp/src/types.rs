//! The data of the TTCP interface (`idl/ttcp.idl`): the six sequence
//! types of the throughput test, the 32-byte `BinStruct`, and the
//! argument data the suites send.

use peregrine_cdr::Writer;

/// The element types of the throughput and payload suites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataType {
    /// `short` (2 bytes).
    Short,
    /// `long` (4 bytes).
    Long,
    /// `double` (8 bytes).
    Double,
    /// `char` (1 byte).
    Char,
    /// `octet` (1 byte).
    Octet,
    /// `BinStruct` (32 bytes).
    Struct,
}

impl DataType {
    /// Every type, in the seeds' order.
    pub const ALL: [DataType; 6] = [
        DataType::Short,
        DataType::Long,
        DataType::Double,
        DataType::Char,
        DataType::Octet,
        DataType::Struct,
    ];

    /// The types of the payload suite (`send{Octet,Struct,Double}Seq_2way`).
    pub const PAYLOAD: [DataType; 3] = [DataType::Octet, DataType::Struct, DataType::Double];

    /// The name used in tables and JSON (`"type"`).
    pub fn name(self) -> &'static str {
        match self {
            DataType::Short => "short",
            DataType::Long => "long",
            DataType::Double => "double",
            DataType::Char => "char",
            DataType::Octet => "octet",
            DataType::Struct => "struct",
        }
    }

    /// Size of one element on the wire (and in memory), in bytes.
    pub fn size(self) -> usize {
        match self {
            DataType::Short => 2,
            DataType::Long => 4,
            DataType::Double => 8,
            DataType::Char | DataType::Octet => 1,
            DataType::Struct => BinStruct::SIZE,
        }
    }

    /// The oneway operation of the throughput suite.
    pub fn oneway_op(self) -> &'static str {
        match self {
            DataType::Short => "sendShortSeq",
            DataType::Long => "sendLongSeq",
            DataType::Double => "sendDoubleSeq",
            DataType::Char => "sendCharSeq",
            DataType::Octet => "sendOctetSeq",
            DataType::Struct => "sendStructSeq",
        }
    }

    /// The twoway operation of the payload suite, if the IDL has one.
    pub fn twoway_op(self) -> Option<&'static str> {
        match self {
            DataType::Double => Some("sendDoubleSeq_2way"),
            DataType::Octet => Some("sendOctetSeq_2way"),
            DataType::Struct => Some("sendStructSeq_2way"),
            _ => None,
        }
    }

    /// The type called `name` (as [`DataType::name`] spells it).
    pub fn from_name(name: &str) -> Option<DataType> {
        DataType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The element type a throughput operation name carries, if any.
    pub fn from_op(op: &[u8]) -> Option<DataType> {
        DataType::ALL.into_iter().find(|t| {
            t.oneway_op().as_bytes() == op || t.twoway_op().is_some_and(|n| n.as_bytes() == op)
        })
    }
}

/// `struct BinStruct { short s; char c; long l; octet o; double d; octet
/// pad[8]; }`: 32 bytes in C layout and in CDR (s@0 c@2 l@4 o@8 d@16
/// pad@24).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C)]
pub struct BinStruct {
    /// `short s`.
    pub s: i16,
    /// `char c`.
    pub c: u8,
    /// `long l`.
    pub l: i32,
    /// `octet o`.
    pub o: u8,
    /// `double d`.
    pub d: f64,
    /// `octet pad[8]`.
    pub pad: [u8; 8],
}

impl BinStruct {
    /// Size in CDR (and in memory).
    pub const SIZE: usize = 32;

    /// Writes one struct member by member (CDR alignment included).
    pub fn encode(&self, w: &mut Writer) {
        w.write_i16(self.s);
        w.write_char(self.c);
        w.write_i32(self.l);
        w.write_u8(self.o);
        w.write_f64(self.d);
        w.write_bytes(&self.pad);
    }
}

/// A sequence argument: `count` elements of one type, filled with a
/// deterministic pattern.
#[derive(Debug, Clone, PartialEq)]
pub enum SeqData {
    /// `ShortSeq`.
    Short(Vec<i16>),
    /// `LongSeq`.
    Long(Vec<i32>),
    /// `DoubleSeq`.
    Double(Vec<f64>),
    /// `CharSeq` (ISO 8859-1 bytes).
    Char(Vec<u8>),
    /// `OctetSeq`.
    Octet(Vec<u8>),
    /// `StructSeq`.
    Struct(Vec<BinStruct>),
}

impl SeqData {
    /// `count` elements of `ty`.
    pub fn new(ty: DataType, count: usize) -> SeqData {
        match ty {
            DataType::Short => SeqData::Short((0..count).map(|i| i as i16).collect()),
            DataType::Long => SeqData::Long((0..count).map(|i| i as i32).collect()),
            DataType::Double => SeqData::Double((0..count).map(|i| i as f64 * 0.5).collect()),
            DataType::Char => SeqData::Char((0..count).map(|i| b'a' + (i % 26) as u8).collect()),
            DataType::Octet => SeqData::Octet((0..count).map(|i| i as u8).collect()),
            DataType::Struct => SeqData::Struct(
                (0..count)
                    .map(|i| BinStruct {
                        s: i as i16,
                        c: b'a' + (i % 26) as u8,
                        l: i as i32,
                        o: i as u8,
                        d: i as f64,
                        pad: [0; 8],
                    })
                    .collect(),
            ),
        }
    }

    /// The data for a payload of `bytes` bytes (rounded down to whole
    /// elements, at least one).
    pub fn with_bytes(ty: DataType, bytes: usize) -> SeqData {
        SeqData::new(ty, (bytes / ty.size()).max(1))
    }

    /// The element type.
    pub fn data_type(&self) -> DataType {
        match self {
            SeqData::Short(_) => DataType::Short,
            SeqData::Long(_) => DataType::Long,
            SeqData::Double(_) => DataType::Double,
            SeqData::Char(_) => DataType::Char,
            SeqData::Octet(_) => DataType::Octet,
            SeqData::Struct(_) => DataType::Struct,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            SeqData::Short(v) => v.len(),
            SeqData::Long(v) => v.len(),
            SeqData::Double(v) => v.len(),
            SeqData::Char(v) | SeqData::Octet(v) => v.len(),
            SeqData::Struct(v) => v.len(),
        }
    }

    /// Payload bytes: elements times element size (what `sync()` counts).
    pub fn payload_bytes(&self) -> u64 {
        (self.len() * self.data_type().size()) as u64
    }

    /// Writes the sequence in CDR: the length, then the elements.
    pub fn encode(&self, w: &mut Writer) -> Result<(), peregrine_cdr::CdrError> {
        match self {
            SeqData::Short(v) => w.write_primitive_seq(v),
            SeqData::Long(v) => w.write_primitive_seq(v),
            SeqData::Double(v) => w.write_primitive_seq(v),
            SeqData::Char(v) | SeqData::Octet(v) => w.write_octet_seq(v),
            SeqData::Struct(v) => {
                w.write_len(v.len())?;
                for s in v {
                    s.encode(w);
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_is_32_bytes_in_memory_and_cdr() {
        assert_eq!(core::mem::size_of::<BinStruct>(), 32);
        let mut w = Writer::new(peregrine_cdr::ByteOrder::NATIVE);
        BinStruct::default().encode(&mut w);
        assert_eq!(w.len(), 32);
    }

    #[test]
    fn ops_map_back_to_types() {
        for t in DataType::ALL {
            assert_eq!(DataType::from_op(t.oneway_op().as_bytes()), Some(t));
        }
        assert_eq!(
            DataType::from_op(b"sendStructSeq_2way"),
            Some(DataType::Struct)
        );
        assert_eq!(DataType::from_op(b"sync"), None);
    }

    #[test]
    fn payload_bytes_match_buffer() {
        for t in DataType::ALL {
            assert_eq!(SeqData::with_bytes(t, 4096).payload_bytes(), 4096);
        }
    }
}
