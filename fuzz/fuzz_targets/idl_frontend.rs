//! Arbitrary text through the IDL front end (preprocessor, parser,
//! semantic checks): diagnostics are fine, panics and hangs are not.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = peregrine_idl::check_source("fuzz.idl", text);
    }
});
