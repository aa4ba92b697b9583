//! GIOP protocol engine.
