//! `fleet seed`: a deterministic pre-upgrade (legacy) fleet, written with
//! multi-row INSERTs in one transaction, so a million nodes take seconds.
//! Nodes get keystone-like owner/lessee project ids and, when maintained,
//! reasons in the shapes operators really use (`HW_ERR: …`,
//! `LK_OP|HW_ERR: …`, plain text, or none).

use crate::error::{Error, Result};
use crate::store::legacy::{self, SeedNode};
use nodemaint_runtime::progress::Progress;
use sea_orm::DatabaseConnection;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SeedReport {
    pub created: u64,
    pub maintained: u64,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
}

/// splitmix64: a tiny, good-enough deterministic generator, so `--seed`
/// makes the same fleet everywhere without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    pub fn uuid(&mut self) -> String {
        let bytes = (u128::from(self.next_u64()) << 64 | u128::from(self.next_u64())).to_be_bytes();
        uuid::Builder::from_random_bytes(bytes).into_uuid().to_string()
    }
}

/// A keystone-style project id (32 hex digits), the same for the same `k`.
pub fn project_id(k: u64) -> String {
    format!("{:016x}{:016x}", Rng::new(k).next_u64(), Rng::new(k ^ 0xffff).next_u64())
}

/// A maintenance reason as operators write them, or `None`.
pub fn legacy_reason(rng: &mut Rng) -> Option<String> {
    let ticket = 1000 + rng.below(9000);
    match rng.below(10) {
        0..=3 => Some(format!("HW_ERR: Disk {} has bad sectors, see CIDTEAM-{ticket}", rng.below(12))),
        4..=5 => Some(format!("LK_OP|HW_ERR: PSU {} failed, replacement ordered, ticket OPS-{ticket}", rng.below(2))),
        6..=7 => Some(format!("rebalancing rack R{:02}, change window CHG-{ticket}", rng.below(40))),
        8 => Some(format!("firmware upgrade to BIOS {}.{} pending", 1 + rng.below(3), rng.below(20))),
        _ => None,
    }
}

/// Adds `count` legacy nodes, each maintained with probability `fraction`.
pub async fn seed(
    db: &DatabaseConnection,
    count: u64,
    fraction: f64,
    seed: u64,
    progress: &dyn Progress,
) -> Result<SeedReport> {
    if !(0.0..=1.0).contains(&fraction) {
        return Err(Error::BadRequest(format!("--maintained-fraction {fraction} is not between 0 and 1")));
    }
    let mut rng = Rng::new(seed);
    let mut report = SeedReport { created: 0, maintained: 0, first_name: None, last_name: None };
    let make = |n: u64| {
        let name = format!("node-{n:07}");
        let maintenance = rng.unit() < fraction;
        let reason = if maintenance { legacy_reason(&mut rng) } else { None };
        let owner = project_id(rng.below(20));
        let lessee = (rng.below(10) < 3).then(|| project_id(100 + rng.below(50)));
        report.maintained += u64::from(maintenance);
        report.first_name.get_or_insert_with(|| name.clone());
        report.last_name = Some(name.clone());
        SeedNode { uuid: rng.uuid(), name, owner, lessee, maintenance, reason }
    };
    legacy::seed(db, count, make, progress).await.map_err(|e| match e.sql_err() {
        // The same seed makes the same uuids: the usual cause is a second
        // seed with the same --seed.
        Some(sea_orm::SqlErr::UniqueConstraintViolation(m)) => Error::Conflict(format!(
            "seeding would reuse an existing node uuid or name; pick another --seed than {seed} (the same seed makes the same uuids), or rename the nodes named node-NNNNNNN ({})",
            crate::error::one_line(&m)
        )),
        _ => Error::from(e),
    })?;
    report.created = count;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        assert_eq!(a.uuid(), b.uuid());
        assert_ne!(Rng::new(7).uuid(), Rng::new(8).uuid());
        assert_eq!(project_id(3).len(), 32);
    }

    #[test]
    fn reasons_take_the_operator_shapes() {
        let mut rng = Rng::new(1);
        let reasons: Vec<Option<String>> = (0..200).map(|_| legacy_reason(&mut rng)).collect();
        assert!(reasons.iter().any(|r| r.as_deref().is_some_and(|r| r.starts_with("HW_ERR: "))));
        assert!(reasons.iter().any(|r| { r.as_deref().is_some_and(|r| r.starts_with("LK_OP|HW_ERR: ")) }));
        assert!(reasons.iter().any(Option::is_none));
    }
}
