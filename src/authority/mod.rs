//! The authority model of the node maintenance spec, pure: functions of
//! their inputs, with no connection, no clock and no globals, so each rule
//! can be checked against the spec in one file and tested exhaustively.
//!
//! - [`caller`]: who is asking (credentials, keystone's implied roles);
//! - [`scope`]: the scope a caller holds on a node (system > owner > lessee);
//! - [`policy`]: oslo.policy's rule language, policy files, Ironic's defaults;
//! - [`release`]: the release floors policy cannot relax, and bulk decisions;
//! - [`masking`]: what a caller may see of identities above its scope;
//! - [`event`]: maintenance events as values, and their history text;
//! - [`entry`]: the entry object and the limits on what callers send;
//! - [`window`]: maintenance windows' times, overlaps and extensions;
//! - [`plan`]: every change as a value, decided from what the node holds;
//! - [`batch`]: the set writers' changes (tick, reconcile) as values;
//! - [`rejected`]: every refusal, typed, with its HTTP status and message.

pub mod batch;
pub mod caller;
pub mod entry;
pub mod event;
pub mod masking;
pub mod plan;
pub mod policy;
pub mod rejected;
pub mod release;
pub mod scope;
pub mod window;
