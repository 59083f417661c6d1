//! The upgrade-check framework behind `nodemaint upgrade check`, in the
//! manner of oslo.upgradecheck: each check is a name and a function that
//! returns Success, Warning or Failure with details saying how to fix it.
//!
//! Not yet implemented: the framework and its checks arrive with the
//! upgrade-checks issue. The crate exists now so the workspace has its final
//! shape and dependency direction (`entity` ← `migration` ← `checks` ←
//! `nodemaint`).
