//! Peregrine servants for the interop interfaces. They check every value
//! they receive against [`crate::expected`] and raise `Interop::Mismatch`
//! naming the first difference, so the omniORB client sees exactly what
//! Peregrine decoded wrongly.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use peregrine_orb::{CompletionStatus, SystemException, SystemExceptionKind as K};

use crate::expected as x;
use crate::interop::{
    callback, echo, Bytes8, CallbackRef, Choice, Color, Doubles, EchoRef, Labels, Longs, Matrix,
    Mismatch, Octets, Oops, Plain, Plains, Record, Strings,
};

fn mismatch(what: &str) -> Mismatch {
    eprintln!("peregrine servant: mismatch: {what}");
    Mismatch { what: what.into() }
}

fn check(ok: bool, what: &str) -> Result<(), Mismatch> {
    if ok {
        Ok(())
    } else {
        Err(mismatch(what))
    }
}

/// What an [`EchoImpl`] saw, readable by the test while the servant is
/// owned by the POA.
#[derive(Default, Debug)]
pub struct EchoStats {
    /// Sum of the `notify` values received.
    pub notified: AtomicI32,
    /// Number of `check_*` calls that passed.
    pub checks_passed: AtomicU32,
    /// Number of `check_labels` calls that passed.
    pub labels_passed: AtomicU32,
    /// Number of `call_back`/`call_back_big` that completed.
    pub callbacks: AtomicU32,
    /// Whether `shutdown` was called.
    pub shutdown_requested: std::sync::atomic::AtomicBool,
}

/// `Interop::Echo` for the omniORB client to call.
#[derive(Default)]
pub struct EchoImpl {
    /// Counters.
    pub stats: Arc<EchoStats>,
}

impl EchoImpl {
    fn passed(&self) {
        self.stats.checks_passed.fetch_add(1, Ordering::SeqCst);
    }
}

type Sys<T> = Result<T, SystemException>;

impl crate::interop::Echo for EchoImpl {
    fn echo_short(&self, v: i16) -> Sys<i16> {
        Ok(v)
    }
    fn echo_ushort(&self, v: u16) -> Sys<u16> {
        Ok(v)
    }
    fn echo_long(&self, v: i32) -> Sys<i32> {
        Ok(v)
    }
    fn echo_ulong(&self, v: u32) -> Sys<u32> {
        Ok(v)
    }
    fn echo_longlong(&self, v: i64) -> Sys<i64> {
        Ok(v)
    }
    fn echo_ulonglong(&self, v: u64) -> Sys<u64> {
        Ok(v)
    }
    fn echo_float(&self, v: f32) -> Sys<f32> {
        Ok(v)
    }
    fn echo_double(&self, v: f64) -> Sys<f64> {
        Ok(v)
    }
    fn echo_boolean(&self, v: bool) -> Sys<bool> {
        Ok(v)
    }
    fn echo_char(&self, v: u8) -> Sys<u8> {
        Ok(v)
    }
    fn echo_wchar(&self, v: char) -> Sys<char> {
        Ok(v)
    }
    fn echo_octet(&self, v: u8) -> Sys<u8> {
        Ok(v)
    }
    fn echo_string(&self, v: &str) -> Sys<String> {
        Ok(v.into())
    }
    fn echo_wstring(&self, v: &str) -> Sys<String> {
        Ok(v.into())
    }
    fn mix(&self, a: i32, b: i64, io: &mut f64) -> Sys<(i64, i16)> {
        *io *= 2.0;
        Ok((i64::from(a) + b, (-a) as i16))
    }
    fn echo_octets(&self, v: &[u8]) -> Sys<Octets> {
        Ok(v.to_vec())
    }
    fn echo_longs(&self, v: &[i32]) -> Sys<Longs> {
        Ok(v.to_vec())
    }
    fn echo_strings(&self, v: &[String]) -> Sys<Strings> {
        Ok(v.to_vec())
    }
    fn echo_doubles(&self, v: &[f64]) -> Sys<Doubles> {
        Ok(v.to_vec())
    }
    fn echo_plains(&self, v: &[Plain]) -> Sys<Plains> {
        Ok(v.to_vec())
    }
    fn echo_plain(&self, v: &Plain) -> Sys<Plain> {
        Ok(*v)
    }
    fn echo_record(&self, v: &Record) -> Sys<Record> {
        Ok(v.clone())
    }
    fn echo_color(&self, v: Color) -> Sys<Color> {
        Ok(v)
    }
    fn echo_choice(&self, v: &Choice) -> Sys<Choice> {
        Ok(v.clone())
    }
    fn echo_labels(&self, v: &Labels) -> Sys<Labels> {
        Ok(v.clone())
    }
    fn echo_matrix(&self, v: &Matrix) -> Sys<Matrix> {
        Ok(*v)
    }
    fn echo_bytes8(&self, v: &Bytes8) -> Sys<Bytes8> {
        Ok(*v)
    }

    fn check_prims(
        &self,
        s: i16,
        us: u16,
        l: i32,
        ul: u32,
        ll: i64,
        ull: u64,
        f: f32,
        d: f64,
        b: bool,
        c: u8,
        o: u8,
        str: &str,
    ) -> Result<(), echo::CheckPrimsError> {
        check(s == x::S, "short")?;
        check(us == x::US, "unsigned short")?;
        check(l == x::L, "long")?;
        check(ul == x::UL, "unsigned long")?;
        check(ll == x::LL, "long long")?;
        check(ull == x::ULL, "unsigned long long")?;
        check(f == x::F, "float")?;
        check(d == x::D, "double")?;
        check(b == x::B, "boolean")?;
        check(c == x::C, "char")?;
        check(o == x::O, "octet")?;
        check(str == x::STR, &format!("string {str:?}"))?;
        self.passed();
        Ok(())
    }

    fn check_wide(&self, wc: char, ws: &str) -> Result<(), echo::CheckWideError> {
        check(wc == x::WC, &format!("wchar {wc:?}"))?;
        check(ws == x::WSTR, &format!("wstring {ws:?}"))?;
        self.passed();
        Ok(())
    }

    fn check_record(&self, v: &Record) -> Result<(), echo::CheckRecordError> {
        check(*v == x::record(), &format!("record {v:?}"))?;
        self.passed();
        Ok(())
    }

    fn check_seqs(
        &self,
        o: &[u8],
        l: &[i32],
        s: &[String],
        c: &Choice,
        m: &Matrix,
        p: &[Plain],
    ) -> Result<(), echo::CheckSeqsError> {
        check(o == x::OCTETS, "octets")?;
        check(l == x::LONGS, "longs")?;
        check(s == x::STRINGS, "strings")?;
        check(*c == x::choice(), "choice")?;
        check(*m == x::grid(), "matrix")?;
        check(p == [x::plain1(), x::plain2()], "plains")?;
        self.passed();
        Ok(())
    }

    fn check_labels(&self, v: &Labels, d: i32) -> Result<(), echo::CheckLabelsError> {
        let got = v.discriminator();
        check(got == d, &format!("labels discriminator {got} != {d}"))?;
        check(*v == x::labels(d), &format!("labels value {v:?}"))?;
        self.stats.labels_passed.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn make_labels(&self, d: i32) -> Sys<Labels> {
        Ok(x::labels(d))
    }

    fn make_record(&self) -> Sys<Record> {
        Ok(x::record())
    }

    fn make_wstring(&self) -> Sys<String> {
        Ok(x::WSTR.into())
    }

    fn echo_self(&self, other: Option<&EchoRef>) -> Sys<Option<EchoRef>> {
        Ok(other.cloned())
    }

    fn call_back(&self, cb: Option<&CallbackRef>, v: i32) -> Result<i32, echo::CallBackError> {
        let cb = cb.ok_or_else(|| mismatch("nil callback"))?;
        let r = cb.ping(v)?;
        cb.note("from Peregrine")?;
        let last = cb.last()?;
        check(
            last == "from Peregrine",
            &format!("callback last() = {last:?}"),
        )?;
        self.stats.callbacks.fetch_add(1, Ordering::SeqCst);
        Ok(r)
    }

    fn call_back_big(
        &self,
        cb: Option<&CallbackRef>,
        n: u32,
    ) -> Result<u32, echo::CallBackBigError> {
        let cb = cb.ok_or_else(|| mismatch("nil callback"))?;
        let data: Vec<u8> = (0..n as usize).map(x::big_octet).collect();
        let r = match cb.take(&data) {
            Ok(r) => r,
            Err(callback::TakeError::Mismatch(m)) => return Err(m.into()),
            Err(callback::TakeError::System(e)) => return Err(e.into()),
        };
        self.stats.callbacks.fetch_add(1, Ordering::SeqCst);
        Ok(r)
    }

    fn fail(&self, how: i32, code: u32) -> Result<i32, echo::FailError> {
        match how {
            0 => Err(Oops {
                code: code as i32,
                why: "oops".into(),
                hue: Color::Blue,
                data: vec![1, 2, 3],
            }
            .into()),
            1 => Err(SystemException::new(K::BadParam, code, CompletionStatus::No).into()),
            2 => Err(SystemException::new(K::NoPermission, code, CompletionStatus::Yes).into()),
            _ => Ok(code as i32),
        }
    }

    fn notify(&self, v: i32) -> Sys<()> {
        self.stats.notified.fetch_add(v, Ordering::SeqCst);
        Ok(())
    }

    fn notified(&self) -> Sys<i32> {
        Ok(self.stats.notified.load(Ordering::SeqCst))
    }

    fn big_octets(&self, v: &[u8], n: u32) -> Result<Octets, echo::BigOctetsError> {
        let bad = v
            .iter()
            .enumerate()
            .position(|(i, b)| *b != x::big_octet(i));
        check(bad.is_none(), &format!("big_octets content at {bad:?}"))?;
        Ok((0..n as usize).map(x::big_octet_reply).collect())
    }

    fn big_doubles(&self, v: &[f64], n: u32) -> Result<Doubles, echo::BigDoublesError> {
        let bad = v.iter().enumerate().position(|(i, d)| *d != i as f64 * 0.5);
        check(bad.is_none(), &format!("big_doubles content at {bad:?}"))?;
        Ok((0..n).map(|i| -(f64::from(i) * 0.25)).collect())
    }

    fn shutdown(&self) -> Sys<()> {
        self.stats.shutdown_requested.store(true, Ordering::SeqCst);
        Ok(())
    }
}

/// `Interop::Callback` for the omniORB server to call back (share it
/// with the test through an `Arc`).
#[derive(Default)]
pub struct CallbackImpl {
    /// The last `note`.
    pub last: Mutex<String>,
    /// Number of `ping`s.
    pub pings: AtomicU32,
    /// Length of the last `take`.
    pub took: AtomicU32,
}

impl crate::interop::Callback for CallbackImpl {
    fn ping(&self, v: i32) -> Sys<i32> {
        self.pings.fetch_add(1, Ordering::SeqCst);
        Ok(v.wrapping_add(1))
    }

    fn note(&self, msg: &str) -> Sys<()> {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = msg.into();
        Ok(())
    }

    fn last(&self) -> Sys<String> {
        Ok(self.last.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    fn take(&self, data: &[u8]) -> Result<u32, callback::TakeError> {
        let bad = data
            .iter()
            .enumerate()
            .position(|(i, b)| *b != x::big_octet(i));
        check(bad.is_none(), &format!("take content at {bad:?}"))?;
        self.took.store(data.len() as u32, Ordering::SeqCst);
        Ok(data.len() as u32)
    }
}

impl crate::interop::Callback for Arc<CallbackImpl> {
    fn ping(&self, v: i32) -> Sys<i32> {
        (**self).ping(v)
    }
    fn note(&self, msg: &str) -> Sys<()> {
        (**self).note(msg)
    }
    fn last(&self) -> Sys<String> {
        (**self).last()
    }
    fn take(&self, data: &[u8]) -> Result<u32, callback::TakeError> {
        (**self).take(data)
    }
}
