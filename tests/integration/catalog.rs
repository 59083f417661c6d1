//! What the database's own catalog says about a table: columns, indexes,
//! foreign keys. Tests check the schema here, not by "no error".

#![allow(dead_code)]

use crate::common::rows;
use sea_orm::{DatabaseConnection, DbBackend};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub nullable: bool,
    /// Declared length of a VARCHAR, if any.
    pub max_len: Option<i64>,
    /// Lower-case type name as the catalog gives it.
    pub data_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    pub name: String,
    pub unique: bool,
    pub columns: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKey {
    pub column: String,
    pub ref_table: String,
    pub ref_column: String,
    pub on_delete: String,
}

pub async fn columns(db: &DatabaseConnection, table: &str) -> Vec<Column> {
    let sql = match db.get_database_backend() {
        DbBackend::Sqlite => format!(
            "SELECT name, CASE WHEN \"notnull\" = 0 AND pk = 0 THEN 'YES' ELSE 'NO' END, NULL, lower(type) FROM pragma_table_info('{table}')"
        ),
        DbBackend::Postgres => format!(
            "SELECT column_name::text, is_nullable::text, character_maximum_length::text, data_type::text \
             FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '{table}' ORDER BY ordinal_position"
        ),
        _ => format!(
            "SELECT CAST(column_name AS CHAR), CAST(is_nullable AS CHAR), CAST(character_maximum_length AS CHAR), CAST(data_type AS CHAR) \
             FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = '{table}' ORDER BY ordinal_position"
        ),
    };
    rows(db, &sql)
        .await
        .into_iter()
        .map(|r| {
            let data_type = r[3].clone().unwrap_or_default().to_lowercase();
            // SQLite keeps the declared type text: VARCHAR(36).
            let sqlite_len = data_type.split_once('(').and_then(|(_, n)| n.trim_end_matches(')').parse().ok());
            Column {
                name: r[0].clone().unwrap(),
                nullable: r[1].as_deref() == Some("YES"),
                max_len: r[2].as_deref().and_then(|n| n.parse().ok()).or(sqlite_len),
                data_type,
            }
        })
        .collect()
}

pub async fn indexes(db: &DatabaseConnection, table: &str) -> Vec<Index> {
    let sql = match db.get_database_backend() {
        DbBackend::Sqlite => format!(
            "SELECT il.name, CAST(il.\"unique\" AS TEXT), ii.name FROM pragma_index_list('{table}') il \
             JOIN pragma_index_info(il.name) ii ORDER BY il.name, ii.seqno"
        ),
        DbBackend::Postgres => format!(
            "SELECT i.relname::text, ix.indisunique::text, a.attname::text FROM pg_index ix \
             JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_class i ON i.oid = ix.indexrelid \
             JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, n) ON true \
             JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum \
             WHERE t.relname = '{table}' AND t.relnamespace = current_schema()::regnamespace ORDER BY i.relname, k.n"
        ),
        _ => format!(
            "SELECT CAST(index_name AS CHAR), CAST(CASE WHEN non_unique = 0 THEN 1 ELSE 0 END AS CHAR), CAST(column_name AS CHAR) \
             FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = '{table}' ORDER BY index_name, seq_in_index"
        ),
    };
    let mut out: Vec<Index> = Vec::new();
    for r in rows(db, &sql).await {
        let name = r[0].clone().unwrap();
        let unique = matches!(r[1].as_deref(), Some("1") | Some("true"));
        let column = r[2].clone().unwrap();
        match out.last_mut() {
            Some(last) if last.name == name => last.columns.push(column),
            _ => out.push(Index { name, unique, columns: vec![column] }),
        }
    }
    out
}

pub async fn foreign_keys(db: &DatabaseConnection, table: &str) -> Vec<ForeignKey> {
    let sql = match db.get_database_backend() {
        DbBackend::Sqlite => {
            format!("SELECT \"from\", \"table\", \"to\", on_delete FROM pragma_foreign_key_list('{table}')")
        }
        DbBackend::Postgres => format!(
            "SELECT a.attname::text, rt.relname::text, ra.attname::text, \
             CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT' ELSE c.confdeltype::text END \
             FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class rt ON rt.oid = c.confrelid \
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] \
             JOIN pg_attribute ra ON ra.attrelid = c.confrelid AND ra.attnum = c.confkey[1] \
             WHERE c.contype = 'f' AND t.relname = '{table}' AND t.relnamespace = current_schema()::regnamespace"
        ),
        _ => format!(
            "SELECT CAST(k.column_name AS CHAR), CAST(k.referenced_table_name AS CHAR), CAST(k.referenced_column_name AS CHAR), \
             CAST(r.delete_rule AS CHAR) FROM information_schema.key_column_usage k \
             JOIN information_schema.referential_constraints r ON r.constraint_schema = k.constraint_schema \
             AND r.constraint_name = k.constraint_name WHERE k.table_schema = DATABASE() AND k.table_name = '{table}' \
             AND k.referenced_table_name IS NOT NULL"
        ),
    };
    rows(db, &sql)
        .await
        .into_iter()
        .map(|r| ForeignKey {
            column: r[0].clone().unwrap(),
            ref_table: r[1].clone().unwrap(),
            ref_column: r[2].clone().unwrap(),
            on_delete: r[3].clone().unwrap().to_uppercase(),
        })
        .collect()
}

pub async fn tables(db: &DatabaseConnection) -> Vec<String> {
    let mut t = nodemaint_runtime::probe::tables(db).await.unwrap();
    t.sort();
    t
}
