//! Versioned notifications, as Ironic's API sends them on the message bus:
//! what is configured ([`settings`]), the message and its envelope
//! ([`message`]) and the payloads ([`payload`]). Pure: the outbox that
//! changes write them to is the store's, the publisher is `ops::publish`.

pub mod message;
pub mod payload;
pub mod settings;

pub use settings::{Driver, Level, Settings};
