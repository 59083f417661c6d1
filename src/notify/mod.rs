//! Versioned notifications, as Ironic's API sends them on the message bus:
//! what is configured ([`settings`]). Sending, the outbox and the payloads
//! build on it.

pub mod settings;

pub use settings::{Driver, Level, Settings};
