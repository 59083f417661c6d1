//! The authority model of the node maintenance spec, pure: functions of
//! their inputs, with no connection, no clock and no globals, so each rule
//! can be checked against the spec in one file and tested exhaustively.
//!
//! Public, at this level: [`Caller`] (who is asking, Keystone's implied
//! roles); [`derive_scope`] and [`has_system_authority`] (system > owner >
//! lessee); [`Policy`] (oslo.policy's rule language, policy files,
//! Ironic's defaults, the rule names in [`rules`]); [`floor`] and
//! [`release_all`] (the release floors policy cannot relax, bulk
//! all-or-nothing); [`is_masked`] and [`MASK`]; [`MaintenanceEvent`];
//! [`EntryView`] and the input limits; [`WindowState`] and [`parse_time`];
//! [`Rejected`], every refusal with its HTTP status and message;
//! [`release_decision`] and [`bulk_release_decision`], what the release
//! calls decide, for a caller that has the rows in hand (the Python binding).
//!
//! Inside the crate only: the planners (`plan.rs`: every single-node change
//! as a value; `batch.rs`: the tick's and reconcile's set changes).

pub(crate) mod batch;
pub(crate) mod caller;
pub(crate) mod entry;
pub(crate) mod event;
pub(crate) mod masking;
pub(crate) mod plan;
pub(crate) mod policy;
pub(crate) mod rejected;
pub(crate) mod release;
pub(crate) mod scope;
pub(crate) mod window;

// The model's public face, one level deep (the files are how it is kept,
// not how it is used).
pub use caller::Caller;
pub use entry::{EXTRA_MAX_BYTES, EntryView, IDENTITY_MAX_CHARS, REASON_MAX_CHARS, parse_extra_arg};
pub use event::{EventKind, MaintenanceEvent};
pub use masking::{MASK, is_masked};
pub use plan::{bulk_release_decision, release_decision};
pub use policy::defaults as rules;
pub use policy::{Policy, Target, entry_target, node_target};
pub use rejected::{Holder, Rejected};
pub use release::{Authority, Denial, floor, release_all};
pub use scope::{derive_scope, has_system_authority};
pub use window::{WindowState, parse_time};
