//! What the `nodemaint node …` and `nodemaint fleet seed` commands do: act
//! as an old (pre-upgrade) Ironic service, writing the legacy columns
//! directly. They make fleets to try an upgrade on, and the tests and the
//! benchmark use them to stand in for a pinned service. Not for an API
//! service, which goes through [`crate::Maintenance`].

pub mod fleet;
pub mod legacy_nodes;
