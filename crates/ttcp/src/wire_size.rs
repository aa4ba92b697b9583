//! The GIOP 1.2 messages of every exchange, built with `peregrine_giop`,
//! so that the raw-TCP baseline puts exactly as many bytes on the wire as
//! the ORB does: the raw client sends these very bytes and the raw server
//! answers with these very replies.
//!
//! A request is the 12-byte GIOP header, then `request_id`,
//! `response_flags` + 3 reserved octets, the target as a `KeyAddr` with an
//! [`OBJECT_KEY_LEN`]-byte object key, the operation name string, an empty
//! service context list, and the arguments aligned to 8. A reply is the
//! header, `request_id`, `reply_status`, an empty service context list and
//! the result aligned to 8.

use peregrine_cdr::{ByteOrder, GiopVersion, Writer};
use peregrine_giop::{
    encode_reply, encode_request, ReplyHeader, ReplyStatus, RequestHeader, ResponseFlags,
    ServiceContexts, TargetAddress,
};

use crate::types::SeqData;

/// Length of the object keys: the length of a Peregrine ttcp server's keys
/// (`"PGR1"`, kind, path length, `"ttcp"`, a 4-byte object id; see
/// `peregrine::object_key`), so both put the same bytes on the wire. The
/// raw key is 4 magic bytes, the object index (u32, big endian), so the
/// raw server finds its object with one bounds-checked index into a
/// `Vec`, and zeros.
pub const OBJECT_KEY_LEN: usize = 15;
/// The first four bytes of every object key.
pub const KEY_MAGIC: [u8; 4] = *b"TTCP";

/// Offset of `request_id` in a GIOP 1.2 request or reply.
pub const REQUEST_ID_AT: usize = 12;
/// Offset of `response_flags` in a GIOP 1.2 request.
pub const RESPONSE_FLAGS_AT: usize = 16;
/// Offset of the `KeyAddr` object key length in a GIOP 1.2 request.
pub const KEY_LEN_AT: usize = 24;
/// Offset of the object key in a GIOP 1.2 request.
pub const KEY_AT: usize = 28;
/// Offset of the object index (inside the key).
pub const KEY_INDEX_AT: usize = KEY_AT + 4;
/// Offset of the operation name's length in a GIOP 1.2 request (aligned
/// to 4 after the key).
pub const OPERATION_AT: usize = (KEY_AT + OBJECT_KEY_LEN).next_multiple_of(4);
/// Offset of the `reply_status` in a GIOP 1.2 reply.
pub const REPLY_STATUS_AT: usize = 16;

/// `unsigned long long sync()`.
pub const SYNC: &str = "sync";
/// `void sendNoParams_2way()`.
pub const NO_PARAMS_2WAY: &str = "sendNoParams_2way";
/// `oneway void sendNoParams_1way()`.
pub const NO_PARAMS_1WAY: &str = "sendNoParams_1way";
/// The raw protocol's control operation `void _ttcp_activate(in unsigned
/// long count)`: sizes the raw server's object table.
pub const ACTIVATE: &str = "_ttcp_activate";
/// Number of operations of the demux interface (`idl/demux.idl`).
pub const DEMUX_OPERATIONS: usize = 100;

/// Name of operation `index` of the demux interface: `demux_000` ..
/// `demux_099` (all the same length, so first and last have equal sizes).
pub fn demux_op(index: usize) -> String {
    format!("demux_{index:03}")
}

/// The object key of object `index` (magic, index, zeros).
pub fn object_key(index: u32) -> [u8; OBJECT_KEY_LEN] {
    let mut k = [0; OBJECT_KEY_LEN];
    k[..4].copy_from_slice(&KEY_MAGIC);
    k[4..8].copy_from_slice(&index.to_be_bytes());
    k
}

/// The arguments of a request.
#[derive(Debug, Clone, Copy)]
pub enum Args<'a> {
    /// No arguments.
    None,
    /// One sequence.
    Seq(&'a SeqData),
    /// One `unsigned long`.
    ULong(u32),
}

/// The complete GIOP 1.2 request message (native byte order) for `op` on
/// object `object`; `response` asks for a reply (twoway).
pub fn request(request_id: u32, object: u32, op: &str, response: bool, args: Args<'_>) -> Vec<u8> {
    request_to(&object_key(object), request_id, op, response, args)
}

/// The request of [`request`] to the object with key `key` (the
/// connections suite calls a Peregrine server's object 0 with the key
/// from its IOR).
pub fn request_to(
    key: &[u8],
    request_id: u32,
    op: &str,
    response: bool,
    args: Args<'_>,
) -> Vec<u8> {
    let mut w = Writer::new(ByteOrder::NATIVE);
    let h = RequestHeader {
        request_id,
        response_flags: if response {
            ResponseFlags::SyncWithTarget
        } else {
            ResponseFlags::None
        },
        target: TargetAddress::Key(key),
        operation: op,
        service_contexts: ServiceContexts::EMPTY,
        requesting_principal: &[],
    };
    // Encoding into a Writer only fails on lengths beyond u32, which the
    // suites never build (buffers are at most a few MiB).
    let pending = encode_request(&mut w, GiopVersion::V1_2, &h).expect("request header encodes");
    match args {
        Args::None => {}
        Args::Seq(s) => s.encode(&mut w).expect("sequence encodes"),
        Args::ULong(v) => w.write_u32(v),
    }
    pending.finish(&mut w).expect("message size fits");
    w.into_vec()
}

/// The complete GIOP 1.2 `NO_EXCEPTION` reply message (native byte
/// order), with an `unsigned long long` result when `result` is some.
pub fn reply(request_id: u32, result: Option<u64>) -> Vec<u8> {
    let mut w = Writer::new(ByteOrder::NATIVE);
    let h = ReplyHeader {
        request_id,
        status: ReplyStatus::NoException,
        service_contexts: ServiceContexts::EMPTY,
    };
    let pending = encode_reply(&mut w, GiopVersion::V1_2, &h).expect("reply header encodes");
    if let Some(v) = result {
        w.write_u64(v);
    }
    pending.finish(&mut w).expect("message size fits");
    w.into_vec()
}

/// Size on the wire of the request for `op` with `args`.
pub fn request_size(op: &str, args: Args<'_>) -> usize {
    request(0, 0, op, true, args).len()
}

/// Size on the wire of a reply (with or without a `u64` result).
pub fn reply_size(with_u64: bool) -> usize {
    reply(0, with_u64.then_some(0)).len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::DataType;
    use peregrine_giop::{decode_message, Limits, Message};

    fn align(n: usize, a: usize) -> usize {
        n.div_ceil(a) * a
    }

    /// The size computed by hand from the GIOP 1.2 layout.
    fn by_hand(op: &str, body: Option<(usize, usize)>) -> usize {
        let mut n = 12 + 4 + 4; // header, request_id, flags + reserved
        n += 2 + 2 + 4 + OBJECT_KEY_LEN; // disposition, pad, key length, key
        n = align(n, 4) + 4 + op.len() + 1; // operation string with NUL
        n = align(n, 4) + 4; // empty service context list
        if let Some((len_and_pad, elems)) = body {
            n = align(n, 8) + len_and_pad + elems;
        }
        n
    }

    #[test]
    fn offsets_are_where_the_raw_server_reads() {
        let m = request(0x0102_0304, 77, NO_PARAMS_2WAY, true, Args::None);
        assert_eq!(&m[..4], b"GIOP");
        assert_eq!(m[4..6], [1, 2]);
        let id = u32::from_ne_bytes(m[REQUEST_ID_AT..REQUEST_ID_AT + 4].try_into().unwrap());
        assert_eq!(id, 0x0102_0304);
        assert_eq!(m[RESPONSE_FLAGS_AT], 3);
        let kl = u32::from_ne_bytes(m[KEY_LEN_AT..KEY_LEN_AT + 4].try_into().unwrap());
        assert_eq!(kl as usize, OBJECT_KEY_LEN);
        assert_eq!(m[KEY_AT..KEY_AT + 4], KEY_MAGIC);
        assert_eq!(m[KEY_INDEX_AT..KEY_INDEX_AT + 4], 77u32.to_be_bytes());
        let ol = u32::from_ne_bytes(m[OPERATION_AT..OPERATION_AT + 4].try_into().unwrap());
        assert_eq!(ol as usize, NO_PARAMS_2WAY.len() + 1);
        assert_eq!(
            &m[OPERATION_AT + 4..OPERATION_AT + 4 + 17],
            NO_PARAMS_2WAY.as_bytes()
        );
        let oneway = request(1, 0, NO_PARAMS_1WAY, false, Args::None);
        assert_eq!(oneway[RESPONSE_FLAGS_AT], 0);
    }

    #[test]
    fn parameterless_sizes() {
        assert_eq!(request_size(NO_PARAMS_2WAY, Args::None), 72);
        assert_eq!(
            request_size(NO_PARAMS_2WAY, Args::None),
            by_hand(NO_PARAMS_2WAY, None)
        );
        assert_eq!(request_size(SYNC, Args::None), by_hand(SYNC, None));
        assert_eq!(
            request_size(&demux_op(0), Args::None),
            request_size(&demux_op(99), Args::None)
        );
        assert_eq!(reply_size(false), 24);
        assert_eq!(reply_size(true), 32);
    }

    #[test]
    fn sequence_sizes() {
        for ty in DataType::ALL {
            for buffer in [1024usize, 4096, 131072] {
                let data = SeqData::with_bytes(ty, buffer);
                let op = ty.oneway_op();
                // Length (4), then padding to the element alignment; a
                // BinStruct has no alignment of its own: its first member
                // (a short) follows the length, its double aligns to 8, so
                // the first element takes 28 bytes and the sequence 32n.
                let len_and_pad = match ty {
                    DataType::Struct => 0,
                    _ => align(4, ty.size().min(8)),
                };
                let want = by_hand(op, Some((len_and_pad, buffer)));
                assert_eq!(request_size(op, Args::Seq(&data)), want, "{op} {buffer}");
            }
        }
        let d = SeqData::with_bytes(DataType::Octet, 1024);
        assert_eq!(request_size("sendOctetSeq", Args::Seq(&d)), 1100);
        let d = SeqData::with_bytes(DataType::Double, 1024);
        assert_eq!(request_size("sendDoubleSeq", Args::Seq(&d)), 1104);
    }

    #[test]
    fn messages_decode_with_peregrine_giop() {
        let data = SeqData::new(DataType::Struct, 3);
        let m = request(9, 5, "sendStructSeq_2way", true, Args::Seq(&data));
        let (_, msg) = decode_message(&m, &Limits::default()).unwrap();
        match msg {
            Message::Request { header, body } => {
                assert_eq!(header.request_id, 9);
                assert_eq!(header.operation, "sendStructSeq_2way");
                assert_eq!(header.target.object_key(), Some(&object_key(5)[..]));
                assert_eq!(body.bytes.len(), 4 + 28 + 2 * 32);
            }
            other => panic!("not a request: {other:?}"),
        }
        let r = reply(9, Some(1234));
        let (_, msg) = decode_message(&r, &Limits::default()).unwrap();
        match msg {
            Message::Reply { header, body } => {
                assert_eq!(header.request_id, 9);
                assert_eq!(body.reader().read_u64().unwrap(), 1234);
            }
            other => panic!("not a reply: {other:?}"),
        }
    }
}
