//! `IOR:`/`corbaloc:`/`corbaname:` URLs from arbitrary text: parsing never
//! panics, and a parsed URL prints to text that parses to the same URL.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_giop::ObjectUrl;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(url) = ObjectUrl::parse(text) {
        let printed = url.to_string();
        assert_eq!(ObjectUrl::parse(&printed).expect("reparse"), url);
    }
});
