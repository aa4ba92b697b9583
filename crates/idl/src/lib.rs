//! OMG IDL front end.

pub mod diagnostic;
pub mod lexer;
pub mod preprocess;
pub mod source;
