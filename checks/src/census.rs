//! One pass over `node_maintenance` that several checks read: per entry
//! type, how many entries and distinct nodes, and how many rows break a
//! column rule. The invariant and type checks used to run five scans of
//! the table between them; on a million-node fleet those passes, not the
//! drift detection they run beside, set how long `upgrade check` took.

use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};

/// What one type's rows hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypeCensus {
    pub entry_type: String,
    pub entries: i64,
    /// Distinct nodes holding entries of this type: fewer than `entries`
    /// means some node holds more than one.
    pub nodes: i64,
    /// Rows whose `asserted_by_project` is NULL (system asserts store '').
    pub null_project: i64,
    /// Rows whose scope is not system, owner or lessee.
    pub bad_scope: i64,
    /// Rows with a non-NULL `extra` (whose JSON the invariant check reads).
    pub with_extra: i64,
}

/// The census of the whole table, one row per type present.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Census {
    pub types: Vec<TypeCensus>,
}

impl Census {
    /// One grouped statement; `COUNT(CASE …)` rather than `SUM`, which is
    /// a DECIMAL on MySQL.
    pub async fn take(db: &DatabaseConnection) -> Result<Census, String> {
        let sql = "SELECT type, COUNT(*), COUNT(DISTINCT node_id), \
                   COUNT(CASE WHEN asserted_by_project IS NULL THEN 1 END), \
                   COUNT(CASE WHEN scope IS NULL OR scope NOT IN ('system', 'owner', 'lessee') THEN 1 END), \
                   COUNT(extra) \
                   FROM node_maintenance GROUP BY type ORDER BY type";
        let backend = db.get_database_backend();
        let rows = db.query_all_raw(Statement::from_string(backend, sql)).await.map_err(|e| e.to_string())?;
        let mut types = Vec::with_capacity(rows.len());
        for row in rows {
            types.push(TypeCensus {
                entry_type: row.try_get_by_index::<String>(0).map_err(|e| e.to_string())?,
                entries: int_at(&row, 1)?,
                nodes: int_at(&row, 2)?,
                null_project: int_at(&row, 3)?,
                bad_scope: int_at(&row, 4)?,
                with_extra: int_at(&row, 5)?,
            });
        }
        Ok(Census { types })
    }

    /// A column summed over every type.
    pub fn total(&self, column: impl Fn(&TypeCensus) -> i64) -> i64 {
        self.types.iter().map(column).sum()
    }
}

/// Column `i` of a row as an integer, whichever width the backend returns.
pub(crate) fn int_at(row: &sea_orm::QueryResult, i: usize) -> Result<i64, String> {
    row.try_get_by_index::<i64>(i).or_else(|_| row.try_get_by_index::<i32>(i).map(i64::from)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn counts_per_type_what_each_rule_needs() {
        let db = sea_orm::Database::connect("sqlite::memory:").await.unwrap();
        db.execute_unprepared(
            "CREATE TABLE node_maintenance (id INTEGER PRIMARY KEY, node_id INTEGER NOT NULL, type TEXT NOT NULL, \
             scope TEXT, asserted_by_project TEXT, extra TEXT); \
             INSERT INTO node_maintenance (node_id, type, scope, asserted_by_project, extra) VALUES \
             (1, 'legacy', 'system', '', NULL), (1, 'legacy', 'system', '', NULL), (2, 'legacy', 'owner', NULL, '{}'), \
             (1, 'hardware', 'tenant', 'p', '[1]'), (2, 'hardware', 'lessee', 'p', NULL);",
        )
        .await
        .unwrap();
        let census = Census::take(&db).await.unwrap();
        let row = |t: &str, entries, nodes, null_project, bad_scope, with_extra| TypeCensus {
            entry_type: t.into(),
            entries,
            nodes,
            null_project,
            bad_scope,
            with_extra,
        };
        assert_eq!(census.types, vec![row("hardware", 2, 2, 0, 1, 1), row("legacy", 3, 2, 1, 0, 1)]);
        assert_eq!(census.total(|t| t.entries), 5);
    }
}
