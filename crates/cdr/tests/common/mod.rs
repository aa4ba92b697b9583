#![allow(dead_code, missing_docs)]
pub mod binstruct;
