//! Where long work (the backfill, reconcile, seeding) reports how far it is;
//! the CLI draws a bar from it on a terminal, everything else ignores it.

/// A sink for progress; every method does nothing by default.
pub trait Progress: Send + Sync {
    fn begin(&self, _label: &str, _total: u64) {}
    fn advance(&self, _delta: u64) {}
    fn finish(&self) {}
}

/// Reports nothing.
pub struct NoProgress;
impl Progress for NoProgress {}
